// Package acpprobe is the library behind the acpprobe command: it probes an Agent Client
// Protocol agent, or analyses the recording of a session, and returns the whole report —
// what the agent supports, its findings against the protocol, its vendor extensions — exactly
// as `acpprobe probe --json`, `check --json` and `analyze --json` print it.
//
// There is one way from a record to a report: Analyze. Run drives a live session (through
// probe.Drive, which only records), then analyses its record with Analyze; the CLI, the tap's
// live checks, the matrix and `acpprobe analyze` of a transcript all end in Analyze too, so
// they cannot disagree.
package acpprobe

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transcript"
)

// AnalyzeOptions say how a record becomes a report.
type AnalyzeOptions struct {
	// Catalogue classifies vendor extensions (extensions.Default() when nil).
	Catalogue *extensions.Catalogue
	// Schema is the schema set the messages are validated against (see conformance.Options).
	Schema string
	// Verdict, when set, judges the findings against a tier and a baseline (acpprobe check).
	Verdict *Verdict
	// Redactor, when set, filters every frame before anything reads it (a recording made with
	// --no-redact, say). A live Run redacts as it records instead.
	Redactor *transcript.Redactor
}

// Verdict is how the findings are judged: failed when one not in the baseline is at or above
// FailOn.
type Verdict struct {
	FailOn       probe.Tier
	Baseline     []probe.BaselineEntry
	BaselinePath string
}

// Analyze turns the record of a session (a live log's frames, or a transcript's) into the
// whole report: the result derived from it, the findings of every conformance pass that
// applies to it, the vendor extension inventory, the prompt shapes and, when asked, the
// verdict. The record may hold the second connection of `check --deep` after the first; the
// tap's records are judged as sessions between an editor and an agent. The error is non-nil
// only when the options are unusable (an unknown schema set).
//
// ctx bounds the judging (see conformance.Evaluate): when it ends, Analyze returns at once
// with what was judged, and Result.Coverage names the passes that did not judge the whole
// record.
func Analyze(ctx context.Context, frames []jsonrpc.Frame, o AnalyzeOptions) (*probe.Result, error) {
	if o.Redactor != nil {
		red := make([]jsonrpc.Frame, len(frames))
		for i, f := range frames {
			red[i] = o.Redactor.Frame(f)
		}
		frames = red
	}
	main, deep := record.Split(frames)
	x := record.New(main)
	r := probe.Derive(x, o.Catalogue)
	out, err := conformance.Evaluate(ctx, x, r, conformance.Options{Schema: o.Schema, Deep: deep, Catalogue: o.Catalogue})
	if err != nil {
		return nil, err
	}
	r.Findings = out.Findings
	r.Extensions = out.Extensions
	r.PromptShapes = out.PromptShapes
	r.Turns = out.Turns
	if len(out.Unjudged) > 0 {
		if r.Coverage == nil {
			r.Coverage = &probe.Coverage{}
		}
		r.Coverage.Unjudged = out.Unjudged
		note := fmt.Sprintf("the analysis ran out of time: these passes did not judge the whole record (their findings hold what they judged before): %s", strings.Join(out.Unjudged, ", "))
		if r.Coverage.Note != "" {
			note = r.Coverage.Note + "; " + note
		}
		r.Coverage.Note = note
	}
	if o.Verdict != nil {
		conformance.Judge(r, o.Verdict.FailOn, o.Verdict.Baseline, o.Verdict.BaselinePath)
	}
	return r, nil
}

// Options configure Run.
type Options struct {
	// Probe says which agent to launch and how to drive it (Launcher is required). When its
	// Log is nil, Run records into a new log that redacts secrets (unless NoRedact).
	Probe probe.Options
	// Check, when set, also runs the active checks of `acpprobe check`.
	Check *Check
	// Analyze says how the record becomes the report.
	Analyze AnalyzeOptions
	// NoRedact keeps secrets in the record and the report (only when Run makes the log).
	NoRedact bool
}

// Check chooses the active checks of `acpprobe check`: an unknown extension method and
// notification and invalid params always, the rest on request.
type Check struct {
	PromptShapes bool // send prompt shapes no agent can start a turn on (--prompt-shapes)
	AllowPrompt  bool // send one valid prompt and cancel it at once; may spend tokens (--allow-prompt)
	// Deep opens a second, initialize-only connection asking for DeepVersion, to check
	// version negotiation (--deep).
	Deep bool
}

// DeepVersion is the protocol version the --deep connection asks for: no agent supports it.
const DeepVersion = 999

// Run probes one agent and returns the whole report, as `acpprobe probe --json` (or, with
// Check, `acpprobe check --json`) prints it. The error is non-nil only when the options are
// unusable; everything that goes wrong with the agent is in Result.Error. Cancelling ctx
// interrupts the probe and still tears the agent down; the analysis then judges nothing more.
// The analysis gets what is left of the total budget (Probe.Timeout), at least a second.
func Run(ctx context.Context, o Options) (*probe.Result, error) {
	start := time.Now()
	po := o.Probe
	if po.Log == nil {
		po.Log = jsonrpc.NewLog()
		if !o.NoRedact && po.Launcher != nil {
			cat := o.Analyze.Catalogue
			if cat == nil {
				cat = extensions.Default()
			}
			red := transcript.NewRedactor(transcript.SecretArgs(po.Launcher.CommandLine()), os.Environ(), cat.CredentialKeys())
			po.Log.SetFilter(red.Frame)
		}
	}
	if o.Check != nil {
		// The active checks first, then the caller's own steps (the turn scenarios of
		// check --turns).
		po.Steps = append(conformance.Steps(conformance.StepOptions{PromptShapes: o.Check.PromptShapes, AllowPrompt: o.Check.AllowPrompt}), po.Steps...)
		po.WaitForExit = true // check judges how the agent leaves when its stdin closes
	}
	log, err := probe.Drive(ctx, po)
	if err != nil {
		return nil, err
	}
	if o.Check != nil && o.Check.Deep && ctx.Err() == nil {
		deep := po
		deep.ProtocolVersion = DeepVersion
		deep.InitializeOnly = true
		deep.Steps = nil
		_, _ = probe.Drive(ctx, deep) // the same log: the record keeps both connections
	}
	actx, cancel := context.WithTimeout(ctx, analysisBudget(po.Timeout, time.Since(start)))
	defer cancel()
	return Analyze(actx, log.Frames(), o.Analyze)
}

// analysisBudget is the time the analysis of a live probe gets: what is left of the total
// budget (timeout, probe.DefaultTimeout when 0) after spent, and at least a second.
func analysisBudget(timeout, spent time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = probe.DefaultTimeout
	}
	return max(timeout-spent, time.Second)
}
