// Package turn runs prompt turns at zero tokens: the agent runs in a throwaway sandbox with
// dummy credentials, and its model is the emulator on 127.0.0.1, so it does real work — its
// own tools, streaming, permissions, cancel, usage — and reaches no provider.
//
// A backend profile (emulator profiles: data) says how to point one agent at the emulator:
// environment, files in its HOME, an authenticate method. Run starts the emulator and the
// sandbox, sets the agent up by its profile, drives the handshake and the scenarios (each a
// probe.Step that scripts the model and sends prompts), records every request the model got
// as a record event next to the wire, and analyses the whole record like any other
// (acpprobe.Analyze): the turns, their findings and the side effects come out of the record.
package turn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/clientprofile"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/sentinel"
	"github.com/acpprobe/acpprobe/transport"
)

// Options configure a turn run.
type Options struct {
	// Probe says what to launch and its budgets. Its Launcher must be a transport.Command:
	// Run moves it into the sandbox. Steps, Authenticate and Permission are set by Run.
	Probe probe.Options
	// Keys choose the backend profile (registry id, config name; Run adds the command's
	// program and npm package, and the agentInfo name a first, initialize-only handshake
	// learns when nothing else matches).
	Keys emulator.Keys
	// Backend, when set, forces the route: a dialect's generic profile ("anthropic" …), "auto"
	// (every dialect and variable), or "gateway" (the agent's gateway login).
	Backend string
	// Profiles are the backend profiles (the embedded set when nil).
	Profiles *emulator.Profiles
	// Scenarios to run (record.DefaultScenarios when empty), in record.Scenarios order.
	Scenarios []record.Scenario
	// SentinelArgv starts the stdio sentinel MCP server (the mcp scenario): a program and its
	// first arguments, ending in a call of sentinel.Main. Default: acpprobe mcp-sentinel.
	SentinelArgv []string
	// Sandbox configures the sandbox every turn runs in (KeepDir, PassEnv, Env, Net…); its
	// Workspace defaults to a fresh directory in the sandbox. With Net, Run sets its Ports
	// (the emulator's and the sentinels', served inside the agent's network namespace) and
	// NetSink (what else the agent tries is recorded), and, the sandbox running one command
	// only, learns no agentInfo name first: Keys or Backend must choose the profile.
	Sandbox sandbox.Options
	// TurnTimeout bounds one prompt turn (DefaultTurnTimeout when 0).
	TurnTimeout time.Duration
	// Budget bounds the whole run (turn --timeout): the route's first handshake, the main
	// connection and every connection a scenario opens share it, and a scenario that finds
	// it spent is reported not run, with that reason. 0: DefaultBudget. Run sets
	// Probe.Timeout to what is left of it.
	Budget time.Duration
	// Check, when set, also runs the active checks of acpprobe check on the same session,
	// before the scenarios (check --turns): the whole check then runs in the sandbox.
	Check *acpprobe.Check
	// Analyze says how the record becomes the report.
	Analyze acpprobe.AnalyzeOptions
}

// DefaultBudget is the budget of a run of n scenarios when none is given: the startup
// budget, then three turns of turnTimeout a scenario (each runs up to three prompts).
func DefaultBudget(n int, turnTimeout time.Duration) time.Duration {
	return probe.DefaultStartupTimeout + time.Duration(n*3)*turnTimeout
}

// DefaultTurnTimeout bounds one prompt turn: real agents answer a one-line turn from the
// emulator in a few seconds; a cold start of their CLI can take longer.
const DefaultTurnTimeout = 60 * time.Second

// ErrNoProfile means the route asked for has no profile (an unknown --backend): the turns
// are reported as not exercised.
var ErrNoProfile = errors.New("no backend profile for this agent")

// Run runs the turns and returns the report. The error is non-nil only when the options are
// unusable or the sandbox or emulator cannot start; an agent without a profile gives a result
// whose turns say "not exercised (no backend profile)".
func Run(ctx context.Context, o Options) (*report.Result, error) {
	cmd, ok := o.Probe.Launcher.(transport.Command)
	if !ok {
		return nil, errors.New("turn: the agent must be a command (transport.Command)")
	}
	if o.Profiles == nil {
		ps, err := emulator.LoadProfiles()
		if err != nil {
			return nil, err
		}
		o.Profiles = ps
	}
	if o.TurnTimeout <= 0 {
		o.TurnTimeout = DefaultTurnTimeout
	}
	scenarios := o.Scenarios
	if len(scenarios) == 0 {
		scenarios = record.DefaultScenarios
	}
	budget := cmp.Or(o.Budget, DefaultBudget(len(scenarios), o.TurnTimeout))
	deadline := time.Now().Add(budget)

	log := o.Probe.Log
	if log == nil {
		log = jsonrpc.NewLog()
		o.Probe.Log = log
	}
	srv, err := emulator.Start(ctx, emulator.Options{
		OnRequest:  func(r record.ModelRequestInfo) { record.ModelRequest.Emit(log, r) },
		OnResponse: func(r record.ModelResponseInfo) { record.ModelResponse.Emit(log, r) },
	})
	if err != nil {
		return nil, fmt.Errorf("turn: %w", err)
	}
	defer srv.Close()

	var hub *sentinel.Hub
	if slices.Contains(scenarios, record.ScenarioMCP) {
		so := sentinel.Options{OnEvent: func(ev record.MCPEvent) { record.MCP.Emit(log, ev) }}
		if len(o.SentinelArgv) > 0 {
			so.Command, so.Args = o.SentinelArgv[0], o.SentinelArgv[1:]
		}
		if hub, err = sentinel.Start(so); err != nil {
			return nil, fmt.Errorf("turn: MCP sentinels: %w", err)
		}
		defer hub.Close()
	}

	box, err := sandbox.New(netOptions(o.Sandbox, srv, hub))
	if err != nil {
		return nil, fmt.Errorf("turn: sandbox: %w", err)
	}
	if !box.Kept() {
		// Removed by the watchdog should this process be killed; forgotten once Close
		// (deferred after this) has removed it.
		defer transport.RemoveIfKilled(box.Dir())()
	}
	defer box.Close()

	// One inventory before the agent first runs in the sandbox (the route's first handshake
	// may run it): the side effects of all its processes count.
	baseline := acpprobe.TakeBaseline(box)
	defer baseline.Close() // Run ends its watch; this, when Run is not reached
	rctx, cancel := context.WithDeadline(ctx, deadline)
	r, err := o.chooseRoute(rctx, cmd, box, srv)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("turn: %w", err)
	}
	record.TurnRoute.Emit(log, r.info)
	po := o.Probe
	po.Launcher = acpprobe.Sandboxed(box, cmd)
	if r.client != nil { // a gateway route: the chosen profile's client (o.Probe), accepting gateway logins
		po.ClientCapabilities = clientprofile.WithGateway(o.Probe.ClientCapabilities)
	}
	sc := &scene{srv: srv, workspace: box.Workspace(), turn: o.TurnTimeout}
	var then []acpprobe.Then
	if r.ok() {
		if r.setup != nil {
			if err := r.setup.Write(); err != nil {
				return nil, fmt.Errorf("turn: %w", err)
			}
			baseline.Ours(box, r.setup.Written()...)
			c := po.Launcher.(transport.Command)
			c.Environ = r.setup.Environ(c.Environ)
			po.Launcher = c
		}
		po.Authenticate = r.login
		po.Permission = probe.PermissionReject
		us := units(scenarios, sc, po.Authenticate)
		if hub != nil {
			us = append(us, unit{step: mcpStep{hub: hub, sc: sc, open: sc.open}})
		}
		po.Steps, then = plan(us, po.Authenticate)
	} else {
		// Without a route no turn runs; what the agent does with the sentinels by itself
		// (connect, list their tools) is still observed.
		po.Steps = []probe.Step{notExercised{reason: r.info.Reason, scenarios: slices.DeleteFunc(slices.Clone(scenarios),
			func(s record.Scenario) bool { return s == record.ScenarioMCP })}}
		if hub != nil {
			po.Steps = append(po.Steps, mcpStep{hub: hub, open: sc.open})
		}
	}
	if po.Cwd == "" {
		po.Cwd = box.Workspace()
	}
	// What the route's handshake left of the budget, for every connection from here on.
	po.Timeout = max(time.Until(deadline), time.Millisecond)
	defer serveInside(ctx, box, srv, hub)()
	return acpprobe.Run(ctx, acpprobe.Options{Probe: po, Check: o.Check, Analyze: o.Analyze, Sandbox: box, Baseline: baseline, Then: then})
}

// scene is what the scenarios share: the model to script, the workspace to look in, the
// budget of one turn.
type scene struct {
	srv       *emulator.Server
	workspace string
	turn      time.Duration
}

// path is a fresh file name in the workspace for a scenario.
func (s *scene) path(name string) string {
	return filepath.Join(s.workspace, fmt.Sprintf("acpprobe-%s-%d.txt", name, os.Getpid()))
}

// loginOf is the authenticate call a setup makes: its gateway login, its auth method, or none.
func loginOf(s emulator.Setup) *probe.Authenticate {
	switch {
	case s.Gateway != nil:
		return &probe.Authenticate{MethodID: s.Gateway.Method, Meta: s.Gateway.Meta()}
	case s.Authenticate != "":
		return &probe.Authenticate{MethodID: s.Authenticate}
	}
	return nil
}
