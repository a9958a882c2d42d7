package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"

	"github.com/acpprobe/acpprobe/report"
)

// TestExitCode covers every mapping of exitCode, the one place where an exit code is chosen,
// and the line printError writes for each kind of error.
func TestExitCode(t *testing.T) {
	result := func(code report.ErrorCode, failed bool) *report.Result {
		r := &report.Result{}
		if code != "" {
			r.Error = &report.Error{Code: code, Stage: "session/new", Message: "why"}
		}
		if failed {
			r.Verdict = &report.Verdict{Failed: true}
		}
		return r
	}
	missing := &os.PathError{Op: "open", Path: "t.ndjson", Err: syscall.ENOENT}
	cases := []struct {
		name string
		err  error
		code int
		line string // what printError writes for command "probe"
	}{
		{"success", nil, ExitOK, ""},
		{"help", errHelp, ExitOK, ""},
		{"usage", usagef("--fail-on: unknown tier %q", "x"), ExitUsage, "acpprobe probe: --fail-on: unknown tier \"x\"\n"},
		{"usage text shown", &usageError{}, ExitUsage, ""},
		{"usage with --json", withJSON(usagef("bad"), true), ExitUsage, "acpprobe probe: bad\n"},
		{"file not read", readError("the transcript", missing), ExitIO, "acpprobe probe: cannot read the transcript: open t.ndjson: no such file or directory\n"},
		{"output not written", writeError("the result", errors.New("broken pipe")), ExitIO, "acpprobe probe: cannot write the result: broken pipe\n"},
		{"file error with --json", withJSON(readError("--config", missing), true), ExitIO, "acpprobe probe: cannot read --config: open t.ndjson: no such file or directory\n"},
		{"findings or drift", errFindings, ExitFindings, ""},
		{"matrix interrupted", errInterrupted, ExitInterrupted, ""},
		{"matrix with no agent probed", &errNoneProbed{total: 2}, ExitNotProbed, "acpprobe probe: no agent could be probed (2 of 2 failed)\n"},
		{"not runnable", &errNotRunnable{err: errors.New(`agent "kimi" cannot run here`)}, ExitNotProbed, "acpprobe probe: agent \"kimi\" cannot run here\n"},
		{"clean result", &resultError{r: result("", false)}, ExitOK, ""},
		{"verdict failed", &resultError{r: result("", true)}, ExitFindings, ""},
		{"auth required", &resultError{r: result(report.ErrAuthRequired, false)}, ExitAuth, "acpprobe: auth_required: why\n"},
		{"auth required with --json", withJSON(&resultError{r: result(report.ErrAuthRequired, false)}, true), ExitAuth,
			`{"error":{"code":"auth_required","exitCode":4,"message":"why","stage":"session/new"}}` + "\n"},
		{"verdict failed and an error", withJSON(&resultError{r: result(report.ErrAuthRequired, true)}, true), ExitFindings,
			`{"error":{"code":"auth_required","exitCode":1,"message":"why","stage":"session/new"}}` + "\n"},
		{"interrupted over a failed verdict", &resultError{r: result(report.ErrInterrupted, true)}, ExitInterrupted, "acpprobe: interrupted: why\n"},
		{"a truncated recording over a failed verdict", &resultError{r: result(report.ErrTruncated, true)}, ExitIO, "acpprobe: truncated: why\n"},
		{"spawn failed", &resultError{r: result(report.ErrSpawnFailed, false)}, ExitNotProbed, "acpprobe: spawn_failed: why\n"},
		{"initialize timeout", &resultError{r: result(report.ErrInitializeTimeout, false)}, ExitNotProbed, "acpprobe: initialize_timeout: why\n"},
		{"session/new timeout", &resultError{r: result(report.ErrSessionNewTimeout, false)}, ExitNotProbed, "acpprobe: session_new_timeout: why\n"},
		{"protocol mismatch", &resultError{r: result(report.ErrProtocolMismatch, false)}, ExitNotProbed, "acpprobe: protocol_mismatch: why\n"},
		{"crash", &resultError{r: result(report.ErrAgentCrashed, false)}, ExitNotProbed, "acpprobe: agent_crashed: why\n"},
		{"unknown probe error", &resultError{r: result(report.ErrUnknown, false)}, ExitNotProbed, "acpprobe: unknown: why\n"},
		{"checklist missing", &resultError{r: checked(result("", false), report.RequirementMissing)}, ExitMissing, ""},
		{"checklist unverified", &resultError{r: checked(result("", false), report.RequirementUnverified)}, ExitUnverified, ""},
		{"checklist met", &resultError{r: checked(result("", false), report.RequirementMet)}, ExitOK, ""},
		{"checklist unverified over auth required", &resultError{r: checked(result(report.ErrAuthRequired, false), report.RequirementUnverified)}, ExitUnverified, "acpprobe: auth_required: why\n"},
		{"checklist met over auth required", &resultError{r: checked(result(report.ErrAuthRequired, false), report.RequirementMet)}, ExitOK, "acpprobe: auth_required: why\n"},
		{"a failed verdict over the checklist", &resultError{r: checked(result("", true), report.RequirementMissing)}, ExitFindings, ""},
		{"not probed over the checklist", &resultError{r: checked(result(report.ErrSpawnFailed, false), report.RequirementUnverified)}, ExitNotProbed, "acpprobe: spawn_failed: why\n"},
		{"surface checklist missing", &errChecklist{report.RequirementMissing}, ExitMissing, "acpprobe probe: the checklist is missing\n"},
		{"surface checklist unverified", &errChecklist{report.RequirementUnverified}, ExitUnverified, "acpprobe probe: the checklist is unverified\n"},
		{"agent status", &agentExit{status: 7}, 7, ""},
		{"agent signal", &agentExit{status: 143, signal: syscall.SIGTERM}, 143, ""},
		{"agent failure", &agentExit{status: 1, err: errors.New("replay: unexpected line")}, 1, "acpprobe probe: replay: unexpected line\n"},
		{"anything else", fmt.Errorf("cannot find my own binary: %w", errors.New("gone")), ExitNotProbed, "acpprobe probe: cannot find my own binary: gone\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := exitCode(c.err)
			if code != c.code {
				t.Errorf("exitCode(%v) = %d, want %d", c.err, code, c.code)
			}
			var line bytes.Buffer
			printError(&line, "probe", c.err, code)
			if line.String() != c.line {
				t.Errorf("printError(%v) wrote %q, want %q", c.err, line.String(), c.line)
			}
		})
	}
}

// checked is r with a checklist of verdict v.
func checked(r *report.Result, v report.RequirementVerdict) *report.Result {
	r.Requirements = &report.Checklist{Verdict: v}
	return r
}
