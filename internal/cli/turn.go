package cli

import (
	"context"
	"flag"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/turn"
)

// TurnOptions are the options of acpprobe turn (and check --turns): real prompt turns at zero
// tokens, the agent in a sandbox with the model emulator as its model.
type TurnOptions struct {
	ProbeOptions
	// Turn says which scenarios, which backend profile, and the sandbox; its Probe, Check and
	// Analyze are set from ProbeOptions when it runs.
	Turn turn.Options
	// AllowAuthRequired: see CheckOptions (check --turns).
	AllowAuthRequired bool
}

// turnFlags are the flags of the prompt-turn scenarios, shared by turn, check --turns and
// matrix --turns.
type turnFlags struct {
	scenarios   multiFlag
	backend     string
	profilesDir string
	turnTimeout durationFlag
	// mcp adds the mcp scenario to the default ones (turn and matrix --mcp; check --turns
	// always runs it).
	mcp bool
}

// register defines the turn flags on fs; withMCP adds --mcp.
func (t *turnFlags) register(fs *flag.FlagSet, withMCP bool) {
	fs.Var(&t.scenarios, "scenario", "run only this scenario (repeatable; comma lists work): completion, prompt-shapes, model-truth, permission, cancel, mcp (default: all but mcp)")
	if withMCP {
		fs.BoolVar(&t.mcp, "mcp", false, "also offer sentinel MCP servers (stdio, http, sse) and report how far the agent gets with each: delivered, connected, listed, visible to the model, called, result returned")
	}
	fs.StringVar(&t.backend, "backend", "", "force the route to the emulator instead of choosing one: a model API's generic profile (anthropic, openai-responses, openai-chat, gemini), auto (every one of them on one port), or gateway (the agent's own gateway login)")
	fs.StringVar(&t.profilesDir, "profiles", "", "directory of extra backend profiles (JSON, one per agent) merged over the built-in ones")
	t.turnTimeout.d = turn.DefaultTurnTimeout
	fs.Var(&t.turnTimeout, "turn-timeout", "budget of one prompt turn")
}

// turnFlagsSet names the turn flags given on fs (as --name), for a command where they need
// --turns.
func turnFlagsSet(fs *flag.FlagSet) []string {
	var set []string
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "scenario", "backend", "profiles", "turn-timeout", "mcp":
			set = append(set, "--"+f.Name)
		}
	})
	return set
}

// profileKeys are the keys the agent's id gives the backend profiles: an agents config entry's
// name is a config name, any other id a registry id (so a report says which of them chose the
// profile: "config name codex", "registry id codex-acp").
func profileKeys(target probe.Options) emulator.Keys {
	if target.AgentSource == string(registry.SourceConfig) {
		return emulator.Keys{ConfigName: target.AgentID}
	}
	return emulator.Keys{RegistryID: target.AgentID}
}

// options are the turn options the flags say, for the agent of target (its registry or config
// id chooses the backend profile), in the sandbox box (see isolateFlags.turnSandbox). The
// agent's --env values go to the sandbox, which refuses the variables it sets itself.
func (t *turnFlags) options(target probe.Options, env []string, box sandbox.Options) (turn.Options, error) {
	box.Env = env
	o := turn.Options{Backend: t.backend, TurnTimeout: t.turnTimeout.d,
		Keys:    profileKeys(target),
		Sandbox: box}
	for _, list := range t.scenarios {
		for _, name := range strings.Split(list, ",") {
			s, err := record.ParseScenario(strings.TrimSpace(name))
			if err != nil {
				return o, usagef("--scenario: %v", err)
			}
			o.Scenarios = append(o.Scenarios, s)
		}
	}
	if t.mcp {
		if len(o.Scenarios) == 0 {
			o.Scenarios = slices.Clone(record.DefaultScenarios)
		}
		if !slices.Contains(o.Scenarios, record.ScenarioMCP) {
			o.Scenarios = append(o.Scenarios, record.ScenarioMCP)
		}
	}
	switch o.Backend {
	case "", string(emulator.Anthropic), string(emulator.OpenAIResponses), string(emulator.OpenAIChat), string(emulator.Gemini), string(emulator.Auto), turn.BackendGateway:
	default:
		return o, usagef("--backend %q: want anthropic, openai-responses, openai-chat, gemini, auto or gateway", t.backend)
	}
	if t.profilesDir != "" {
		ps, err := emulator.LoadProfilesDir(t.profilesDir)
		if err != nil {
			return o, readError("--profiles", err)
		}
		o.Profiles = ps
	}
	return o, nil
}

func newTurnOptions(args []string, stdio Stdio) (*TurnOptions, error) {
	fs := newFlagSet("turn")
	var pf probeFlags
	var tf turnFlags
	var iso isolateFlags
	pf.register(fs, jsonFlag|commandFlag|agentsFlag|budgetFlags|transcriptFlag)
	iso.registerTurn(fs)
	tf.register(fs, true)
	var cf clientFlags
	cf.register(fs, false)
	failOn := fs.String("fail-on", "mandatory", "exit 1 when a finding is at or above this tier: mandatory, capability, advisory, info")
	cl, err := parseArgs(fs, args, "acpprobe turn [flags] (AGENT-ID | -- <agent command> [args...])", stdio.Out)
	if err != nil {
		return nil, err
	}
	verdict, err := verdictOf(*failOn, "")
	if err != nil {
		return nil, err
	}
	target, err := pf.targetOptions(fs, cl)
	if err := probeable(err, pf.json); err != nil {
		return nil, withJSON(err, pf.json)
	}
	box, err := iso.turnSandbox(&target, flagGiven(fs, "cwd"))
	if err != nil {
		return nil, err
	}
	opts := &TurnOptions{ProbeOptions: *pf.probeOptions(stdio, target)}
	opts.Recording.Secrets = append(opts.Recording.Secrets, iso.passedValues()...)
	opts.Report.Verdict = verdict
	if opts.Turn, err = tf.options(target, pf.env, box); err != nil {
		return nil, err
	}
	opts.Turn.Budget = pf.runBudget(fs)
	if err := cf.apply(&opts.ProbeOptions, fs); err != nil {
		return nil, err
	}
	return opts, nil
}

// turnRun runs the scenarios in the sandbox (after the active checks, for check --turns),
// recording the session with the model's requests (into a transcript when asked), and
// reports it like a check.
func turnRun(ctx context.Context, opts *TurnOptions) error {
	err := opts.recorded(ctx, "turn", func(target probe.Options) (*report.Result, error) {
		o := opts.Turn
		o.Probe, o.Check, o.Analyze = target, opts.Check, opts.Report
		return turn.Run(ctx, o)
	})
	return exitByVerdict(err, opts.AllowAuthRequired)
}
