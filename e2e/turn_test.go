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
	// key the profile gave the agent or with none (codex-acp 2.6.0 behind its gateway login
	// sends no Authorization), never another credential.
	requests := 0
	for _, f := range log.Frames() {
		if req, ok := record.ModelRequest.Decode(f); ok && req.Endpoint == "generate" {
			requests++
			if req.Credential != "dummy" && req.Credential != "none" {
				t.Errorf("model request %d (%s %s) carried credential %q, want the dummy key or none", req.Seq, req.Method, req.Path, req.Credential)
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

// completes asserts the completion scenario: the reply first in agent_message_chunk,
// end_turn, at least one model request of the named model family.
func completes(t *testing.T, tr report.Turn, family string) {
	t.Helper()
	run := tr.Runs[0]
	check(t, "completion outcome", tr.Outcome, report.TurnPassed)
	check(t, "completion stopReason", run.StopReason, "end_turn")
	check(t, "completion text in", strings.Join(run.TextIn, ","), "agent_message_chunk")
	// Claude Code in its mode auto appends a notice of its own to the reply ("**Warning:**
	// We're changing auto mode …"): the reply comes first.
	if !strings.HasPrefix(run.Text, record.TurnReply) {
		t.Errorf("completion text %q, want it to start with %q", run.Text, record.TurnReply)
	}
	if run.ModelRequests < 1 || !slices.ContainsFunc(run.Models, func(m string) bool { return strings.Contains(m, family) }) {
		t.Errorf("completion: %d model request(s) for %v, want one for a %s model", run.ModelRequests, run.Models, family)
	}
}

// permissionRun is what one permission run must show, in a line: the mode, whether the mode
// promises to ask and is the session's default, acpprobe's answer, whether the agent asked,
// whether the file was written, the tool call's last status and the turn's stopReason.
func permissionRun(p report.PermissionTruth) string {
	yes := func(b bool, y, n string) string {
		if b {
			return y
		}
		return n
	}
	return strings.Join([]string{p.Mode, yes(p.Asks, "asks", "no-ask"), yes(p.Default, "default", "chosen"), string(p.Answer),
		yes(p.Asked, "asked", "not-asked"), yes(p.FileWritten, "written", "not-written"), "tool=" + p.ToolStatus, p.StopReason}, " ")
}

// modelsReach asserts model truth: each selection accepted but those refused names (option =
// value), and each accepted one that names a model or level reached the emulator (aliases such
// as "default" tell nothing) but those notReached names; at least minReached did.
func modelsReach(t *testing.T, tr report.Turn, minReached int, refused, notReached []string) {
	t.Helper()
	reached := 0
	var gotRefused, gotNotReached []string
	for _, m := range tr.Models {
		name := m.Option + " = " + m.Value
		if !m.Set {
			gotRefused = append(gotRefused, name)
		}
		if m.Reached != nil && !*m.Reached {
			gotNotReached = append(gotNotReached, name)
		}
		if m.Reached != nil && *m.Reached {
			reached++
		}
	}
	check(t, "model truth: refused", strings.Join(gotRefused, ", "), strings.Join(refused, ", "))
	check(t, "model truth: not reached", strings.Join(gotNotReached, ", "), strings.Join(notReached, ", "))
	if reached < minReached {
		t.Errorf("model truth: %d selection(s) reached the model, want at least %d: %+v", reached, minReached, tr.Models)
	}
}

// turnAgents are the pinned agents' turns, offline against the model emulator (measured
// 2026-12 at the pins of scripts/install-e2e-agents.sh; what 0.23.1 and 0.16.0 did is in
// testdata/agents). Each runs on its backend profile, chosen by its program.
var turnAgents = []struct {
	name, profile, family string
	// minReached, refused and notReached are model truth's (modelsReach).
	minReached          int
	refused, notReached []string
	// permission are the permission runs (permissionRun), in order.
	permission []string
	// nextText: the prompt after a cancel got the reply.
	nextText bool
	// findings are the turn.* findings, sorted, each once.
	findings string
}{
	// claude-agent-acp 0.101.0 starts its sessions in mode auto, which does not promise to
	// ask: the permission runs are in its mode default (asks; the rejected write's tool call
	// ends failed), answered reject and cancelled, then in auto, where the write goes ahead
	// (information, not a violation). Every model and effort reaches the model.
	{name: "claude", profile: "claude-agent-acp", family: "claude", minReached: 8,
		permission: []string{"default asks chosen reject asked not-written tool=failed end_turn",
			"default asks chosen cancelled asked not-written tool=failed end_turn",
			"auto no-ask default reject not-asked written tool=completed end_turn"},
		nextText: true, findings: "turn.write-unasked-by-mode"},
	// codex-acp 2.6.0 (Codex 0.166) behind its gateway login: sessions start in mode agent
	// ("Auto review"), which writes without asking; in read-only it asks, and a refused write
	// ends the turn cancelled with the tool call left in_progress. With its own model
	// (gpt-6.1-sol) it takes reasoning_effort ultra and asks the model for xhigh (with the
	// last model of the list, gpt-5.6-luna, it refuses ultra: -32602).
	{name: "codex", profile: "codex-acp", family: "gpt", minReached: 12,
		notReached: []string{"reasoning_effort = ultra"},
		permission: []string{"read-only asks chosen reject asked not-written tool=in_progress cancelled",
			"read-only asks chosen cancelled asked not-written tool=in_progress cancelled",
			"agent no-ask default reject not-asked written tool=completed end_turn"},
		nextText: true, findings: "turn.model-not-reached,turn.refused-tool-call-not-ended,turn.write-unasked-by-mode"},
	// gemini-cli 0.61.0: a router request, then the model; it asks in its default mode and
	// reports no tool call for the refused write.
	{name: "gemini", profile: "gemini-cli", family: "gemini", minReached: 0,
		permission: []string{"default asks default reject asked not-written tool= end_turn",
			"default asks default cancelled asked not-written tool= end_turn"},
		nextText: true},
	// qwen-code 0.24.4 on the OpenAI chat API: like claude, it starts in mode auto; its
	// reasoning_effort max is sent as xhigh.
	{name: "qwen", profile: "qwen-code", family: "acpprobe-emulator", minReached: 1,
		notReached: []string{"reasoning_effort = max"},
		permission: []string{"default asks chosen reject asked not-written tool=failed end_turn",
			"default asks chosen cancelled asked not-written tool=failed end_turn",
			"auto no-ask default reject not-asked written tool=completed end_turn"},
		nextText: true, findings: "turn.model-not-reached,turn.write-unasked-by-mode"},
	// opencode 1.18.33: its only modes (build, plan) promise no asking; build writes.
	{name: "opencode", profile: "opencode", family: "claude", minReached: 1,
		permission: []string{"build no-ask default reject not-asked written tool=completed end_turn"},
		nextText:   true, findings: "turn.write-unasked-by-mode"},
	// CodeBuddy Code 2.117.0: it asks in its default mode, and a refused write ends the turn
	// cancelled with the tool call left pending. With its own model (default-model) its
	// thought levels xhigh and max are sent as high (with gpt-5.5, the last of the list, max is
	// sent as xhigh and disabled is refused: "Current model does not support disabling
	// thinking").
	{name: "codebuddy", profile: "codebuddy-code", family: "default-model", minReached: 8,
		notReached: []string{"thought_level = xhigh", "thought_level = max"},
		permission: []string{"default asks default reject asked not-written tool=pending cancelled",
			"default asks default cancelled asked not-written tool=pending cancelled"},
		nextText: true, findings: "turn.model-not-reached,turn.refused-tool-call-not-ended"},
}

// TestTurnsReal runs completion, model truth, permission and cancel on each pinned agent.
func TestTurnsReal(t *testing.T) {
	requireE2E(t)
	for _, a := range turnAgents {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			r, turns := turnsOf(t, agentArgv(t, a.name)...)
			if r.Route == nil || r.Route.Kind != record.RouteProfile || r.Route.Profile != a.profile {
				t.Errorf("route %+v, want the backend profile %s", r.Route, a.profile)
			}
			completes(t, turns[record.ScenarioCompletion], a.family)
			modelsReach(t, turns[record.ScenarioModels], a.minReached, a.refused, a.notReached)
			var runs []string
			for _, p := range turns[record.ScenarioPermission].Permission {
				runs = append(runs, permissionRun(p))
			}
			check(t, "permission runs", strings.Join(runs, "\n"), strings.Join(a.permission, "\n"))
			c := turns[record.ScenarioCancel].Cancel
			if c == nil {
				t.Fatalf("no cancel facts")
			}
			check(t, "cancel stopReason", c.StopReason, "cancelled")
			check(t, "next turn text", c.NextText, a.nextText)
			check(t, "turn findings", strings.Join(slices.Compact(turnFindings(r)), ","), a.findings)
		})
	}
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
// claude-agent-acp, gemini-cli (in its trusted throwaway workspace), qwen-code, opencode and
// CodeBuddy Code go all the way on all three; codex-acp 2.6.0 on stdio and http, and refuses a session whose only server is sse,
// which it does not advertise (session/new answers an error; 0.16.0 accepted the session and
// never connected).
func TestMCPReal(t *testing.T) {
	requireE2E(t)
	for _, c := range []struct {
		name    string
		argv    func(*testing.T) []string
		stopped map[string]string
	}{
		{"claude-agent-acp", func(t *testing.T) []string { return []string{agentBin(t, "claude-agent-acp")} }, map[string]string{"stdio": "", "http": "", "sse": ""}},
		{"codex-acp", func(t *testing.T) []string { return []string{agentBin(t, "codex-acp")} }, map[string]string{"stdio": "", "http": "", "sse": "delivered"}},
		{"gemini-cli", func(t *testing.T) []string { return []string{agentBin(t, "gemini"), "--acp"} }, map[string]string{"stdio": "", "http": "", "sse": ""}},
		{"qwen-code", func(t *testing.T) []string { return agentArgv(t, "qwen") }, map[string]string{"stdio": "", "http": "", "sse": ""}},
		{"opencode", func(t *testing.T) []string { return agentArgv(t, "opencode") }, map[string]string{"stdio": "", "http": "", "sse": ""}},
		{"codebuddy", func(t *testing.T) []string { return agentArgv(t, "codebuddy") }, map[string]string{"stdio": "", "http": "", "sse": ""}},
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
		"codex":  {"stdio": "", "http": "", "sse": "delivered"},
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
	sessionsFinding := map[string]string{"claude": "", "codex": ""} // gemini: geminiLoad
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

// TestTurnsWithoutAgentProfile (issue 20: routes that need no agent-specific profile): the
// completion turn runs on claude-agent-acp 0.101.0 through its own gateway login (the client
// declares auth._meta.gateway, the agent offers a gateway method of protocol anthropic, and
// authenticate gives it the emulator's URL), and on gemini-cli 0.61.0 on the auto backend
// (every dialect on one port, every variable the profiles know): the report says the route,
// and the dialect the agent spoke.
func TestTurnsWithoutAgentProfile(t *testing.T) {
	requireE2E(t)
	for _, c := range []struct {
		name, backend string
		kind          record.RouteKind
		profile       string
		dialect       string
	}{
		{"claude", turn.BackendGateway, record.RouteGateway, "", "anthropic"},
		{"gemini", "auto", record.RouteProfile, "auto", "gemini"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r, err := turn.Run(context.Background(), turn.Options{
				Probe: probe.Options{Launcher: transport.Command{Argv: agentArgv(t, c.name)}, Timeout: 4 * probeTimeout,
					StartupTimeout: startupTimeout, RequestTimeout: requestTimeout},
				Backend:   c.backend,
				Scenarios: []record.Scenario{record.ScenarioCompletion},
			})
			if err != nil {
				t.Fatal(err)
			}
			rt := r.Route
			if rt == nil || rt.Kind != c.kind || rt.Profile != c.profile || !slices.Equal(rt.Dialects, []string{c.dialect}) {
				t.Fatalf("route %+v, want %s %q speaking %s", rt, c.kind, c.profile, c.dialect)
			}
			if c.kind == record.RouteGateway && (rt.Authenticate == "" || !strings.HasPrefix(rt.Gateway, "http://127.0.0.1:")) {
				t.Errorf("route %+v, want the gateway login with the emulator's loopback URL", rt)
			}
			for _, tr := range r.Turns {
				if tr.Scenario == string(record.ScenarioCompletion) {
					completes(t, tr, c.name)
					return
				}
			}
			t.Fatalf("no completion turn: %+v", r.Error)
		})
	}
}
