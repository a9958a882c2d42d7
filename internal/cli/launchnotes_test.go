package cli

import (
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestLaunchNotesExplain: npm's lines explain only an npx launch that ended before the agent
// answered initialize, and the pin is blamed only for the package the registry pinned.
func TestLaunchNotesExplain(t *testing.T) {
	const etarget = "npm error code ETARGET\nnpm error notarget No matching version found for @google/gemini-cli@0.27.3.\n"
	crashed := func(stage record.Stage, stderr string) *report.Result {
		return &report.Result{StderrTail: stderr, Error: &report.Error{Code: report.ErrAgentCrashed, Stage: stage, Message: "exited"}}
	}
	v := 1
	answered := crashed(record.StageSessionNew, etarget)
	answered.ProtocolVersion = &v
	snapshot := launchNotes{npx: true, spec: "@google/gemini-cli@0.27.3", pin: "the snapshot is stale"}
	for _, tc := range []struct {
		name          string
		n             launchNotes
		r             *report.Result
		because, hint string
	}{
		{"the snapshot's pin", snapshot, crashed(record.StageInitialize, etarget), "npm: no version 0.27.3 of @google/gemini-cli; the snapshot is stale", ""},
		{"a timeout at spawn", snapshot, crashed(record.StageSpawn, etarget), "npm: no version 0.27.3 of @google/gemini-cli; the snapshot is stale", ""},
		{"a raw npx command", launchNotes{npx: true}, crashed(record.StageInitialize, etarget), "npm: no version 0.27.3 of @google/gemini-cli", ""},
		// npm's lines name another package than the pinned one (a dependency): not the pin's fault.
		{"another package", launchNotes{npx: true, spec: "@x/y@1.0.0", pin: "stale"}, crashed(record.StageInitialize, etarget), "npm: no version 0.27.3 of @google/gemini-cli", ""},
		{"not npx", launchNotes{spec: "@google/gemini-cli@0.27.3", pin: "stale"}, crashed(record.StageInitialize, etarget), "", ""},
		{"the agent answered", snapshot, answered, "", ""},
		{"later than initialize", snapshot, crashed(record.StageSessionNew, etarget), "", ""},
		{"no npm lines", snapshot, crashed(record.StageInitialize, "Error: boom\n"), "", ""},
		{"no error", snapshot, &report.Result{StderrTail: etarget}, "", ""},
		{"no package", launchNotes{npx: true, spec: "@tencent-ai/codebuddy-code@2.156.0", pin: "stale"},
			crashed(record.StageInitialize, "npm error code E404\nnpm error 404 Not Found - GET https://registry.npmjs.org/@tencent-ai%2fcodebuddy-code\n"),
			"npm: no package @tencent-ai/codebuddy-code in the npm registry registry.npmjs.org (E404)", "CodeBuddy Code also ships inside"},
	} {
		because, hint := tc.n.explain(tc.r)
		if because != tc.because || (tc.hint == "") != (hint == "") || !strings.HasPrefix(hint, tc.hint) {
			t.Errorf("%s: %q, %q; want %q, %q…", tc.name, because, hint, tc.because, tc.hint)
		}
	}
	for argv, want := range map[string]bool{"npx": true, "/usr/bin/npx": true, "npm exec": true, "npm x": true, "npm view": false, "gemini": false, "": false} {
		if got := runsNPX(strings.Fields(argv)); got != want {
			t.Errorf("runsNPX(%q) = %v, want %v", argv, got, want)
		}
	}
}
