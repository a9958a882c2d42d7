package turn_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

// runNet runs scenarios against the model persona at the net level, its profile chosen by keys.
func runNet(t *testing.T, keys emulator.Keys, scenarios ...record.Scenario) (*report.Result, *jsonrpc.Log) {
	t.Helper()
	if c := sandbox.Available(); !c.Net {
		t.Skipf("the net level is not available here: %s", c.NetUnavailable)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := jsonrpc.NewLog()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{
			Launcher: transport.Command{Argv: []string{exe}, Env: []string{"ACPPROBE_TURN_AGENT=--persona model", "GORACE=atexit_sleep_ms=0"}},
			Log:      log, Timeout: 60 * time.Second, Grace: time.Second,
		},
		Keys:        keys,
		Scenarios:   scenarios,
		Sandbox:     sandbox.Options{Parent: t.TempDir(), Net: true},
		TurnTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, r)
	if se := r.SideEffects; se == nil || se.Isolation.Level != record.LevelNet || !se.Network.Observed {
		t.Fatalf("side effects %+v, want the net level with the network sink", se)
	}
	return r, log
}

// At the net level the agent's loopback is its own, and the model and the sentinels are still
// there: the emulator and the three sentinels are served on the listeners the sandbox opens
// inside at their ports. A completion turn and every MCP milestone pass, no model request is
// lost, and the network sink saw nothing else (the persona reaches for nothing else).
func TestNetLevelTurns(t *testing.T) {
	r, log := runNet(t, emulator.Keys{AgentName: "acptest-model"}, record.ScenarioCompletion, record.ScenarioMCP)
	if tr := turnOf(t, r, record.ScenarioCompletion); tr.Outcome != report.TurnPassed || tr.Runs[0].ModelRequests != 1 || tr.Runs[0].Text != record.TurnReply {
		t.Errorf("completion %s (%s), runs %+v: want passed, one model request, the scripted reply", tr.Outcome, tr.Reason, tr.Runs)
	}
	for tr, m := range mcpOf(t, r) {
		if got := milestones(m); got != "yyyyyyy" {
			t.Errorf("%s: milestones %s, want every one (reached through the handed-over listener)", tr, got)
		}
	}
	requests := 0
	for _, f := range log.Frames() {
		if _, ok := record.ModelRequest.Decode(f); ok {
			requests++
		}
	}
	if requests != 7 { // the completion turn, and per sentinel a call of its tool and the result
		t.Errorf("%d model requests recorded, want 7: the completion's, and two per MCP turn", requests)
	}
	if n := r.SideEffects.Network; len(n.Lookups) != 0 || len(n.Connects) != 0 {
		t.Errorf("network %+v, want nothing beyond the emulator and the sentinels", n)
	}
}

// At the net level only the sandbox's first command gets the listeners, so no initialize-only
// handshake learns the agent's name or its gateway login first: an agent its names do not
// match runs on the auto route, and the report says which dialect it spoke.
func TestNetLevelAutoRoute(t *testing.T) {
	r, _ := runNet(t, emulator.Keys{}, record.ScenarioCompletion)
	if r.Route == nil || r.Route.Kind != record.RouteAuto || !slices.Equal(r.Route.Dialects, []string{"anthropic"}) {
		t.Fatalf("route %+v, want auto, the agent speaking anthropic", r.Route)
	}
	if tr := turnOf(t, r, record.ScenarioCompletion); tr.Outcome != report.TurnPassed {
		t.Errorf("completion %s (%s), want passed on the auto route", tr.Outcome, tr.Reason)
	}
}
