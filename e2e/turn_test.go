package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

// turnScenarios are the scenarios the suite runs on every pinned agent (issue 15): completion,
// model truth, permission and cancel, offline, against the model emulator.
var turnScenarios = []probe.Scenario{probe.ScenarioCompletion, probe.ScenarioModels, probe.ScenarioPermission, probe.ScenarioCancel}

// turnsOf runs the turn scenarios on argv (turn.Run: its own sandbox, its own emulator) and
// returns the report; it fails the test when a scenario did not run.
func turnsOf(t *testing.T, argv ...string) (*probe.Result, map[probe.Scenario]probe.Turn) {
	t.Helper()
	log := jsonrpc.NewLog()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{Launcher: transport.Command{Argv: argv}, Log: log, Timeout: 4 * probeTimeout,
			StartupTimeout: startupTimeout, RequestTimeout: requestTimeout},
		Scenarios: turnScenarios,
	})
	if err != nil {
		t.Fatal(err)
	}
	turns := map[probe.Scenario]probe.Turn{}
	for _, tr := range r.Turns {
		turns[probe.Scenario(tr.Scenario)] = tr
		t.Logf("%s: %s %s %+v", tr.Scenario, tr.Outcome, tr.Reason, tr.Runs)
	}
	for _, f := range r.Findings {
		t.Logf("finding %s %s [seq %d]: %s", f.Tier, f.ID, f.Seq, f.Message)
	}
	for _, s := range turnScenarios {
		if tr, ok := turns[s]; !ok || tr.Outcome == probe.TurnNotRun {
			t.Fatalf("%s did not run: %+v (error %+v)", s, tr, r.Error)
		}
	}
	// Zero tokens by construction: every model request reached the emulator with the dummy
	// key the profile gave the agent, never another credential.
	requests := 0
	for _, f := range log.Frames() {
		if req, ok := record.ModelRequest.Decode(f); ok && req.Endpoint == "generate" {
			requests++
			if req.Credential != "dummy" {
				t.Errorf("model request %d (%s %s) carried credential %q, want the dummy key", req.Seq, req.Method, req.Path, req.Credential)
			}
		}
	}
	if requests == 0 {
		t.Error("no model request reached the emulator")
	}
	return r, turns
}

// turnFindings are the ids of the turn findings of a report.
func turnFindings(r *probe.Result) []string {
	var ids []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.ID, "turn.") {
			ids = append(ids, f.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// completes asserts the completion scenario: the reply in agent_message_chunk, end_turn, at
// least one model request of the named model family.
func completes(t *testing.T, tr probe.Turn, family string) {
	t.Helper()
	run := tr.Runs[0]
	check(t, "completion outcome", tr.Outcome, probe.TurnPassed)
	check(t, "completion stopReason", run.StopReason, "end_turn")
	check(t, "completion text in", strings.Join(run.TextIn, ","), "agent_message_chunk")
	check(t, "completion text", run.Text, probe.TurnReply)
	if run.ModelRequests < 1 || !slices.ContainsFunc(run.Models, func(m string) bool { return strings.Contains(m, family) }) {
		t.Errorf("completion: %d model request(s) for %v, want one for a %s model", run.ModelRequests, run.Models, family)
	}
}

// refusesWrite asserts the permission scenario: asked, refused, nothing written.
func refusesWrite(t *testing.T, tr probe.Turn, toolStatus string) {
	t.Helper()
	p := tr.Permission
	if p == nil || !p.Offered || !p.Asked || p.FileWritten {
		t.Fatalf("permission: %+v, want a write tool offered, permission asked, nothing written", p)
	}
	check(t, "permission tool status", p.ToolStatus, toolStatus)
}

// modelsReach asserts model truth: every selection accepted, and each that names a model
// reached the emulator (aliases such as "default" tell nothing).
func modelsReach(t *testing.T, tr probe.Turn, minReached int) {
	t.Helper()
	reached := 0
	for _, m := range tr.Models {
		if !m.Set {
			t.Errorf("model truth: %s = %s was refused", m.Option, m.Value)
		}
		if m.Reached != nil && !*m.Reached {
			t.Errorf("model truth: %s = %s was asked for %v", m.Option, m.Value, m.Requested)
		}
		if m.Reached != nil && *m.Reached {
			reached++
		}
	}
	if reached < minReached {
		t.Errorf("model truth: %d selection(s) reached the model, want at least %d: %+v", reached, minReached, tr.Models)
	}
}

// claude-agent-acp 0.23.1: a real turn offline. Audio is not part of these scenarios. After a
// cancel, the next prompt is answered end_turn at once, with no text, and the agent calls the
// model only after answering: the one turn finding.
func TestTurnsClaude(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	r, turns := turnsOf(t, agentBin(t, "claude-agent-acp"))
	completes(t, turns[probe.ScenarioCompletion], "claude")
	modelsReach(t, turns[probe.ScenarioModels], 3)
	refusesWrite(t, turns[probe.ScenarioPermission], "failed")
	c := turns[probe.ScenarioCancel].Cancel
	check(t, "cancel stopReason", c.StopReason, "cancelled")
	check(t, "next turn text", c.NextText, false)
	check(t, "turn findings", strings.Join(turnFindings(r), ","), "turn.unusable-after-cancel")
}

// codex-acp 0.16.0: every model and reasoning effort reaches the model; a refused write ends
// the turn cancelled and leaves the tool call in_progress.
func TestTurnsCodex(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	r, turns := turnsOf(t, agentBin(t, "codex-acp"))
	completes(t, turns[probe.ScenarioCompletion], "gpt")
	modelsReach(t, turns[probe.ScenarioModels], 5)
	refusesWrite(t, turns[probe.ScenarioPermission], "in_progress")
	check(t, "permission stopReason", turns[probe.ScenarioPermission].Permission.StopReason, "cancelled")
	c := turns[probe.ScenarioCancel].Cancel
	check(t, "cancel stopReason", c.StopReason, "cancelled")
	check(t, "next turn text", c.NextText, true)
	check(t, "turn findings", strings.Join(turnFindings(r), ","), "turn.refused-tool-call-not-ended")
}

// gemini-cli 0.61.0: a router request, then the model; legacy session/set_model selections
// reach it; permission asked and refused; cancel clean.
func TestTurnsGemini(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	r, turns := turnsOf(t, agentBin(t, "gemini"), "--acp")
	completes(t, turns[probe.ScenarioCompletion], "gemini")
	modelsReach(t, turns[probe.ScenarioModels], 3)
	refusesWrite(t, turns[probe.ScenarioPermission], "")
	c := turns[probe.ScenarioCancel].Cancel
	check(t, "cancel stopReason", c.StopReason, "cancelled")
	check(t, "next turn text", c.NextText, true)
	check(t, "turn findings", strings.Join(turnFindings(r), ","), "")
}

// mcpReach runs the mcp scenario on argv and returns, per transport, the furthest milestone
// reached in a row.
func mcpReach(t *testing.T, argv ...string) map[string]probe.MCPTruth {
	t.Helper()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{Launcher: transport.Command{Argv: argv}, Timeout: 4 * probeTimeout,
			StartupTimeout: startupTimeout, RequestTimeout: requestTimeout},
		Scenarios: []probe.Scenario{probe.ScenarioMCP},
		// The stdio sentinel is acpprobe's hidden mcp-sentinel command, as the binary runs it.
		SentinelArgv: []string{buildCLI(t), "mcp-sentinel"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]probe.MCPTruth{}
	for _, tr := range r.Turns {
		for _, m := range tr.MCP {
			out[m.Transport] = m
			t.Logf("%s: advertised %v, stopped at %q, client %q", m.Transport, m.Advertised, m.StoppedAt, m.Client)
		}
	}
	if len(out) != 3 {
		t.Fatalf("MCP facts for %d transports, want 3 (turns %+v, error %+v)", len(out), r.Turns, r.Error)
	}
	return out
}

// TestMCPReal: how far each pinned agent gets with a sentinel MCP server per transport, offline.
// claude-agent-acp and gemini-cli (in its trusted throwaway workspace) go all the way on all
// three; codex-acp on stdio and http, and never connects to sse, which it does not advertise.
func TestMCPReal(t *testing.T) {
	requireE2E(t)
	for _, c := range []struct {
		name    string
		argv    func(*testing.T) []string
		stopped map[string]string
	}{
		{"claude-agent-acp", func(t *testing.T) []string { return []string{agentBin(t, "claude-agent-acp")} }, map[string]string{"stdio": "", "http": "", "sse": ""}},
		{"codex-acp", func(t *testing.T) []string { return []string{agentBin(t, "codex-acp")} }, map[string]string{"stdio": "", "http": "", "sse": "connected"}},
		{"gemini-cli", func(t *testing.T) []string { return []string{agentBin(t, "gemini"), "--acp"} }, map[string]string{"stdio": "", "http": "", "sse": ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for tr, m := range mcpReach(t, c.argv(t)...) {
				check(t, tr+" stopped at", m.StoppedAt, c.stopped[tr])
				if m.StoppedAt == "" && (m.Returned == nil || !*m.Returned) {
					t.Errorf("%s: the tool's result never came back to the model: %+v", tr, m)
				}
			}
		})
	}
}
