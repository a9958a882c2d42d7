package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ELatestScript runs scripts/e2e-latest.sh with the reference agent's model persona as
// the "agent" (no npm: --pinned-config and --latest-config name it), so that what the script
// itself decides is exercised: a latest that behaves like the pin, or differently (a new
// release, a crash at start, a login it now asks for), is reported and passes; acpprobe failing
// on the latest (killed by a signal, past the budget, a turn not run because the route did not
// take for an agent whose profile matched on the pin) fails the script.
func TestE2ELatestScript(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	acpprobe := buildCLI(t)
	script := filepath.Join(repoRoot(t), "scripts", "e2e-latest.sh")
	// The model persona: the acptest-model profile matches it by its agentInfo.name, and its
	// turns reach the emulator.
	model := []string{"agent", "--persona", "model"}
	for _, tc := range []struct {
		name   string
		latest []string // the latest "agent": acpprobe's arguments
		// crash and hang make the acpprobe the script runs fail on the latest side (a wrapper).
		crash, hang bool
		budget      string
		failed      bool     // the script exits 1
		says        []string // lines its output must hold
	}{
		{name: "same", latest: model, says: []string{"  check: no drift", "  turns: no drift",
			"e2e-latest: ok (acpprobe ran on every latest agent; what changed is above)"}},
		{name: "new release", latest: append(model, "--drift"), says: []string{
			`  model: agentInfo.version: "0.1.0" → "0.2.0"`, `  model: methods[session/delete].support: "unsupported" → "supported"`,
			`  model: route.verified: true → false`, "e2e-latest: ok"}},
		{name: "agent crashes", latest: append(model, "--exit-immediately"), says: []string{
			`  model: error: added {"code":"agent_crashed"`, "e2e-latest: ok"}},
		{name: "agent asks for a login", latest: append(model, "--require-auth-env", "ACPPROBE_E2E_NEVER_SET"), says: []string{
			`  model: auth.status: "authenticated" → "auth_required"`, `  model: turns[completion].reason: added "the scenario's session/new failed:`,
			"e2e-latest: ok"}},
		{name: "route does not take", latest: []string{"agent", "--persona", "claude"}, failed: true, says: []string{
			`  model: route.kind: "profile" → "auto"`,
			"e2e-latest: FAIL: latest: model: completion not run: the agent never called the model emulator in this run: the auto route",
			"e2e-latest: FAIL: latest: model: cancel not run: "}},
		{name: "acpprobe crashes", latest: model, crash: true, failed: true, says: []string{
			"e2e-latest: FAIL: latest: acpprobe matrix (check) was killed by signal 11",
			"e2e-latest: FAIL: latest: acpprobe matrix (turns) was killed by signal 11"}},
		{name: "acpprobe hangs", latest: model, hang: true, budget: "3s", failed: true, says: []string{
			"e2e-latest: FAIL: latest: acpprobe matrix (check) ran past its budget of 3s (E2E_LATEST_BUDGET)",
			"e2e-latest: FAIL: latest: acpprobe matrix (turns) ran past its budget of 3s (E2E_LATEST_BUDGET)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for _, sub := range []string{"pinned", "latest"} {
				if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			pinned := writeAgentsConfig(t, filepath.Join(dir, "pinned"), []configAgent{{name: "model", bin: acpprobe, args: model}})
			latest := writeAgentsConfig(t, filepath.Join(dir, "latest"), []configAgent{{name: "model", bin: acpprobe, args: tc.latest}})
			bin := acpprobe
			if tc.crash || tc.hang {
				// A stand-in acpprobe: the real one, except on the latest config.
				fail := "kill -SEGV $$"
				if tc.hang {
					fail = "exec sleep 600"
				}
				bin = filepath.Join(dir, "acpprobe.sh")
				wrapper := "#!/bin/sh\ncase \" $* \" in *" + shellQuote(latest) + "*) " + fail + " ;; esac\nexec " + shellQuote(acpprobe) + " \"$@\"\n"
				if err := os.WriteFile(bin, []byte(wrapper), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(script, "--acpprobe", bin, "--pinned-config", pinned, "--latest-config", latest, "--out", filepath.Join(dir, "out"))
			cmd.Env = os.Environ()
			if tc.budget != "" {
				cmd.Env = append(cmd.Env, "E2E_LATEST_BUDGET="+tc.budget)
			}
			start := time.Now()
			out, err := cmd.CombinedOutput()
			t.Logf("e2e-latest.sh in %v:\n%s", time.Since(start).Round(time.Millisecond), out)
			code := 0
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				code = exitErr.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			want := 0
			if tc.failed {
				want = 1
			}
			check(t, "exit code", code, want)
			for _, s := range tc.says {
				if !strings.Contains(string(out), s) {
					t.Errorf("the output lacks %q", s)
				}
			}
			if strings.Contains(string(out), "FAIL") != tc.failed {
				t.Errorf("FAIL lines: %v, want %v", strings.Contains(string(out), "FAIL"), tc.failed)
			}
		})
	}
}
