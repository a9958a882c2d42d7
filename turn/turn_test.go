package turn_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/sentinel"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

func TestMain(m *testing.M) {
	sandbox.Init()
	if len(os.Args) > 1 && os.Args[1] == "mcp-sentinel" { // the stdio sentinel the agent starts
		os.Exit(sentinel.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("ACPPROBE_TURN_AGENT") != "" {
		os.Exit(acptestMain())
	}
	os.Exit(m.Run())
}

// An agent no backend profile matches, and that offers no gateway login, runs on the auto
// route: every dialect on one port, every variable the profiles know. An agent that still never
// calls the model has every scenario not run, and the reason names the route and how to choose
// another; the handshake happened, in the sandbox.
func TestNoProfileRunsOnAuto(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := jsonrpc.NewLog()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{
			Launcher: transport.Command{Argv: []string{exe}, Env: []string{"ACPPROBE_TURN_AGENT=--persona minimal", "GORACE=atexit_sleep_ms=0"}},
			Log:      log, Timeout: 20 * time.Second, Grace: time.Second,
		},
		Scenarios: []record.Scenario{record.ScenarioCompletion, record.ScenarioPermission},
		Sandbox:   sandbox.Options{Parent: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.ProtocolVersion == nil {
		t.Fatalf("no handshake: %+v", r.Error)
	}
	if r.Route == nil || r.Route.Kind != record.RouteAuto || len(r.Route.Dialects) != 0 {
		t.Fatalf("route %+v, want auto, and no dialect used", r.Route)
	}
	if !slices.ContainsFunc(r.Route.Env, func(e record.EnvSetting) bool { return e.Name == "ANTHROPIC_BASE_URL" }) {
		t.Errorf("route env %+v, want every profile's base-URL variable (ANTHROPIC_BASE_URL among them)", r.Route.Env)
	}
	for _, s := range []record.Scenario{record.ScenarioCompletion, record.ScenarioPermission} {
		tr := turnOf(t, r, s)
		if tr.Outcome != report.TurnNotRun || !strings.Contains(tr.Reason, "never called the model emulator in this run: the auto route") || !strings.Contains(tr.Reason, "--backend") {
			t.Errorf("scenario %s: %s %q, want not run: the auto route did not take, and how to choose another", s, tr.Outcome, tr.Reason)
		}
	}
	// The agent ran in the sandbox's workspace, not here.
	if wd, _ := os.Getwd(); r.Agent.Cwd == wd || !strings.Contains(r.Agent.Cwd, "acpprobe-sandbox-") {
		t.Errorf("the agent's cwd %s is not the sandbox's workspace", r.Agent.Cwd)
	}
}
