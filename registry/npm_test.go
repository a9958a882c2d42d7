package registry

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestParseNPMError reads what npm 11 printed here (testdata/npm: npx of a version npm does
// not serve, of a package it does not serve; npm view of both, and with its registry
// unreachable) and the older "npm ERR!" form; stderr that is not npm's failure to fetch is nil.
func TestParseNPMError(t *testing.T) {
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", "npm", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	for _, tc := range []struct {
		name, stderr, spec string
		want               *NPMProblem
		text, refusal      string
	}{
		{"npx ETARGET", read("npx-etarget.txt"), "@google/gemini-cli@0.27.3",
			&NPMProblem{Code: "ETARGET", Package: "@google/gemini-cli", Version: "0.27.3"},
			"npm: no version 0.27.3 of @google/gemini-cli", "npm serves no version 0.27.3 of @google/gemini-cli"},
		{"npx E404 package", read("npx-e404-package.txt"), "@tencent-ai/codebuddy-code@2.156.0",
			&NPMProblem{Code: "E404", Package: "@tencent-ai/codebuddy-code", Host: "registry.npmjs.org"},
			"npm: no package @tencent-ai/codebuddy-code in the npm registry registry.npmjs.org (E404)",
			"npm serves no package @tencent-ai/codebuddy-code (E404 from registry.npmjs.org)"},
		{"view E404 version", read("view-e404-version.txt"), "",
			&NPMProblem{Code: "E404", Package: "@qwen-code/qwen-code", Version: "0.9.1"},
			"npm: no version 0.9.1 of @qwen-code/qwen-code", "npm serves no version 0.9.1 of @qwen-code/qwen-code"},
		{"view ENOTFOUND", read("view-enotfound.txt"), "@google/gemini-cli@0.61.0",
			&NPMProblem{Code: "ENOTFOUND", Unreachable: true}, "npm: cannot reach its registry (ENOTFOUND)", ""},
		{"npm ERR! ETARGET", "npm ERR! code ETARGET\nnpm ERR! notarget No matching version found for opencode-ai@9.9.9.\nnpm ERR! notarget a package version that doesn't exist.\n", "",
			&NPMProblem{Code: "ETARGET", Package: "opencode-ai", Version: "9.9.9"}, "npm: no version 9.9.9 of opencode-ai", "npm serves no version 9.9.9 of opencode-ai"},
		// Lines npm did not print as its own say nothing of it, nor do unrelated npm errors.
		{"agent text", "Error: No matching version found for x@1.\ncode ETARGET\n", "x@1", nil, "", ""},
		{"EACCES", "npm error code EACCES\nnpm error syscall mkdir\n", "x@1", nil, "", ""},
		{"nothing", "", "x@1", nil, "", ""},
	} {
		got := ParseNPMError(tc.stderr, tc.spec)
		switch {
		case (got == nil) != (tc.want == nil):
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		case got == nil:
		case *got != *tc.want:
			t.Errorf("%s: %+v, want %+v", tc.name, *got, *tc.want)
		case got.Error() != tc.text || got.Refusal() != tc.refusal:
			t.Errorf("%s: Error() %q, Refusal() %q; want %q, %q", tc.name, got.Error(), got.Refusal(), tc.text, tc.refusal)
		}
	}
	// What npm's lines leave out comes from the spec: ETARGET's version, E404's package.
	if p := ParseNPMError("npm error code ETARGET\n", "@x/y@1.2.3"); p == nil || p.Package != "@x/y" || p.Version != "1.2.3" {
		t.Errorf("ETARGET without its notarget line: %+v", p)
	}
	if p := ParseNPMError("npm error code E404\n", "@x/y@1.2.3"); p == nil || p.Package != "@x/y" || p.Version != "" {
		t.Errorf("E404 without details: %+v", p)
	}
}

// fakeNPM writes an npm that runs script (sh) and returns its path.
func fakeNPM(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "npm")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// npmAnswers is a fake npm view: what npm 11 prints for the specs the tests ask about.
const npmAnswers = `
[ "$1 $3 $4 $5" = "view version --json --fetch-retries=0" ] || { echo "unexpected npm $*" >&2; exit 9; }
case "$2" in
@google/gemini-cli@0.61.0) echo '"0.61.0"' ;;
@google/gemini-cli@0.27.3)
	echo 'npm error code E404' >&2
	echo 'npm error 404 No match found for version 0.27.3' >&2
	echo "npm error 404  The requested resource '@google/gemini-cli@0.27.3' could not be found or you do not have permission to access it." >&2
	echo '{"error": {"code": "E404", "summary": "No match found for version 0.27.3"}}'
	exit 1 ;;
@tencent-ai/codebuddy-code@*)
	echo 'npm error code E404' >&2
	echo 'npm error 404 Not Found - GET https://registry.npmjs.org/@tencent-ai%2fcodebuddy-code' >&2
	exit 1 ;;
offline@*)
	echo 'npm error code EAI_AGAIN' >&2
	exit 1 ;;
range@*) echo '["1.0.0", "1.0.1"]' ;;
npm6@*) ;;
broken@*) echo 'Segmentation fault' >&2; exit 139 ;;
esac`

// TestCheckNPM: npm view's answers become served, no-version, no-package or unknown, each
// with what npm said.
func TestCheckNPM(t *testing.T) {
	npm := fakeNPM(t, npmAnswers)
	for _, tc := range []struct {
		spec   string
		served NPMServed
		detail string
	}{
		{"@google/gemini-cli@0.61.0", NPMServes, "0.61.0"},
		{"range@^1", NPMServes, "1.0.0, 1.0.1"},
		{"@google/gemini-cli@0.27.3", NPMNoVersion, "npm: no version 0.27.3 of @google/gemini-cli"},
		{"@tencent-ai/codebuddy-code@2.156.0", NPMNoPackage, "npm: no package @tencent-ai/codebuddy-code in the npm registry registry.npmjs.org (E404)"},
		{"offline@1", NPMUnknown, "npm: cannot reach its registry (EAI_AGAIN)"},
		{"npm6@1.0.0", NPMNoVersion, "npm: no version 1.0.0 of npm6"},
		{"broken@1", NPMUnknown, "npm view failed: Segmentation fault"},
	} {
		c := CheckNPM(t.Context(), npm, tc.spec, 10*time.Second)
		if c.Package != tc.spec || c.Served != tc.served || c.Detail != tc.detail {
			t.Errorf("%s: %+v, want %s %q", tc.spec, c, tc.served, tc.detail)
		}
	}
}

// TestCheckNPMDoesNotHang attacks the bound of a question to npm: an npm that never answers,
// whose child holds its output open after npm is killed, is an unknown answer soon after the
// timeout, not a hang (without cmd.WaitDelay, Run waits for the child's sleep to end).
func TestCheckNPMDoesNotHang(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	npm := fakeNPM(t, "sleep 300 & echo $! > "+pidFile+"; wait")
	t.Cleanup(func() { // the child outlives npm: end it
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	start := time.Now()
	done := make(chan NPMCheck, 1)
	go func() { done <- CheckNPM(context.Background(), npm, "x@1", 200*time.Millisecond) }()
	select {
	case c := <-done:
		if c.Served != NPMUnknown || c.Detail != "npm did not answer within 200ms" {
			t.Errorf("%+v, want unknown: did not answer", c)
		}
		t.Logf("answered after %v", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("CheckNPM still waiting 10 s after a 200 ms timeout")
	}
}

// TestCheckStatuses: the npx statuses of a list are checked, those npm does not serve cannot
// run (the reason is npm's; a package npm does not serve gets the other way to run it), and
// RUNS HERE says what was checked; other launches are not asked about.
func TestCheckStatuses(t *testing.T) {
	npm := fakeNPM(t, npmAnswers)
	r := New(
		Entry{ID: "new", Source: SourceRegistry, Distribution: Distribution{NPX: &Package{Package: "@google/gemini-cli@0.61.0"}}},
		Entry{ID: "old", Source: SourceRegistry, Distribution: Distribution{NPX: &Package{Package: "@google/gemini-cli@0.27.3"}}},
		Entry{ID: "gone", Source: SourceRegistry, Distribution: Distribution{NPX: &Package{Package: "@tencent-ai/codebuddy-code@2.156.0"}}},
		Entry{ID: "offline", Source: SourceRegistry, Distribution: Distribution{NPX: &Package{Package: "offline@1"}}},
		Entry{ID: "local", Source: SourceRegistry, Distribution: Distribution{NPX: &Package{Package: "@x/local@0.1.0"}}},
		Entry{ID: "cmd", Source: SourceConfig, Command: &Command{Command: "local"}},
	)
	list := r.List(linux("npx", "local"))
	before := map[string]string{}
	for _, s := range list {
		before[s.ID] = s.RunsHere()
	}
	CheckStatuses(t.Context(), list, func(string) (string, error) { return npm, nil }, 10*time.Second)
	want := map[string][2]string{
		"new":     {"yes (npx; version not checked)", "yes (npx; npm serves 0.61.0)"},
		"old":     {"yes (npx; version not checked)", "no: npm serves no version 0.27.3 of @google/gemini-cli"},
		"gone":    {"yes (npx; version not checked)", "no: npm serves no package @tencent-ai/codebuddy-code (E404 from registry.npmjs.org)"},
		"offline": {"yes (npx; version not checked)", "yes (npx; version not checked: npm: cannot reach its registry (EAI_AGAIN))"},
		"local":   {"yes (local on PATH)", "yes (local on PATH)"},
		"cmd":     {"yes", "yes"},
	}
	for _, s := range list {
		if w := want[s.ID]; before[s.ID] != w[0] || s.RunsHere() != w[1] {
			t.Errorf("%s: RunsHere %q then %q, want %q then %q", s.ID, before[s.ID], s.RunsHere(), w[0], w[1])
		}
		if asked := s.NPM != nil; asked != (s.Kind == KindNPX) {
			t.Errorf("%s (%s): npm asked %v", s.ID, s.Kind, asked)
		}
		if s.ID == "gone" && !strings.Contains(s.Install, "@tencent-ai/agent-sdk") {
			t.Errorf("gone: install %q, want the SDK's bundled CLI", s.Install)
		}
		if s.ID == "old" && s.Install != "" {
			t.Errorf("old: install %q", s.Install)
		}
	}
	// Without npm every npx status is unknown, and stays runnable.
	list = r.List(linux("npx"))
	CheckStatuses(t.Context(), list, linux().LookPath, time.Second)
	for _, s := range list {
		if s.Kind == KindNPX && (s.NPM == nil || s.NPM.Served != NPMUnknown || !s.CanRun ||
			s.RunsHere() != "yes (npx; version not checked: npm not found on PATH)") {
			t.Errorf("%s without npm: %+v (%s)", s.ID, s.NPM, s.RunsHere())
		}
	}
}
