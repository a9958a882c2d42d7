package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Exit codes (DESIGN.md decision 9, README "Exit codes"). Commands never return one: they
// return an error that carries its meaning, and exitCode, called by Main only, picks the code.
const (
	ExitOK          = 0
	ExitFindings    = 1 // findings at or above --fail-on, client findings, or drift in diff
	ExitUsage       = 2 // the command line is wrong
	ExitNotProbed   = 3 // spawn failure, timeout, crash, protocol mismatch; a matrix in which no agent could be probed
	ExitAuth        = 4
	ExitIO          = 5 // a file could not be read or parsed (a recording cut short included), or the output could not be written
	ExitInterrupted = 130
)

// A host's checklist (--require) that did not pass: a requirement missing (ExitMissing);
// none missing but one unverified, which is never a pass (ExitUnverified).
const (
	ExitMissing    = 6
	ExitUnverified = 7
)

// usageError is a problem with the command line: a flag, a value, a missing argument, an
// unknown agent id. An empty message means the usage text was printed instead.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// fileError is a file acpprobe could not read or parse (a transcript, catalogue, baseline,
// registry, config or result file), or output it could not write (the report on stdout, a
// transcript, --findings, --out).
type fileError struct {
	op  string // what acpprobe was doing: "read the transcript", "write the result"
	err error
}

func (e *fileError) Error() string { return "cannot " + e.op + ": " + e.err.Error() }
func (e *fileError) Unwrap() error { return e.err }

// readError is a file that could not be read or parsed; what names it ("the transcript").
func readError(what string, err error) error { return &fileError{"read " + what, err} }

// writeError is output that could not be written; what names it ("the result").
func writeError(what string, err error) error { return &fileError{"write " + what, err} }

// errNotRunnable is an agent that was found (in the registry, a config) but cannot run here.
// note, when set, is printed on a line of its own after the error (see staleNote).
type errNotRunnable struct {
	err  error
	note string
}

func (e *errNotRunnable) Error() string { return e.err.Error() }

// errNoneProbed is a matrix in which no agent could be probed (exit 3); the matrix itself
// was printed.
type errNoneProbed struct{ total int }

func (e *errNoneProbed) Error() string {
	return fmt.Sprintf("no agent could be probed (%d of %d failed)", e.total, e.total)
}

// resultError is a probe (or the analysis of its record) whose report is printed but that did
// not end well: the agent could not be probed, needed authentication, was interrupted, or the
// verdict failed. Its exit code is the result's (resultCode). note and hint, when set, are
// printed when the agent could not be probed (exit 3), each on a line of its own.
type resultError struct {
	r    *report.Result
	note string
	// because, when set, is said instead of the result's message on the error line (and in
	// the --json envelope): a package runner's failure to fetch the agent, in npm's words
	// (launchNotes.explain); hint says how else to get that agent.
	because, hint string
	// interrupted is a run stopped by a signal (Ctrl-C): it exits 130 whatever the result says.
	interrupted bool
}

func (e *resultError) Error() string {
	if e.r.Error == nil {
		return "the verdict failed"
	}
	return fmt.Sprintf("%s: %s", e.r.Error.Code, e.r.Error.Message)
}

// agentExit ends acpprobe the way the agent it stands for ended (agent, replay, tap): with the
// agent's status, or killed by the agent's signal. err, when set, says what went wrong.
type agentExit struct {
	status int
	signal syscall.Signal // when set, acpprobe dies by it (status is then 128+signal)
	err    error
}

func (e *agentExit) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("the agent exited with status %d", e.status)
}

// jsonFailure marks the failure of a command run with --json: an agent that could not be
// probed is then also reported as one JSON line on stderr.
type jsonFailure struct{ err error }

func (e *jsonFailure) Error() string { return e.err.Error() }
func (e *jsonFailure) Unwrap() error { return e.err }

// withJSON marks err as the failure of a command run with --json (when on).
func withJSON(err error, on bool) error {
	if err == nil || !on {
		return err
	}
	return &jsonFailure{err}
}

var (
	// errHelp is -h: the flags were printed on stdout, which is not a failure.
	errHelp = errors.New("help requested")
	// errFindings is a report that holds findings the exit code must show (lint-client's
	// client findings, diff's drift); the report already lists them.
	errFindings = errors.New("findings")
	// errInterrupted is a command stopped by a signal after printing what it had (matrix).
	errInterrupted = errors.New("interrupted")
)

// exitCode is the exit code of a command that returned err: the one place where a code is
// chosen. An error without an exit meaning of its own is a failure to probe.
func exitCode(err error) int {
	var (
		usage  *usageError
		file   *fileError
		result *resultError
		agent  *agentExit
		none   *errNoneProbed
		check  *errChecklist
	)
	switch {
	case err == nil, errors.Is(err, errHelp):
		return ExitOK
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &none):
		return ExitNotProbed
	case errors.As(err, &file):
		return ExitIO
	case errors.Is(err, errFindings):
		return ExitFindings
	case errors.Is(err, errInterrupted):
		return ExitInterrupted
	case errors.As(err, &result):
		if result.interrupted {
			return ExitInterrupted
		}
		return resultCode(result.r)
	case errors.As(err, &check):
		return checklistCode(check.verdict)
	case errors.As(err, &agent):
		return agent.status
	}
	return ExitNotProbed
}

// resultCode maps a result to the exit code: an interrupt first, then a failed check verdict,
// then the probe's own outcome.
func resultCode(r *report.Result) int {
	if r.Error != nil && r.Error.Code == report.ErrInterrupted {
		return ExitInterrupted
	}
	// A recording cut short says nothing reliable, whatever its verdict.
	if r.Error != nil && r.Error.Code == report.ErrTruncated {
		return ExitIO
	}
	if r.Verdict != nil && r.Verdict.Failed {
		return ExitFindings
	}
	// With --require, the checklist decides for an agent that answered: one that needs a login
	// has its session's requirements unverified (exit 7), not exit 4.
	if r.Requirements != nil && (r.Error == nil || r.Error.Code == report.ErrAuthRequired) {
		return checklistCode(r.Requirements.Verdict)
	}
	if r.Error == nil {
		return ExitOK
	}
	if r.Error.Code == report.ErrAuthRequired {
		return ExitAuth
	}
	return ExitNotProbed
}

// checklistCode is the exit code of a host's checklist verdict.
func checklistCode(v report.RequirementVerdict) int {
	switch v {
	case report.RequirementMissing:
		return ExitMissing
	case report.RequirementUnverified:
		return ExitUnverified
	}
	return ExitOK
}

// printError writes the line that says why command cmd failed with err, and exit code code,
// on w: nothing when the output already said it; with --json, a failed probe is one line
// {"error":{"code","stage","message","exitCode"}} (README "Exit codes").
func printError(w io.Writer, cmd string, err error, code int) {
	var (
		usage  *usageError
		nr     *errNotRunnable
		result *resultError
		agent  *agentExit
		asJSON *jsonFailure
	)
	prefix := "acpprobe"
	if cmd != "" {
		prefix += " " + cmd
	}
	inJSON := errors.As(err, &asJSON)
	switch {
	case err == nil, errors.Is(err, errHelp), errors.Is(err, errFindings), errors.Is(err, errInterrupted):
	case errors.As(err, &usage):
		if usage.msg != "" {
			fmt.Fprintf(w, "%s: %s\n", prefix, render.Message(usage.msg))
		}
	case errors.As(err, &result):
		note := ""
		for _, n := range []string{result.note, result.hint} {
			if code == ExitNotProbed && n != "" {
				note += prefix + ": note: " + render.Message(n) + "\n"
			}
		}
		if e := result.r.Error; e != nil && e.Hint != "" {
			note += prefix + ": hint: " + render.Message(e.Hint) + "\n"
		}
		switch e := result.r.Error; {
		case e == nil: // a failed verdict: the report says FAIL
		case inJSON:
			fmt.Fprint(w, note) // the JSON line stays the last
			envelope(w, e.Code, e.Stage, cmp.Or(result.because, e.Message), code)
		default:
			fmt.Fprintf(w, "acpprobe: %s: %s\n%s", e.Code, render.Message(cmp.Or(result.because, e.Message)), note)
			if code == ExitFindings {
				// The exit is the verdict's, not the error's: say so, or the line above reads
				// as the reason for exit 1.
				fmt.Fprintf(w, "%s: %s\n", prefix, verdictLine(result.r.Verdict))
			}
		}
		if result.interrupted && (result.r.Error == nil || result.r.Error.Code != report.ErrInterrupted) && !inJSON {
			fmt.Fprintf(w, "%s: interrupted (Ctrl-C): the report is what the probe had when it was stopped\n", prefix)
		}
	case errors.As(err, &nr):
		fmt.Fprintf(w, "%s: %s\n", prefix, render.Message(err.Error()))
		if nr.note != "" {
			fmt.Fprintf(w, "%s: note: %s\n", prefix, render.Message(nr.note))
		}
	case errors.As(err, &agent):
		if agent.err != nil {
			fmt.Fprintf(w, "%s: %s\n", prefix, render.Message(agent.err.Error()))
		}
	default:
		fmt.Fprintf(w, "%s: %s\n", prefix, render.Message(err.Error()))
	}
}

// verdictLine says why a verdict failed: the new findings at or above its tier.
func verdictLine(v *report.Verdict) string {
	n := 0
	for _, t := range report.Tiers {
		if t.Rank() <= v.FailOn.Rank() {
			n += v.Counts[t]
		}
	}
	return fmt.Sprintf("the verdict failed: %d new finding(s) at %s or above (--fail-on)", n, v.FailOn)
}

// envelope writes the one-line JSON error of a failed probe.
func envelope(w io.Writer, code report.ErrorCode, stage record.Stage, message string, exit int) {
	_ = render.JSONLine(w, map[string]any{"error": map[string]any{
		"code": code, "stage": stage, "message": message, "exitCode": exit}})
}
