package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/transport"
)

// TestCLIProbeCodexJSON runs the built acpprobe binary on codex-acp with --json: exit code 4
// (authentication required), the result document on stdout, and the one-line error envelope
// on stderr.
func TestCLIProbeCodexJSON(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	agent := agentBin(t, "codex-acp")

	bin := filepath.Join(t.TempDir(), "acpprobe")
	build := exec.Command("go", "build", "-buildvcs=false", "-o", bin, "./cmd/acpprobe")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/acpprobe: %v\n%s", err, out)
	}

	box := newSandbox(t)
	cmd := exec.Command(bin, "probe", "--json",
		"--timeout", probeTimeout.String(), "--startup-timeout", startupTimeout.String(),
		"--request-timeout", requestTimeout.String(), "--", agent)
	cmd.Dir = box.cwd // the default --cwd
	cmd.Env = transport.MergeEnv(os.Environ(), box.env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exitErr *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run acpprobe: %v", err)
	}
	check(t, "exit code", code, 4)

	var res probe.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%s", err, stdout.Bytes())
	}
	check(t, "schema", res.Schema, probe.ResultSchema)
	if res.Error == nil {
		t.Fatalf("result has no error; stdout:\n%s", stdout.Bytes())
	}
	check(t, "error.code", res.Error.Code, probe.ErrAuthRequired)
	check(t, "error.stage", res.Error.Stage, probe.StageSessionNew)
	check(t, "auth.status", res.Auth.Status, probe.AuthRequired)
	check(t, "agent.cwd", res.Agent.Cwd, box.cwd)
	if res.AgentInfo == nil || res.AgentInfo.Name != "codex-acp" {
		t.Errorf("agentInfo = %s, want name codex-acp", show(res.AgentInfo))
	}
	if res.Exit == nil {
		t.Errorf("exit is nil")
	}
	if res.Agent.PID <= 0 {
		t.Errorf("agent.pid = %d", res.Agent.PID)
	} else if transport.GroupAlive(res.Agent.PID) {
		t.Errorf("process group %d is still alive after acpprobe exited", res.Agent.PID)
	}
	if left := survivors(box.home); len(left) > 0 {
		t.Errorf("processes of the sandbox survived acpprobe:\n%s", strings.Join(left, "\n"))
	}

	// stderr: exactly one JSON line, the error envelope.
	var envelopes []string
	for _, line := range strings.Split(strings.TrimRight(stderr.String(), "\n"), "\n") {
		if strings.HasPrefix(line, "{") {
			envelopes = append(envelopes, line)
		}
	}
	if len(envelopes) != 1 {
		t.Fatalf("stderr has %d JSON lines, want 1 error envelope:\n%s", len(envelopes), stderr.String())
	}
	var env struct {
		Error *struct {
			Code     string `json:"code"`
			Stage    string `json:"stage"`
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(envelopes[0]), &env); err != nil || env.Error == nil {
		t.Fatalf("stderr line is not an {\"error\":…} envelope (%v): %s", err, envelopes[0])
	}
	check(t, "envelope.error.code", env.Error.Code, probe.ErrAuthRequired)
	check(t, "envelope.error.stage", env.Error.Stage, probe.StageSessionNew)
	check(t, "envelope.error.exitCode", env.Error.ExitCode, 4)
	if !strings.Contains(env.Error.Message, "-32000") {
		t.Errorf("envelope.error.message %q does not quote the agent's -32000", env.Error.Message)
	}
}
