package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	vcs := func(rev, tm, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "-buildmode", Value: "exe"}, {Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: tm}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name          string
		bi            debug.BuildInfo
		short, string string
	}{
		{"go install @version", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.2.3"}},
			"v1.2.3", "v1.2.3 (go1.26.0)"},
		{"go build in a checkout", debug.BuildInfo{GoVersion: "go1.26.0",
			Main:     debug.Module{Version: "v0.0.0-20261130175148-02edd81fdac5"},
			Settings: vcs("02edd81fdac56c6a771ec49332c672fb384fda96", "2026-11-30T17:51:48Z", "false")},
			"v0.0.0-20261130175148-02edd81fdac5",
			"v0.0.0-20261130175148-02edd81fdac5 (commit 02edd81fdac56c6a771ec49332c672fb384fda96, 2026-11-30T17:51:48Z, go1.26.0)"},
		{"a checkout with changes, no module version", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"},
			Settings: vcs("02edd81fdac56c6a771ec49332c672fb384fda96", "2026-11-30T17:51:48Z", "true")},
			"devel+02edd81fdac5.dirty",
			"devel+02edd81fdac5.dirty (commit 02edd81fdac56c6a771ec49332c672fb384fda96, 2026-11-30T17:51:48Z, modified, go1.26.0)"},
		{"go run", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, "devel", "devel (go1.26.0)"},
		{"nothing recorded", debug.BuildInfo{}, "devel", "devel"},
	} {
		info := FromBuildInfo(&tc.bi)
		if info.Short() != tc.short || info.String() != tc.string {
			t.Errorf("%s: Short %q String %q; want %q, %q", tc.name, info.Short(), info.String(), tc.short, tc.string)
		}
	}
}
