// Package buildinfo says which acpprobe this is, from what the Go toolchain stamped into the
// binary (runtime/debug.ReadBuildInfo): the module version when it was installed with
// `go install github.com/acpprobe/acpprobe/cmd/acpprobe@VERSION`, and for a build in a git
// checkout the commit, its time and whether the tree had changes. acpprobe reports this one
// version everywhere: `acpprobe version`, clientInfo.version in initialize, transcripts and
// matrices.
package buildinfo

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
)

// Info is what the toolchain recorded about the build.
type Info struct {
	// Version is the main module's version: "v1.2.3" (go install …@v1.2.3), a pseudo-version
	// such as "v0.0.0-20261130175148-02edd81fdac5" (go build in a checkout, Go 1.24 and
	// later; "+dirty" when the tree had changes), or "" when the toolchain recorded none (go
	// run, go test, a build with -buildvcs=false).
	Version string
	// Revision, Time and Modified are the commit the binary was built from, its commit time
	// (RFC 3339) and whether the tree had changes (vcs.revision, vcs.time, vcs.modified); ""
	// and false when it was not built in a checkout.
	Revision string
	Time     string
	Modified bool
	// GoVersion is the toolchain that built it.
	GoVersion string
}

// Read is the Info of this binary.
var Read = sync.OnceValue(func() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{}
	}
	return FromBuildInfo(bi)
})

// FromBuildInfo reads an Info out of a debug.BuildInfo.
func FromBuildInfo(bi *debug.BuildInfo) Info {
	info := Info{GoVersion: bi.GoVersion}
	if v := bi.Main.Version; v != "(devel)" {
		info.Version = v
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
}

// Short is the version to report: Version when the toolchain recorded one; else "devel",
// with the commit when known ("devel+02edd81fdac5", "+dirty" for a tree with changes).
func (i Info) Short() string {
	if i.Version != "" {
		return i.Version
	}
	v := "devel"
	if i.Revision != "" {
		v += "+" + i.Revision[:min(12, len(i.Revision))]
		if i.Modified {
			v += ".dirty"
		}
	}
	return v
}

// String is the version line of `acpprobe version`: the version, then the commit, its time,
// whether the tree had changes, and the toolchain, as far as they are known.
func (i Info) String() string {
	var details []string
	if i.Revision != "" {
		details = append(details, "commit "+i.Revision)
	}
	if i.Time != "" {
		details = append(details, i.Time)
	}
	if i.Modified {
		details = append(details, "modified")
	}
	if i.GoVersion != "" {
		details = append(details, i.GoVersion)
	}
	if len(details) == 0 {
		return i.Short()
	}
	return fmt.Sprintf("%s (%s)", i.Short(), strings.Join(details, ", "))
}

// Version is Read().Short(): the version acpprobe reports.
func Version() string { return Read().Short() }
