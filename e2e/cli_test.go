package e2e

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	sbx "github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
)

// TestCLIProbeCodexJSON runs the built acpprobe binary on codex-acp with --json: exit code 4
// (authentication required), the result document on stdout, and the one-line error envelope
// on stderr.
func TestCLIProbeCodexJSON(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	box := newSandbox(t)
	code, stdout, stderr := runCLI(t, box, "probe", append([]string{"--json", "--"}, agentArgv(t, "codex")...)...)
	check(t, "exit code", code, 4)

	res := resultDoc(t, stdout)
	if res.Error == nil {
		t.Fatalf("result has no error; stdout:\n%s", stdout)
	}
	check(t, "error.code", res.Error.Code, report.ErrAuthRequired)
	check(t, "error.stage", res.Error.Stage, record.StageSessionNew)
	check(t, "auth.status", res.Auth.Status, report.AuthRequired)
	check(t, "agent.cwd", res.Agent.Cwd, box.cwd)
	if res.AgentInfo == nil || res.AgentInfo.Name != "@agentclientprotocol/codex-acp" {
		t.Errorf("agentInfo = %s, want name @agentclientprotocol/codex-acp", show(res.AgentInfo))
	}
	if res.Exit == nil {
		t.Errorf("exit is nil")
	}
	checkGone(t, box, res)

	env := errorEnvelope(t, stderr)
	check(t, "envelope.error.code", env.Code, string(report.ErrAuthRequired))
	check(t, "envelope.error.stage", env.Stage, string(record.StageSessionNew))
	check(t, "envelope.error.exitCode", env.ExitCode, 4)
	if !strings.Contains(env.Message, "-32000") {
		t.Errorf("envelope.error.message %q does not quote the agent's -32000", env.Message)
	}
}

// TestCLICheckCodexJSON runs `acpprobe check --json` on codex-acp: the non-spec key of its
// initialize answer is a MANDATORY finding, so the failed verdict wins over the authentication
// error and the exit code is 1, not 4; the stderr envelope still names auth_required, with
// exitCode 1.
func TestCLICheckCodexJSON(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	box := newSandbox(t)
	code, stdout, stderr := runCLI(t, box, "check", append([]string{"--json", "--"}, agentArgv(t, "codex")...)...)
	check(t, "exit code", code, 1)

	res := resultDoc(t, stdout)
	if res.Error == nil || res.Error.Code != report.ErrAuthRequired {
		t.Errorf("error = %s, want auth_required", show(res.Error))
	}
	if v := res.Verdict; v == nil {
		t.Errorf("verdict is nil")
	} else {
		check(t, "verdict.failed", v.Failed, true)
		check(t, "verdict.failOn", v.FailOn, report.TierMandatory)
		check(t, "verdict.counts.MANDATORY", v.Counts[report.TierMandatory], 1)
		check(t, "verdict.known", v.Known, 0)
	}
	// Without --prompt-shapes there are no shapes, so no capability.prompt-content; without
	// --deep no version negotiation. The rest is what TestCheckCodexACP finds.
	got := []string{}
	for _, f := range res.Findings {
		got = append(got, strings.TrimSpace(string(f.Tier)+" "+f.ID+" "+f.Pointer))
	}
	slices.Sort(got)
	check(t, "findings", got, []string{
		"ADVISORY protocol.stdin-exit",
		"INFO capability.legacy-method",
		"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp",
		"INFO schema.unstable /result/agentCapabilities/providers",
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/systemPrompt",
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/title",
		"MANDATORY schema.non-spec-key /result/agentCapabilities/sessionCapabilities/subagents",
	})
	if res.PromptShapes != nil {
		t.Errorf("promptShapes = %s, want none without --prompt-shapes", show(res.PromptShapes))
	}
	checkGone(t, box, res)

	env := errorEnvelope(t, stderr)
	check(t, "envelope.error.code", env.Code, string(report.ErrAuthRequired))
	check(t, "envelope.error.exitCode", env.ExitCode, 1)
}

// TestCLICheckGeminiText runs `acpprobe check` (text output) on `gemini --acp`, as is and
// with --prompt-shapes --deep (both connections in one log, split again by the report): no
// finding at or above MANDATORY either way, so the verdict passes and the exit code is the
// probe's own, 4 (authentication required).
func TestCLICheckGeminiText(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	argv := agentArgv(t, "gemini")

	for _, tc := range []struct {
		name  string
		flags []string
		more  []string // what the text must also show
	}{
		{name: "plain"},
		{name: "prompt-shapes deep", flags: []string{"--prompt-shapes", "--deep"}, more: []string{
			`(?m)^Prompt shapes$`,
			`(?m)^  valid-text-control: +accepted \(-32602\)$`,
			`(?m)^  kind-text: +rejected \(-32603\)$`,
			`(?m)^  error style: +zod-union$`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			box := newSandbox(t)
			args := append(append(append([]string{}, tc.flags...), "--"), argv...)
			code, stdout, stderr := runCLI(t, box, "check", args...)
			check(t, "exit code", code, 4)

			for _, re := range append([]string{
				`(?m)^Findings \(2\)$`,
				`(?m)^    protocol\.invalid-params \[seq \d+ /error/code\]$`,
				`(?m)^    capability\.legacy-method \[seq \d+\]$`,
				`(?m)^  result: +pass \(fail on MANDATORY and above\)$`,
				`(?m)^  new findings: +MANDATORY 0, CAPABILITY 0, ADVISORY 1, INFO 1$`,
				`(?m)^  code: +auth_required$`,
			}, tc.more...) {
				if !wrappedText(re).MatchString(stdout) {
					t.Errorf("stdout does not match %s:\n%s", re, stdout)
				}
			}
			// stderr: the one-line error, not the JSON envelope (no --json).
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "acpprobe: auth_required: ") {
				t.Errorf("stderr = %q, want the one line \"acpprobe: auth_required: …\"", stderr)
			}
			if left := survivors(box.home); len(left) > 0 {
				t.Errorf("processes of the sandbox survived acpprobe:\n%s", strings.Join(left, "\n"))
			}
		})
	}
}

// cliBuild is the acpprobe binary, built once for every CLI test.
var cliBuild struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// TestMain removes the built binary after the tests.
func TestMain(m *testing.M) {
	sbx.Init() // the namespace helper of the net level is this binary, re-executed
	code := m.Run()
	if cliBuild.dir != "" {
		os.RemoveAll(cliBuild.dir)
	}
	os.Exit(code)
}

// buildCLI builds ./cmd/acpprobe (once) and returns the binary's path.
func buildCLI(t *testing.T) string {
	t.Helper()
	root := repoRoot(t)
	cliBuild.once.Do(func() {
		if cliBuild.dir, cliBuild.err = os.MkdirTemp("", "acpprobe-e2e-"); cliBuild.err != nil {
			return
		}
		cliBuild.path = filepath.Join(cliBuild.dir, "acpprobe")
		// As README.md builds it: static. A dependency that needs cgo fails here.
		build := exec.Command("go", "build", "-buildvcs=false", "-o", cliBuild.path, "./cmd/acpprobe")
		build.Dir = root
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if cliBuild.out, cliBuild.err = build.CombinedOutput(); cliBuild.err == nil {
			cliBuild.err = static(cliBuild.path)
		}
	})
	if cliBuild.err != nil {
		t.Fatalf("go build ./cmd/acpprobe: %v\n%s", cliBuild.err, cliBuild.out)
	}
	return cliBuild.path
}

// static reports why the executable at path is not static (it names a program interpreter, the
// dynamic loader), or nil.
func static(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New(path + " is dynamically linked (PT_INTERP): acpprobe is one static binary")
		}
	}
	return nil
}

// runCLI runs `acpprobe <command> <budget flags> <args…>` in box (its cwd is the default
// --cwd) and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, box sandbox, command string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return execCLI(t, box, append([]string{command,
		"--timeout", probeTimeout.String(), "--startup-timeout", startupTimeout.String(),
		"--request-timeout", requestTimeout.String()}, args...)...)
}

// execCLI runs `acpprobe <argv…>` as is (no budget flags: analyze takes none) in box, with
// box's environment on top of the caller's, and returns the exit code, stdout and stderr.
func execCLI(t *testing.T, box sandbox, argv ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(buildCLI(t), argv...)
	cmd.Dir = box.cwd
	cmd.Env = transport.MergeEnv(os.Environ(), box.env)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		code = exitErr.ExitCode()
	case err != nil:
		t.Fatalf("run acpprobe %s: %v", argv[0], err)
	}
	return code, out.String(), errOut.String()
}

// resultDoc decodes the result document acpprobe printed with --json.
func resultDoc(t *testing.T, stdout string) report.Result {
	t.Helper()
	var res report.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%s", err, stdout)
	}
	check(t, "schema", res.Schema, report.ResultSchema)
	return res
}

// checkGone asserts that nothing of the probed agent outlived acpprobe.
func checkGone(t *testing.T, box sandbox, res report.Result) {
	t.Helper()
	if res.Agent.PID <= 0 {
		t.Errorf("agent.pid = %d", res.Agent.PID)
	} else if transport.GroupAlive(res.Agent.PID) {
		t.Errorf("process group %d is still alive after acpprobe exited", res.Agent.PID)
	}
	if left := survivors(box.home); len(left) > 0 {
		t.Errorf("processes of the sandbox survived acpprobe:\n%s", strings.Join(left, "\n"))
	}
}

// envelope is the {"error":{…}} line acpprobe writes on stderr with --json.
type envelope struct {
	Code     string `json:"code"`
	Stage    string `json:"stage"`
	Message  string `json:"message"`
	ExitCode int    `json:"exitCode"`
}

// errorEnvelope asserts that stderr carries exactly one JSON line, the error envelope, and
// returns it.
func errorEnvelope(t *testing.T, stderr string) envelope {
	t.Helper()
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if strings.HasPrefix(line, "{") {
			lines = append(lines, line)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("stderr has %d JSON lines, want 1 error envelope:\n%s", len(lines), stderr)
	}
	var env struct {
		Error *envelope `json:"error"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &env); err != nil || env.Error == nil {
		t.Fatalf("stderr line is not an {\"error\":…} envelope (%v): %s", err, lines[0])
	}
	return *env.Error
}
