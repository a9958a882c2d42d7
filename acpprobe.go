// Package acpprobe is the library behind the acpprobe command: it probes an Agent Client
// Protocol agent, or analyses the recording of a session, and returns the whole report —
// what the agent supports, its findings against the protocol, its vendor extensions — exactly
// as `acpprobe probe --json`, `check --json` and `analyze --json` print it.
//
// There is one way from a record to a report: Analyze. Run drives a live session (through
// probe.Drive, which only records), then analyses its record with Analyze; the CLI, the tap's
// live checks (Live, which judges a session window by window as it is recorded), the matrix
// and `acpprobe analyze` of a transcript all end in Analyze too, so they cannot disagree.
package acpprobe

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transcript"
)

// AnalyzeOptions say how a record becomes a report.
type AnalyzeOptions struct {
	// Catalogue classifies vendor extensions (extensions.Default() when nil).
	Catalogue *extensions.Catalogue
	// Schema is the schema set the messages are validated against (see derive.Options).
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
	FailOn       report.Tier
	Baseline     []report.BaselineEntry
	BaselinePath string
}

// Analyze turns the record of a session (a live log's frames, or a transcript's) into the
// whole report: the result derived from it, the findings of every conformance pass that
// applies to it, the vendor extension inventory, the prompt shapes and, when asked, the
// verdict. The record may hold the extra connections of `check` after the main one (the fork
// probe, --deep; see record.Split); the tap's records are judged as sessions between an
// editor and an agent. The error is non-nil
// only when the options are unusable (an unknown schema set).
//
// ctx bounds deriving and judging (see derive.Run and conformance.Evaluate): when it
// ends, Analyze returns at once with what was derived and judged, and Result.Coverage says
// which totals are partial and names the passes that did not judge the whole record.
func Analyze(ctx context.Context, frames []jsonrpc.Frame, o AnalyzeOptions) (*report.Result, error) {
	return analyze(ctx, frames, o, 0)
}

// analyze is Analyze judging frame by frame only the frames after seq from (all when 0); the
// earlier ones are context (see derive.Options.From and Live).
func analyze(ctx context.Context, frames []jsonrpc.Frame, o AnalyzeOptions, from int64) (*report.Result, error) {
	if o.Redactor != nil {
		red := make([]jsonrpc.Frame, len(frames))
		for i, f := range frames {
			red[i] = o.Redactor.Frame(f)
		}
		frames = red
	}
	facts, err := derive.Run(ctx, record.Split(frames), derive.Options{Catalogue: o.Catalogue, Schema: o.Schema, From: from})
	if err != nil {
		return nil, err
	}
	out := conformance.Evaluate(ctx, facts)
	r := facts.Result
	r.Findings, r.Turns, r.Extensions = out.Findings, out.Turns, facts.Inventory()
	if len(out.Unjudged) > 0 {
		if r.Coverage == nil {
			r.Coverage = &report.Coverage{}
		}
		r.Coverage.Unjudged = out.Unjudged
	}
	if o.Verdict != nil {
		conformance.Judge(r, o.Verdict.FailOn, o.Verdict.Baseline, o.Verdict.BaselinePath)
	}
	r.Coverage.Explain()
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

	// Isolate, when set, runs the agent in a sandbox made from these options for this run,
	// removed after it unless KeepDir is set (--isolate, --keep-sandbox, --pass-env). The
	// command's own Env joins the sandbox's Env (given on purpose); a Cwd left empty becomes
	// the sandbox's workspace.
	Isolate *sandbox.Options
	// Sandbox, when set, is a sandbox the caller made (and set up, and closes after Run) to
	// run the agent in; Isolate is then not used. Either way the report's sideEffects say the
	// level actually in force: an agent that is not a process (transport.Pipe) is never
	// isolated, and the report does not claim it was.
	Sandbox *sandbox.Sandbox
	// Baseline, with Sandbox, is the inventory the side effects are measured from, taken
	// (TakeBaseline) before the caller first ran the agent in it (turn's first handshake): the
	// side effects of every agent process of the run then count, not only those of Run's.
	Baseline *Baseline
	// Then are connections opened after the main one (and after check's own), in the same
	// sandbox and log, each named by its purpose (record.Split tells them apart): the turn
	// package's sessions scenario loads, closes and resumes the main session on fresh agent
	// processes this way.
	Then []Then
	// AuthAB runs the agent a second time under the other identity — the user's own, or an
	// empty one in a sandbox — and combines every auth signal of both into Result.AuthAB
	// (--auth-ab). Neither run calls authenticate or logout.
	AuthAB bool
}

// Check chooses the active checks of `acpprobe check`: an unknown extension method and
// notification and invalid params always, and a fork of a session that does not exist, on a
// short connection of its own after the main one, when the agent supports session/fork; the
// rest on request.
type Check struct {
	PromptShapes bool // send prompt shapes no agent can start a turn on (--prompt-shapes)
	AllowPrompt  bool // send one valid prompt and cancel it at once; may spend tokens (--allow-prompt)
	// Deep opens a second, initialize-only connection asking for DeepVersion, to check
	// version negotiation (--deep).
	Deep bool
}

// Then is a connection Run opens after the main one: initialize only, then the steps Steps
// returns given the record so far, split into its connections (nil: the connection is not
// opened), and the agent ended at once. Purpose names it in its spawn event.
type Then struct {
	Purpose record.Purpose
	Steps   func(sofar record.Connections) []probe.Step
}

// errNotProcess: isolation needs an agent that runs as a process of its own.
var errNotProcess = errors.New("the agent is not a process (it runs inside this one)")

// DeepVersion is the protocol version the --deep connection asks for: no agent supports it.
const DeepVersion = 999

// Run probes one agent and returns the whole report, as `acpprobe probe --json` (or, with
// Check, `acpprobe check --json`) prints it. The error is non-nil only when the options are
// unusable (or the sandbox asked for cannot be made); everything that goes wrong with the
// agent is in Result.Error. Cancelling ctx interrupts the probe and still tears the agent
// down; the analysis then judges nothing more. The analysis gets what is left of the total
// budget (Probe.Timeout), at least a second.
//
// An agent launched as a process runs with the browser shims first on its PATH, and what it
// did to the machine is in Result.SideEffects: under Isolate or Sandbox, in its sandbox;
// otherwise in the places agents keep their state under the real HOME.
func Run(ctx context.Context, o Options) (*report.Result, error) {
	start := time.Now()
	po := o.Probe
	if po.Log == nil {
		po.Log = newLog(po.Launcher, o)
	}
	user := po // the run as asked, before it moves into a sandbox (--auth-ab's user identity)
	ob, err := observe(o, &po)
	if err != nil {
		return nil, err
	}
	if ob != nil {
		defer ob.closeWatch() // after close, the last
		defer ob.close()
	}
	if o.Check != nil {
		// The active checks first, then the caller's own steps (the turn scenarios of
		// check --turns).
		po.Steps = append(probe.CheckSteps(probe.StepOptions{PromptShapes: o.Check.PromptShapes, AllowPrompt: o.Check.AllowPrompt,
			AuthStatus: o.AuthAB}), po.Steps...)
		po.WaitForExit = true // check judges how the agent leaves when its stdin closes
	} else if o.AuthAB {
		po.Steps = append(slices.Clone(po.Steps), probe.AuthStatusStep)
	}
	stopNetwork := ob.serveNetwork(ctx)
	// Every connection of the run shares the one budget: an extra connection gets what the
	// ones before it left, and none opens once it is spent (its steps are recorded as skipped).
	budget := runBudget{deadline: start.Add(cmp.Or(po.Timeout, probe.DefaultTimeout))}
	log, err := probe.Drive(ctx, po)
	if err != nil {
		stopNetwork()
		return nil, err
	}
	if o.Check != nil {
		if steps := forkProbe(ctx, log); steps != nil {
			budget.drive(ctx, log, extraConnection(po, record.PurposeForkProbe, steps))
		}
		if o.Check.Deep && ctx.Err() == nil {
			deep := extraConnection(po, record.PurposeDeep, nil)
			deep.ProtocolVersion = DeepVersion
			budget.drive(ctx, log, deep)
		}
	}
	for _, t := range o.Then {
		if steps := t.Steps(record.Split(log.Frames())); steps != nil {
			budget.drive(ctx, log, extraConnection(po, t.Purpose, steps))
		}
	}
	stopNetwork()
	if ob != nil {
		ob.finish(log) // and removes the sandbox, saying what it could not
		// Nothing reads the shims any more: they are removed while the analysis runs (the
		// deferred close waits for it).
		go ob.close()
	} else if o.Isolate != nil || o.Sandbox != nil {
		recordNotIsolated(log)
	}
	if o.AuthAB && ctx.Err() == nil {
		authOther(ctx, o, user, ob, log)
	}
	actx, cancel := context.WithTimeout(ctx, analysisBudget(po.Timeout, time.Since(start)))
	defer cancel()
	return Analyze(actx, log.Frames(), o.Analyze)
}

// runBudget is the deadline every connection of one run shares (Probe.Timeout from the start).
type runBudget struct{ deadline time.Time }

// drive opens the extra connection po with what is left of the budget; when none is left, or
// the run was interrupted, it opens none and records its steps as skipped, with the reason,
// so that what they would have shown is reported as not run rather than missing.
func (b runBudget) drive(ctx context.Context, log *jsonrpc.Log, po probe.Options) {
	left := time.Until(b.deadline)
	if ctx.Err() == nil && left > 0 {
		po.Timeout = left
		_, _ = probe.Drive(ctx, po)
		return
	}
	why := "the run's budget (--timeout) was spent before this connection could open"
	if ctx.Err() != nil {
		why = "interrupted before this connection could open"
	}
	for _, s := range po.Steps {
		record.StepSkipped.Emit(log, record.StepInfo{Name: s.Name(), Reason: why})
	}
}

// extraConnection is the options of a short connection opened after the main one, into
// the same log (the record keeps every connection; record.Split tells them apart by purpose):
// initialize only, then steps, and the agent ended at once, since how it leaves is not judged.
func extraConnection(po probe.Options, purpose record.Purpose, steps []probe.Step) probe.Options {
	po.Purpose = purpose
	po.InitializeOnly = true
	po.Steps = steps
	po.WaitForExit = false
	return po
}

// forkProbe is the steps of check's fork-probe connection (probe.ForkProbeSteps) when the main
// connection found session/fork supported; nil when it did not, or the probe was interrupted.
func forkProbe(ctx context.Context, log *jsonrpc.Log) []probe.Step {
	if ctx.Err() != nil || derive.Connection(ctx, record.New(log.Frames()), nil).Methods[acp.MethodSessionFork].Support != report.Supported {
		return nil
	}
	return probe.ForkProbeSteps
}

// analysisBudget is the time the analysis of a live probe gets: what is left of the total
// budget (timeout, probe.DefaultTimeout when 0) after spent, and at least a second.
func analysisBudget(timeout, spent time.Duration) time.Duration {
	if timeout <= 0 {
		timeout = probe.DefaultTimeout
	}
	return max(timeout-spent, time.Second)
}
