package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transcript"
)

// AnalyzeOptions are the options of acpprobe analyze: a transcript, analysed offline.
type AnalyzeOptions struct {
	IO Stdio
	// Transcript is the file to analyse.
	Transcript string
	// Report says how the record becomes the report. A check transcript is judged against
	// MANDATORY when Report.Verdict is nil.
	Report acpprobe.AnalyzeOptions
	// JSON prints the result as JSON.
	JSON bool
	// AllowAuthRequired lets the verdict alone decide the exit code of a session that needed
	// authentication, as check --allow-auth-required does.
	AllowAuthRequired bool
}

func newAnalyzeOptions(args []string, stdio Stdio) (*AnalyzeOptions, error) {
	fs := newFlagSet("analyze")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	schemaName := fs.String("schema", "", "schema set: "+strings.Join(schema.Names(), ", ")+" (default "+schema.Default+"; v2 when protocol 2 was negotiated)")
	failOn := fs.String("fail-on", "", "judge the findings: exit 1 when one not in the baseline is at or above this tier (default for check and turn transcripts: mandatory)")
	baselinePath := fs.String("baseline", "", "file of known finding ids with a reason each")
	allowAuth := fs.Bool("allow-auth-required", false, "judge a session that needed authentication by the verdict alone, as check --allow-auth-required does")
	catalogueDir := fs.String("catalogue", "", "directory of extra vendor catalogue files merged over the built-in catalogue")
	if err := parseFlags(fs, args, "acpprobe analyze [flags] TRANSCRIPT", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		return nil, usagef("want one transcript file, got %d arguments", fs.NArg())
	}
	cat, err := loadCatalogue(*catalogueDir)
	if err != nil {
		return nil, err
	}
	opts := &AnalyzeOptions{IO: stdio, Transcript: fs.Arg(0), JSON: *asJSON, AllowAuthRequired: *allowAuth,
		Report: acpprobe.AnalyzeOptions{Catalogue: cat, Schema: *schemaName}}
	if *schemaName == "" && *failOn == "" && *baselinePath == "" && !*allowAuth {
		return opts, nil
	}
	// Any of the check flags asks for a verdict.
	verdict := &acpprobe.Verdict{FailOn: report.TierMandatory, BaselinePath: *baselinePath}
	if *schemaName != "" {
		if _, err := schema.Load(*schemaName); err != nil {
			return nil, usagef("--schema: %v", err)
		}
	}
	if *failOn != "" {
		if verdict.FailOn, err = conformance.ParseTier(*failOn); err != nil {
			return nil, usagef("--fail-on: %v", err)
		}
	}
	if *baselinePath != "" {
		if verdict.Baseline, err = conformance.LoadBaseline(*baselinePath); err != nil {
			return nil, readError("--baseline", err)
		}
	}
	opts.Report.Verdict = verdict
	return opts, nil
}

// analyzeRun rebuilds the result and findings of a recorded session, through the same code
// as a live probe.
func analyzeRun(ctx context.Context, opts *AnalyzeOptions) error {
	header, frames, err := readTranscript(opts.Transcript)
	if err != nil {
		return err
	}
	o := opts.Report
	if o.Verdict == nil && (header.Tool == "check" || header.Tool == "turn") {
		o.Verdict = &acpprobe.Verdict{FailOn: report.TierMandatory}
	}
	r, err := acpprobe.Analyze(ctx, frames, o)
	if err != nil {
		return unusable(err)
	}
	agentFromHeader(&r.Agent, header)
	return exitByVerdict(printResult(opts.IO.Out, r, opts.JSON), opts.AllowAuthRequired)
}

// agentFromHeader fills what the record did not say of the agent from the transcript's header,
// which names it too: tap transcripts recorded before the tap's spawn event carried the
// command, cwd and start have them only there.
func agentFromHeader(a *report.AgentRef, h transcript.Header) {
	a.Command = cmp.Or(a.Command, h.Command)
	a.Cwd = cmp.Or(a.Cwd, h.Cwd)
	a.ProbedAt = cmp.Or(a.ProbedAt, h.Start)
}

// ReplayOptions are the options of acpprobe replay: act as the agent recorded in a transcript.
type ReplayOptions struct {
	IO Stdio
	// Transcript is the recording to play back.
	Transcript string
	// Timing reproduces the recorded delays.
	Timing bool
}

func newReplayOptions(args []string, stdio Stdio) (*ReplayOptions, error) {
	fs := newFlagSet("replay")
	timing := fs.Bool("timing", false, "reproduce the recorded delays")
	if err := parseFlags(fs, args, "acpprobe replay [--timing] TRANSCRIPT", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		return nil, usagef("want one transcript file, got %d arguments", fs.NArg())
	}
	return &ReplayOptions{IO: stdio, Transcript: fs.Arg(0), Timing: *timing}, nil
}

// replayRun acts as the recorded agent on stdio, and ends as it did.
func replayRun(ctx context.Context, opts *ReplayOptions) error {
	_, frames, err := readTranscript(opts.Transcript)
	if err != nil {
		return err
	}
	main := record.Split(frames).Main
	for _, f := range main {
		if f.Dir == jsonrpc.DirFolded {
			return readError("the transcript", fmt.Errorf("%s: more than the %d MiB a replay keeps whole in memory", opts.Transcript, record.DefaultBudget>>20))
		}
	}
	replayer := transcript.NewReplayer(main)
	err = replayer.Serve(ctx, opts.IO.In, opts.IO.Out, opts.IO.Err, opts.Timing)
	var exit *transcript.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		return &agentExit{status: exit.Code}
	case ctx.Err() != nil:
		// as the recorded agent, stopped by the ladder, did: with the status it exited with,
		// or killed by the signal
		if code, ok := replayer.StatusOnSignal(); ok {
			if code == 0 {
				return nil
			}
			return &agentExit{status: code}
		}
		return &agentExit{status: 128 + int(syscall.SIGTERM), signal: syscall.SIGTERM}
	}
	return &agentExit{status: 1, err: err}
}

// readTranscript reads a transcript a user hands us: a regular file, lines of bounded size,
// read into a record with the live probe's memory budget.
func readTranscript(path string) (transcript.Header, []jsonrpc.Frame, error) {
	h, frames, err := transcript.ReadFile(path, transcript.ReadOptions{Budget: record.Budget(0)})
	if err != nil {
		return h, nil, readError("the transcript", err)
	}
	return h, frames, nil
}

// LintClientOptions are the options of acpprobe lint-client: judge what the client sent in a
// transcript.
type LintClientOptions struct {
	IO Stdio
	// Transcript is the recorded session (usually by acpprobe tap).
	Transcript string
	// Catalogue classifies vendor keys and methods (the built-in one when nil).
	Catalogue *extensions.Catalogue
	// JSON prints the findings as JSON.
	JSON bool
	// FailOn is the tier at or above which a client finding fails (exit 1); ADVISORY when "".
	FailOn report.Tier
}

func newLintClientOptions(args []string, stdio Stdio) (*LintClientOptions, error) {
	fs := newFlagSet("lint-client")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	catalogueDir := fs.String("catalogue", "", "directory of extra vendor catalogue files merged over the built-in catalogue")
	failOn := fs.String("fail-on", "advisory", "exit 1 when a client finding is at or above this tier: mandatory, capability, advisory, info")
	if err := parseFlags(fs, args, "acpprobe lint-client [--json] [--fail-on TIER] [--catalogue DIR] TRANSCRIPT", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() != 1 {
		return nil, usagef("want one transcript file, got %d arguments", fs.NArg())
	}
	tier, err := conformance.ParseTier(*failOn)
	if err != nil {
		return nil, usagef("--fail-on: %v", err)
	}
	cat, err := loadCatalogue(*catalogueDir)
	if err != nil {
		return nil, err
	}
	return &LintClientOptions{IO: stdio, Transcript: fs.Arg(0), Catalogue: cat, JSON: *asJSON, FailOn: tier}, nil
}

// lintClientRun judges what the client (an editor, recorded by acpprobe tap) sent: private
// vendor keys and methods (rules 6.1–6.4 of the CodeBuddy reference, for every catalogued
// vendor) and non-ACP methods without the _ prefix. A finding at or above FailOn (ADVISORY
// by default: anything above INFO) fails (errFindings).
func lintClientRun(ctx context.Context, opts *LintClientOptions) error {
	_, frames, err := readTranscript(opts.Transcript)
	if err != nil {
		return err
	}
	r, err := acpprobe.Analyze(ctx, frames, acpprobe.AnalyzeOptions{Catalogue: opts.Catalogue})
	if err != nil {
		return unusable(err)
	}
	client := []report.Finding{}
	for _, f := range r.Findings {
		if c, ok := conformance.Lookup(f.ID); ok && c.Side == conformance.SideClient {
			client = append(client, f)
		}
	}
	if opts.JSON {
		err = render.JSON(opts.IO.Out, client)
	} else {
		err = render.ClientFindings(render.ScreenOf(opts.IO.Out, os.Getenv), client)
	}
	if err != nil {
		return writeError("the findings", err)
	}
	failOn := opts.FailOn
	if failOn == "" {
		failOn = report.TierAdvisory
	}
	for _, f := range client {
		if f.Tier.Rank() <= failOn.Rank() {
			return errFindings
		}
	}
	return nil
}
