package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	sbx "github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

// turnScenarios are the scenarios the suite runs on every pinned agent (issue 15): completion,
// model truth, permission and cancel, offline, against the model emulator.
var turnScenarios = []record.Scenario{record.ScenarioCompletion, record.ScenarioModels, record.ScenarioPermission, record.ScenarioCancel}

// turnsOf runs the turn scenarios on argv (turn.Run: its own sandbox, its own emulator) and
// returns the report; it fails the test when a scenario did not run.
func turnsOf(t *testing.T, argv ...string) (*report.Result, map[record.Scenario]report.Turn) {
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
	turns := map[record.Scenario]report.Turn{}
	for _, tr := range r.Turns {
		turns[record.Scenario(tr.Scenario)] = tr
		t.Logf("%s: %s %s %+v", tr.Scenario, tr.Outcome, tr.Reason, tr.Runs)
	}
	for _, f := range r.Findings {
		t.Logf("finding %s %s [seq %d]: %s", f.Tier, f.ID, f.Seq, f.Message)
	}
	for _, s := range turnScenarios {
		if tr, ok := turns[s]; !ok || tr.Outcome == report.TurnNotRun {
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
func turnFindings(r *report.Result) []string {
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
func completes(t *testing.T, tr report.Turn, family string) {
	t.Helper()
	run := tr.Runs[0]
	check(t, "completion outcome", tr.Outcome, report.TurnPassed)
	check(t, "completion stopReason", run.StopReason, "end_turn")
	check(t, "completion text in", strings.Join(run.TextIn, ","), "agent_message_chunk")
	check(t, "completion text", run.Text, record.TurnReply)
	if run.ModelRequests < 1 || !slices.ContainsFunc(run.Models, func(m string) bool { return strings.Contains(m, family) }) {
		t.Errorf("completion: %d model request(s) for %v, want one for a %s model", run.ModelRequests, run.Models, family)
	}
}

// refusesWrite asserts the permission scenario: asked, refused, nothing written.
func refusesWrite(t *testing.T, tr report.Turn, toolStatus string) {
	t.Helper()
	if len(tr.Permission) == 0 {
		t.Fatalf("permission: no run: %s %s", tr.Outcome, tr.Reason)
	}
	p := tr.Permission[0]
	if !p.Offered || !p.Asked || p.FileWritten {
		t.Fatalf("permission: %+v, want a write tool offered, permission asked, nothing written", p)
	}
	check(t, "permission tool status", p.ToolStatus, toolStatus)
}

// modelsReach asserts model truth: every selection accepted, and each that names a model
// reached the emulator (aliases such as "default" tell nothing).
func modelsReach(t *testing.T, tr report.Turn, minReached int) {
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
	completes(t, turns[record.ScenarioCompletion], "claude")
	modelsReach(t, turns[record.ScenarioModels], 3)
	refusesWrite(t, turns[record.ScenarioPermission], "failed")
	c := turns[record.ScenarioCancel].Cancel
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
	completes(t, turns[record.ScenarioCompletion], "gpt")
	modelsReach(t, turns[record.ScenarioModels], 5)
	refusesWrite(t, turns[record.ScenarioPermission], "in_progress")
	check(t, "permission stopReason", turns[record.ScenarioPermission].Permission[0].StopReason, "cancelled")
	c := turns[record.ScenarioCancel].Cancel
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
	completes(t, turns[record.ScenarioCompletion], "gemini")
	modelsReach(t, turns[record.ScenarioModels], 3)
	refusesWrite(t, turns[record.ScenarioPermission], "")
	c := turns[record.ScenarioCancel].Cancel
	check(t, "cancel stopReason", c.StopReason, "cancelled")
	check(t, "next turn text", c.NextText, true)
	check(t, "turn findings", strings.Join(turnFindings(r), ","), "")
}

// mcpReach runs the mcp scenario on argv and returns, per transport, the furthest milestone
// reached in a row.
func mcpReach(t *testing.T, argv ...string) map[string]report.MCPTruth {
	t.Helper()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{Launcher: transport.Command{Argv: argv}, Timeout: 4 * probeTimeout,
			StartupTimeout: startupTimeout, RequestTimeout: requestTimeout},
		Scenarios: []record.Scenario{record.ScenarioMCP},
		// The stdio sentinel is acpprobe's hidden mcp-sentinel command, as the binary runs it.
		SentinelArgv: []string{buildCLI(t), "mcp-sentinel"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]report.MCPTruth{}
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

// TestMatrixTurnsRealAgents runs `acpprobe matrix --turns --scenario mcp,sessions` on the three
// pinned agents by their config names (issue 16: the matrix shows how far each gets with a
// sentinel MCP server per transport, and its session continuity): each row's MCP facts and
// sessions findings are those TestMCPReal and TestSessionsReal assert, and the text matrix has
// the MCP reach and Sessions columns with each agent's cells.
func TestMatrixTurnsRealAgents(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	box := newSandbox(t)
	cfg := writeAgentsConfig(t, t.TempDir(), realConfigAgents(t, false))
	ids := []string{"claude", "codex", "gemini"}
	code, stdout, stderr := runCLI(t, box, "matrix", append([]string{"--config", cfg, "--turns", "--scenario", "mcp,sessions",
		"--format", "json"}, ids...)...)
	if code != 0 {
		t.Fatalf("acpprobe matrix --turns: exit %d\n%s", code, stderr)
	}
	var m matrix.Matrix
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatal(err)
	}
	stopped := map[string]map[string]string{
		"claude": {"stdio": "", "http": "", "sse": ""},
		"codex":  {"stdio": "", "http": "", "sse": "connected"},
		"gemini": {"stdio": "", "http": "", "sse": ""},
	}
	if len(m.Rows) != len(ids) {
		t.Fatalf("%d rows, want %d", len(m.Rows), len(ids))
	}
	var text bytes.Buffer
	if err := render.MatrixText(&text, &m); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"MCP reach", "Sessions"} {
		if !strings.Contains(strings.SplitN(text.String(), "\n", 2)[0], title) {
			t.Errorf("the text matrix has no %s column:\n%s", title, text.String())
		}
	}
	sessionsFinding := map[string]string{"claude": "sessions.fork-broken", "codex": "sessions.replay-incomplete"} // gemini: geminiLoad
	for _, row := range m.Rows {
		if row.Result == nil {
			t.Errorf("%s: no result (%s)", row.ID, row.Problem)
			continue
		}
		seen := 0
		for _, tr := range row.Result.Turns {
			for _, mt := range tr.MCP {
				seen++
				check(t, row.ID+" "+mt.Transport+" stopped at", mt.StoppedAt, stopped[row.ID][mt.Transport])
			}
		}
		if seen != 3 {
			t.Errorf("%s: MCP facts for %d transports, want 3", row.ID, seen)
		}
		var ids []string
		for _, f := range row.Result.Findings {
			if strings.HasPrefix(f.ID, "sessions.") {
				ids = append(ids, f.ID)
			}
		}
		if row.ID == "gemini" {
			var truth *report.SessionsTruth
			for _, tr := range row.Result.Turns {
				if tr.Sessions != nil {
					truth = tr.Sessions
				}
			}
			if truth == nil {
				t.Errorf("gemini: no sessions facts")
			} else {
				geminiLoad(t, truth, ids)
			}
		} else {
			check(t, row.ID+" sessions findings", strings.Join(ids, ","), sessionsFinding[row.ID])
		}
		for _, s := range []record.Scenario{record.ScenarioMCP, record.ScenarioSessions} {
			cell := render.TurnCell(row.Result, s)
			t.Logf("%s: %s %q", row.ID, s, cell)
			if !strings.Contains(text.String(), cell[:min(len(cell), 30)]) {
				t.Errorf("%s: the text matrix does not show its %s cell %q", row.ID, s, cell)
			}
		}
	}
}

// TestTurnsNetLevel: gemini-cli 0.61.0 at --isolate=net, with no network but its own loopback,
// where the emulator and the sentinels are served at their ports: its completion turn and all
// three sentinels go as far as at the env+home level, and the network sink records what else it
// reached for — one lookup, play.googleapis.com, answered NXDOMAIN, and no connection.
func TestTurnsNetLevel(t *testing.T) {
	requireE2E(t)
	if c := sbx.Available(); !c.Net {
		t.Skipf("the net level is not available here: %s", c.NetUnavailable)
	}
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{Launcher: transport.Command{Argv: []string{agentBin(t, "gemini"), "--acp"}}, Timeout: 4 * probeTimeout,
			StartupTimeout: startupTimeout, RequestTimeout: requestTimeout},
		Keys:         emulator.Keys{RegistryID: "gemini"}, // at the net level the name is not learned first
		Scenarios:    []record.Scenario{record.ScenarioCompletion, record.ScenarioMCP},
		SentinelArgv: []string{buildCLI(t), "mcp-sentinel"},
		Sandbox:      sbx.Options{Net: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	se := r.SideEffects
	if se == nil {
		t.Fatalf("no side effects (error %+v)", r.Error)
	}
	check(t, "isolation level", string(se.Isolation.Level), "net")
	check(t, "network observed", se.Network.Observed, true)
	check(t, "lookups", strings.Join(se.Network.Lookups, ","), "play.googleapis.com")
	check(t, "connects", len(se.Network.Connects), 0)
	for _, tr := range r.Turns {
		switch tr.Scenario {
		case string(record.ScenarioCompletion):
			completes(t, tr, "gemini")
		case string(record.ScenarioMCP):
			for _, m := range tr.MCP {
				if m.StoppedAt != "" || m.Returned == nil || !*m.Returned {
					t.Errorf("%s: stopped at %q, want the tool's result back at the model", m.Transport, m.StoppedAt)
				}
			}
			check(t, "MCP transports", len(tr.MCP), 3)
		}
	}
	check(t, "turns", len(r.Turns), 2)
}
