package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/clientprofile"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
)

// ProbeOptions are the options of probe, demo and check: one agent, probed live, its record
// analysed into the report.
type ProbeOptions struct {
	IO Stdio
	// Target is the agent to launch and how to drive it; probeRun makes its Log.
	Target probe.Options
	// Recording says where the record goes and what is kept out of it.
	Recording Recording
	// Check, when set, also runs the active checks of acpprobe check (the record is then a
	// check transcript).
	Check *acpprobe.Check
	// Report says how the record becomes the report: catalogue, schema set, verdict.
	Report acpprobe.AnalyzeOptions
	// JSON prints the result as JSON (and a failure as a JSON line on stderr).
	JSON bool
	// Note is said on stderr when the agent could not be probed: for an agent of the
	// registry's index, which index that is, how old, and how to fetch the current one.
	Note string
	// launch is what to say about how the agent was launched: its id's resolution to a
	// program on PATH (before it runs), why npx could not fetch it (after).
	launch launchNotes
	// Isolate, when set, runs the agent in a sandbox made from these options (--isolate,
	// --keep-sandbox, --pass-env).
	Isolate *sandbox.Options
	// AuthAB runs the auth oracle (--auth-ab).
	AuthAB bool
	// Clients are the client profiles chosen (--client-profile): none probes as the minimal
	// client and says nothing of it; one sets Target's clientCapabilities and clientInfo and
	// the report's client section; more (probe only) probe once per profile and report the
	// surface by client (probeSurface).
	Clients []clientprofile.Profile
	// Require is a host's checklist (--require), judged on the result (clientprofile.Check).
	Require []string
}

func newProbeOptions(args []string, stdio Stdio) (*ProbeOptions, error) {
	fs := newFlagSet("probe")
	var pf probeFlags
	pf.register(fs, jsonFlag|commandFlag|agentsFlag|budgetFlags|transcriptFlag)
	var iso isolateFlags
	iso.register(fs, record.LevelNone)
	var cf clientFlags
	cf.register(fs, true)
	cl, err := parseArgs(fs, args, "acpprobe probe [flags] (AGENT-ID | -- <agent command> [args...])", stdio.Out)
	if err != nil {
		return nil, err
	}
	target, err := pf.targetOptions(fs, cl)
	if err := probeable(err, pf.json); err != nil {
		return nil, withJSON(err, pf.json)
	}
	opts := pf.probeOptions(stdio, target)
	if err := iso.apply(opts, fs); err != nil {
		return nil, withJSON(err, pf.json)
	}
	if err := cf.apply(opts, fs); err != nil {
		return nil, err
	}
	return opts, nil
}

// probeable is the error of targetOptions that stops a probe. With --json (asJSON), an agent
// that cannot run here does not (nil): it is probed, so that stdout carries its result, which
// says spawn_failed and why. Without, the one line that says why is the whole report.
func probeable(err error, asJSON bool) error {
	var nr *errNotRunnable
	if asJSON && errors.As(err, &nr) {
		return nil
	}
	return err
}

// probeOptions are the options of a probe of target, as the flags say.
func (p *probeFlags) probeOptions(stdio Stdio, target probe.Options) *ProbeOptions {
	opts := &ProbeOptions{IO: stdio, Target: target, Recording: p.recording(),
		Report: acpprobe.AnalyzeOptions{Catalogue: p.cat}, JSON: p.json, launch: p.launched}
	if target.AgentID != "" {
		opts.Note = p.note(target.AgentID)
	}
	return opts
}

func newDemoOptions(args []string, stdio Stdio) (*ProbeOptions, error) {
	fs := newFlagSet("demo")
	var pf probeFlags
	pf.register(fs, jsonFlag|budgetFlags|transcriptFlag)
	persona := fs.String("persona", "claude", "reference-agent persona to probe (claude, codebuddy, codex, gemini, minimal)")
	if err := parseFlags(fs, args, "acpprobe demo [flags]", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("takes no agent command (it probes the built-in reference agent); use 'acpprobe probe' for others")
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find my own binary: %w", err)
	}
	if err := checkPersona(*persona); err != nil {
		return nil, err
	}
	target, err := pf.options([]string{self, "agent", "--persona", *persona})
	if err != nil {
		return nil, err
	}
	target.Command = "acpprobe agent --persona " + *persona
	return pf.probeOptions(stdio, target), nil
}

// probeRun probes the agent, recording the session (redacted, into a transcript when asked),
// and reports it through the same analysis as acpprobe analyze.
func probeRun(ctx context.Context, opts *ProbeOptions) error {
	if len(opts.Clients) > 1 {
		return probeSurface(ctx, opts)
	}
	return opts.recorded(ctx, "probe", opts.probe(ctx))
}

// probe is the run of one probe (and check) of opts' agent.
func (opts *ProbeOptions) probe(ctx context.Context) func(target probe.Options) (*report.Result, error) {
	return func(target probe.Options) (*report.Result, error) {
		return acpprobe.Run(ctx, acpprobe.Options{Probe: target, Check: opts.Check, Analyze: opts.Report,
			Isolate: opts.Isolate, AuthAB: opts.AuthAB})
	}
}

// recorded runs opts.Target through run (tool names the transcript's maker, "check" when the
// active checks run), recording the session into opts.Target's log (redacted, into a
// transcript when asked), and reports the result: the one way probe, check, turn and check
// --turns go from a run to a report. A run whose ctx ended (Ctrl-C, SIGTERM) exits 130
// whatever its result says: the interrupt may have come after the result's own error (an
// auth_required session/new), or cut the teardown of an otherwise finished probe.
func (opts *ProbeOptions) recorded(ctx context.Context, tool string, run func(target probe.Options) (*report.Result, error)) error {
	r, err := opts.result(tool, run)
	if err != nil {
		return err
	}
	err = printResult(opts.IO.Out, r, opts.JSON)
	if err == nil && ctx.Err() != nil {
		err = withJSON(&resultError{r: r}, opts.JSON)
	}
	if re := (*resultError)(nil); errors.As(err, &re) {
		re.note = opts.Note
		re.because, re.hint = opts.launch.explain(r)
		re.interrupted = ctx.Err() != nil
	}
	return err
}

// result runs opts.Target through run as recorded says, and returns the result with the
// client profile's section and the host's checklist (--client-profile, --require).
func (opts *ProbeOptions) result(tool string, run func(target probe.Options) (*report.Result, error)) (*report.Result, error) {
	if opts.Check != nil {
		tool = "check"
	}
	rec, err := opts.Recording.start(opts.Target, tool, opts.Report.Catalogue)
	if err != nil {
		return nil, err
	}
	if opts.launch.resolved != "" {
		fmt.Fprintf(opts.IO.Err, "acpprobe %s: note: %s\n", tool, render.Message(opts.launch.resolved))
	}
	target := opts.Target
	target.Log = rec.Log
	if opts.JSON {
		// The result's JSON encoders are built while the first agent starts, which leaves a
		// core waiting (not before: they would delay its launch).
		var warm sync.Once
		defer rec.Log.Observe(func(f jsonrpc.Frame) {
			if record.Started.Is(f) {
				warm.Do(func() { go render.WarmResultJSON() })
			}
		})()
	}
	r, err := run(target)
	cerr := rec.Close()
	if err != nil {
		return nil, unusable(err)
	}
	if cerr != nil {
		return nil, writeError("the transcript", cerr)
	}
	opts.judgeClient(r, rec.Log.Frames())
	return r, nil
}

// unusable is the error of acpprobe.Run or Analyze, which fail only on options they cannot
// use: a usage error.
func unusable(err error) error { return &usageError{err.Error()} }

// printResult prints a result on w. The error says how the probe ended (resultError), or that the
// report could not be written. A live probe and the analysis of its transcript both end here.
func printResult(w io.Writer, r *report.Result, asJSON bool) error {
	var err error
	if asJSON {
		err = render.JSON(w, r)
	} else {
		err = render.Text(render.ScreenOf(w, os.Getenv), r)
	}
	if err != nil {
		return writeError("the result", err)
	}
	if resultCode(r) == ExitOK {
		return nil
	}
	return withJSON(&resultError{r: r}, asJSON)
}
