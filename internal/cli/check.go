package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/turn"
)

// CheckOptions are the options of acpprobe check: a probe with the active checks and a
// verdict (ProbeOptions.Check and Report.Verdict set), or the list of checks.
type CheckOptions struct {
	ProbeOptions
	// List prints the checks (id, tier, title) instead of probing.
	List bool
	// AllowAuthRequired lets the verdict alone decide the exit code of an agent that needs
	// authentication (--allow-auth-required): 0 when it passed, instead of 4.
	AllowAuthRequired bool
	// Turns, when set, also runs the prompt-turn scenarios (--turns): the whole check then
	// runs in the sandbox, with the model emulator as the agent's model.
	Turns *turn.Options
}

func newCheckOptions(args []string, stdio Stdio) (*CheckOptions, error) {
	fs := newFlagSet("check")
	var pf probeFlags
	pf.register(fs, jsonFlag|commandFlag|agentsFlag|budgetFlags|transcriptFlag)
	var iso isolateFlags
	iso.register(fs, record.LevelNone)
	list := fs.Bool("list", false, "list the checks (id, tier, title) and exit")
	schemaName := fs.String("schema", "", "schema set: "+strings.Join(schema.Names(), ", ")+" (default "+schema.Default+"; v2 when protocol 2 was negotiated)")
	deep := fs.Bool("deep", false, fmt.Sprintf("also open a second, short connection asking for protocolVersion %d to check version negotiation", acpprobe.DeepVersion))
	shapes := fs.Bool("prompt-shapes", false, "send session/prompt shapes no agent can start a turn on and infer the accepted content blocks")
	allowPrompt := fs.Bool("allow-prompt", false, "send one valid text prompt and cancel it at once (MAY SPEND MODEL TOKENS)")
	failOn := fs.String("fail-on", "mandatory", "exit 1 when a finding not in the baseline is at or above this tier: mandatory, capability, advisory, info")
	allowAuth := fs.Bool("allow-auth-required", false, "when the agent needs authentication and that is the only failure, exit by the verdict (0 when it passed) instead of 4; for CI without credentials")
	baselinePath := fs.String("baseline", "", "file of known finding ids with a reason each (JSON {\"known\":[{\"id\",\"reason\"}]} or lines \"id reason\")")
	turns := fs.Bool("turns", false, "also run real prompt turns at zero tokens and the MCP sentinels (see acpprobe turn): the whole check then runs in a sandbox (env+home, or --isolate=net: the emulator and the sentinels are served inside its network namespace; never --isolate=off), the model emulator as the agent's model")
	var tf turnFlags
	tf.register(fs, false)
	var cf clientFlags
	cf.register(fs, false)
	cl, err := parseArgs(fs, args, "acpprobe check [flags] (AGENT-ID | -- <agent command> [args...])", stdio.Out)
	if err != nil {
		return nil, err
	}
	if *list {
		var others []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "list" && f.Name != "json" {
				others = append(others, "--"+f.Name)
			}
		})
		if len(others) > 0 || len(fs.Args()) > 0 {
			return nil, usagef("--list lists the checks and probes nothing: it takes only --json (got %s)", strings.Join(append(others, fs.Args()...), " "))
		}
		return &CheckOptions{ProbeOptions: ProbeOptions{IO: stdio, JSON: pf.json}, List: true}, nil
	}
	verdict, err := verdictOf(*failOn, *baselinePath)
	if err != nil {
		return nil, err
	}
	if *schemaName != "" {
		if _, err := schema.Load(*schemaName); err != nil {
			return nil, usagef("--schema: %v", err)
		}
	}
	judging := checkJudging{check: acpprobe.Check{Deep: *deep, PromptShapes: *shapes, AllowPrompt: *allowPrompt},
		schema: *schemaName, verdict: verdict}
	target, err := pf.targetOptions(fs, cl)
	if err := probeable(err, pf.json); err != nil {
		return nil, withJSON(err, pf.json)
	}
	if !*turns {
		if set := turnFlagsSet(fs); len(set) > 0 {
			return nil, usagef("%s configure the prompt turns: they need --turns", strings.Join(set, ", "))
		}
		opts := &CheckOptions{ProbeOptions: *pf.probeOptions(stdio, target), AllowAuthRequired: *allowAuth}
		if err := iso.apply(&opts.ProbeOptions, fs); err != nil {
			return nil, withJSON(err, pf.json)
		}
		if err := cf.apply(&opts.ProbeOptions, fs); err != nil {
			return nil, err
		}
		return opts.finish(judging), nil
	}
	// With --turns the whole check runs in the turns' sandbox.
	box, err := iso.turnSandbox(&target, flagGiven(fs, "cwd"))
	if err != nil {
		return nil, err
	}
	opts := &CheckOptions{ProbeOptions: *pf.probeOptions(stdio, target), AllowAuthRequired: *allowAuth}
	opts.Recording.Secrets = append(opts.Recording.Secrets, iso.passedValues()...)
	to, err := tf.options(target, pf.env, box)
	to.Budget = pf.runBudget(fs)
	if err != nil {
		return nil, err
	}
	if len(to.Scenarios) == 0 {
		to.Scenarios = record.Scenarios // check --turns: every scenario, the MCP sentinels too
	}
	opts.Turns = &to
	if err := cf.apply(&opts.ProbeOptions, fs); err != nil {
		return nil, err
	}
	return opts.finish(judging), nil
}

// checkJudging is what check's flags choose beyond the probe: the active checks, the schema
// set and the verdict.
type checkJudging struct {
	check   acpprobe.Check
	schema  string
	verdict *acpprobe.Verdict
}

// finish sets the active checks, the schema set and the verdict.
func (opts *CheckOptions) finish(j checkJudging) *CheckOptions {
	opts.Check = &j.check
	opts.Report.Schema = j.schema
	opts.Report.Verdict = j.verdict
	return opts
}

// verdictOf is the verdict of --fail-on and --baseline.
func verdictOf(failOn, baselinePath string) (*acpprobe.Verdict, error) {
	tier, err := conformance.ParseTier(failOn)
	if err != nil {
		return nil, usagef("--fail-on: %v", err)
	}
	verdict := &acpprobe.Verdict{FailOn: tier, BaselinePath: baselinePath}
	if baselinePath != "" {
		if verdict.Baseline, err = conformance.LoadBaseline(baselinePath); err != nil {
			return nil, readError("--baseline", err)
		}
	}
	return verdict, nil
}

func checkRun(ctx context.Context, opts *CheckOptions) error {
	if opts.List {
		return listChecks(opts.IO.Out, opts.JSON)
	}
	if opts.Turns != nil {
		return turnRun(ctx, &TurnOptions{ProbeOptions: opts.ProbeOptions, Turn: *opts.Turns, AllowAuthRequired: opts.AllowAuthRequired})
	}
	return exitByVerdict(probeRun(ctx, &opts.ProbeOptions), opts.AllowAuthRequired)
}

// exitByVerdict is err, the error of a judged report, with an agent that needs authentication
// judged by the verdict alone when on (--allow-auth-required): nil when the only failure was
// auth_required and the verdict passed. A failed verdict already exits 1 (resultCode), and
// every other failure keeps its code.
func exitByVerdict(err error, on bool) error {
	var re *resultError
	if !on || !errors.As(err, &re) {
		return err
	}
	if r := re.r; r.Error != nil && r.Error.Code == report.ErrAuthRequired && r.Verdict != nil && !r.Verdict.Failed {
		return nil
	}
	return err
}

func listChecks(w io.Writer, asJSON bool) error {
	var err error
	if asJSON {
		err = render.JSON(w, conformance.Checks())
	} else {
		err = render.CheckList(render.ScreenOf(w, os.Getenv), conformance.Checks())
	}
	if err != nil {
		return writeError("the list of checks", err)
	}
	return nil
}
