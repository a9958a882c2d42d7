package turn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

// runTurns runs scenarios against the reference agent's model persona with the given faults,
// through the acptest-model backend profile, and returns the report.
func runTurns(t *testing.T, faults []string, scenarios ...record.Scenario) *report.Result {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--persona", "model"}, faults...)
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{
			Launcher: transport.Command{Argv: []string{exe}, Env: []string{"ACPPROBE_TURN_AGENT=" + strings.Join(args, " "), "GORACE=atexit_sleep_ms=0"}},
			Timeout:  60 * time.Second, Grace: time.Second,
		},
		Scenarios:   scenarios,
		Sandbox:     sandbox.Options{Parent: t.TempDir()},
		TurnTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	validate(t, r)
	return r
}

// validate checks the report against the published result schema.
func validate(t *testing.T, r *report.Result) {
	t.Helper()
	b, _ := json.Marshal(r)
	if err := report.ValidateResult(b); err != nil {
		t.Errorf("the report does not match result.schema.json: %v", err)
	}
}

func turnOf(t *testing.T, r *report.Result, s record.Scenario) report.Turn {
	t.Helper()
	for _, tr := range r.Turns {
		if tr.Scenario == string(s) {
			return tr
		}
	}
	t.Fatalf("no %s turn in %+v (error %+v)", s, r.Turns, r.Error)
	return report.Turn{}
}

func findingIDs(r *report.Result) []string {
	var ids []string
	for _, f := range r.Findings {
		if strings.HasPrefix(f.ID, "turn.") {
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// Every scenario passes against the model persona: real turns through the emulator, the text
// in agent_message_chunk, the selected models reaching the model, permission asked and the
// write refused, cancel ending cancelled with the agent still usable.
func TestScenariosPass(t *testing.T) {
	r := runTurns(t, nil)
	if ids := findingIDs(r); len(ids) > 0 {
		t.Errorf("turn findings against the passing persona: %v", ids)
	}
	for _, s := range record.DefaultScenarios {
		if tr := turnOf(t, r, s); tr.Outcome != report.TurnPassed {
			t.Errorf("%s: %s (%s), want passed", s, tr.Outcome, tr.Reason)
		}
	}
	c := turnOf(t, r, record.ScenarioCompletion).Runs[0]
	if c.StopReason != "end_turn" || !slices.Equal(c.TextIn, []string{"agent_message_chunk"}) || c.Text != record.TurnReply || c.ModelRequests != 1 {
		t.Errorf("completion run %+v", c)
	}
	var selected []string
	for _, m := range turnOf(t, r, record.ScenarioModels).Models {
		if m.Reached == nil || !*m.Reached {
			t.Errorf("model truth %s=%s: requested %v, reached %v", m.Option, m.Value, m.Requested, m.Reached)
		}
		selected = append(selected, m.Value)
	}
	if !slices.Equal(selected, []string{"acptest-small", "acptest-large", "low", "medium", "high"}) {
		t.Errorf("model truth selected %v, want every model and thought level once (putting the model back is no selection of its own)", selected)
	}
	// The thought levels are tried with the model put back to the session's own.
	mt := turnOf(t, r, record.ScenarioModels).Runs
	if last := mt[len(mt)-1]; !slices.Equal(last.Models, []string{"acptest-small"}) {
		t.Errorf("the last thought level's turn asked for %v, want the session's own model acptest-small", last.Models)
	}
	// The persona's sessions start in its mode ask, which asks: the write is refused with
	// reject, then with cancelled, each run on its own agent process; no default-mode run.
	perm := turnOf(t, r, record.ScenarioPermission).Permission
	if len(perm) != 2 {
		t.Fatalf("permission runs %+v, want two (reject, cancelled)", perm)
	}
	for i, answer := range []record.PermissionAnswer{record.AnswerReject, record.AnswerCancelled} {
		if p := perm[i]; p.Mode != "ask" || !p.Asks || !p.Default || p.Answer != answer || !p.Asked || p.FileWritten || !p.Offered || p.SetBy != "" {
			t.Errorf("permission run %d %+v, want mode ask, answered %s, asked, not written", i, p, answer)
		}
	}
	if got := perm[1].Answered; got != "cancelled" {
		t.Errorf("the second run answered %q, want the outcome cancelled", got)
	}
	if k := turnOf(t, r, record.ScenarioCancel).Cancel; !k.Sent || k.StopReason != "cancelled" || !k.NextText {
		t.Errorf("cancel %+v", k)
	}
	// acpprobe sends no _meta: initialize, session/new and the prompts worked without it.
	if z := r.ZeroMeta; z == nil || z.Outcome != report.ZeroMetaHeld || len(z.Steps) < 3 {
		t.Errorf("zero _meta %+v, want held", z)
	}
}

// Each fault of the model persona makes its scenario fail with its finding, and only that.
func TestScenarioFaults(t *testing.T) {
	for _, c := range []struct {
		fault    string
		scenario record.Scenario
		want     string
	}{
		{"--write-without-permission", record.ScenarioPermission, "turn.write-without-permission"},
		{"--write-after-reject", record.ScenarioPermission, "turn.write-after-reject"},
		{"--ignore-model", record.ScenarioModels, "turn.model-not-reached"},
		{"--ignore-thought-level", record.ScenarioModels, "turn.model-not-reached"},
		{"--refuse-last-value", record.ScenarioModels, "turn.option-value-refused"},
		{"--ignore-cancel", record.ScenarioCancel, "turn.cancel-not-cancelled"},
		{"--updates-after-answer", record.ScenarioCompletion, "turn.updates-after-answer"},
		{"--text-as-thought", record.ScenarioCompletion, "turn.text-not-message-chunk"},
		{"--drop-blocks", record.ScenarioShapes, "turn.shape-not-delivered"},
	} {
		t.Run(strings.TrimPrefix(c.fault, "--"), func(t *testing.T) {
			t.Parallel()
			r := runTurns(t, []string{c.fault}, c.scenario)
			if tr := turnOf(t, r, c.scenario); tr.Outcome != report.TurnFailed {
				t.Errorf("%s: %s (%s), want failed", c.scenario, tr.Outcome, tr.Reason)
			}
			if ids := findingIDs(r); !slices.Contains(ids, c.want) {
				t.Errorf("findings %v, want %s", ids, c.want)
			}
		})
	}
}

// mcpOf is the MCP facts of a report, by transport.
func mcpOf(t *testing.T, r *report.Result) map[string]report.MCPTruth {
	t.Helper()
	out := map[string]report.MCPTruth{}
	for _, m := range turnOf(t, r, record.ScenarioMCP).MCP {
		out[m.Transport] = m
	}
	if len(out) != 3 {
		t.Fatalf("MCP facts for %d transports, want stdio, http and sse: %+v", len(out), out)
	}
	return out
}

func milestones(m report.MCPTruth) string {
	show := func(b *bool) string {
		switch {
		case b == nil:
			return "?"
		case *b:
			return "y"
		}
		return "n"
	}
	return strings.Join([]string{show(m.Delivered), show(m.Connected), show(m.Listed), show(m.Visible), show(m.Asked), show(m.Called), show(m.Returned)}, "")
}

// The sentinels, one per transport, against the model persona: every milestone, from
// delivered to the tool's result back at the model; with --no-mcp it never connects; with
// --hide-mcp-tools it lists the tools and never offers them to the model; with
// --defer-mcp-tools it offers them only once the model searched for them (ToolSearch), which
// the scripted model does first, then calls the tool it found. Each missed milestone
// of an advertised transport is a CAPABILITY finding; no sentinel outlives the run.
func TestMCPScenario(t *testing.T) {
	for _, c := range []struct {
		fault, want, stopped string
		findings             int
	}{
		{"", "yyyyyyy", "", 0},
		{"--no-mcp", "ynnnnnn", "connected", 3},
		{"--hide-mcp-tools", "yyynnnn", "visible", 3},
		{"--defer-mcp-tools", "yyyyyyy", "", 0},
	} {
		t.Run("fault"+c.fault, func(t *testing.T) {
			t.Parallel()
			var faults []string
			if c.fault != "" {
				faults = []string{c.fault}
			}
			r := runTurns(t, faults, record.ScenarioMCP)
			for tr, m := range mcpOf(t, r) {
				if got := milestones(m); got != c.want || m.StoppedAt != c.stopped || !m.Advertised {
					t.Errorf("%s: milestones %s stopped at %q (advertised %v), want %s stopped at %q", tr, got, m.StoppedAt, m.Advertised, c.want, c.stopped)
				}
			}
			n := 0
			for _, f := range r.Findings {
				if f.ID == "mcp.milestone-missed" {
					n++
				}
			}
			if n != c.findings {
				t.Errorf("%d mcp.milestone-missed findings, want %d: %v", n, c.findings, findingIDs(r))
			}
		})
	}
}

// The sessions scenario against the model persona: a fresh process loads the session and
// replays the turn whole (its user message, text and tool call), lists it in its real cwd,
// forks it, closes it (the process count stays flat over the cycles, a prompt on the closed
// session is refused) and resumes it without a replay. Each fault fails its own check: load
// without the tool calls, a process leaked per load, a close that keeps the session.
func TestSessionsScenario(t *testing.T) {
	for _, c := range []struct {
		fault string
		want  []string
	}{
		{"", nil},
		{"--load-without-tool-calls", []string{"sessions.replay-incomplete"}},
		{"--leak-on-load", []string{"sessions.close-leaks"}},
		{"--close-keeps", []string{"sessions.close-keeps"}},
		{"--resume-replays", []string{"sessions.resume-replayed"}},
		{"--resume-notice", nil}, // a notice on resuming is not a replay
	} {
		t.Run("fault"+c.fault, func(t *testing.T) {
			t.Parallel()
			var faults []string
			if c.fault != "" {
				faults = []string{c.fault}
			}
			r := runTurns(t, faults, record.ScenarioSessions)
			tr := turnOf(t, r, record.ScenarioSessions)
			var ids []string
			for _, f := range r.Findings {
				if strings.HasPrefix(f.ID, "sessions.") {
					ids = append(ids, f.ID)
				}
			}
			if !slices.Equal(ids, c.want) {
				t.Errorf("sessions findings %v, want %v", ids, c.want)
			}
			want := report.TurnPassed
			if c.want != nil {
				want = report.TurnFailed
			}
			if tr.Outcome != want {
				t.Errorf("outcome %s (%s), want %s", tr.Outcome, tr.Reason, want)
			}
			s := tr.Sessions
			if s == nil || s.Load == nil || s.List == nil || s.Fork == nil || s.Close == nil || s.Resume == nil {
				t.Fatalf("sessions facts with a part missing: %+v", s)
			}
			if len(s.Live.ToolCalls) != 1 || !s.Live.AgentText {
				t.Errorf("the live turn %+v, want one tool call and the reply", s.Live)
			}
			replayed := slices.ContainsFunc(s.Load.Replay.ToolCalls, func(tc report.ToolCallTruth) bool { return tc == s.Live.ToolCalls[0] })
			if !s.Load.OK() || !s.Load.Replay.UserText || !s.Load.Replay.AgentText || replayed == (c.fault == "--load-without-tool-calls") {
				t.Errorf("load %+v against the live %+v", s.Load, s.Live)
			}
			// A replaying resume repeats at least the user message, the reply and the tool call.
			if !s.List.Listed || s.List.Cwd != s.Cwd || !s.Fork.Distinct || !s.Resume.OK() || (s.Resume.Replayed >= 3) != (c.fault == "--resume-replays") ||
				(c.fault != "--resume-replays" && s.Resume.Replayed != 0) {
				t.Errorf("list %+v, fork %+v, resume %+v", s.List, s.Fork, s.Resume)
			}
			cl := s.Close
			if cl.Cycles != turn.SessionCycles || len(cl.Processes) != turn.SessionCycles || cl.Prompt == nil {
				t.Fatalf("close %+v", cl)
			}
			if kept := cl.Prompt.OK(); kept != (c.fault == "--close-keeps") {
				t.Errorf("the prompt after close answered %+v", cl.Prompt)
			}
			// One leaked child per load (the fork's load included), none without the fault.
			for i, n := range cl.Processes {
				want := 0
				if c.fault == "--leak-on-load" {
					want = i + 2
				}
				if n != want {
					t.Errorf("processes after each close %v (before %v)", cl.Processes, intOf(cl.Before))
					break
				}
			}
		})
	}
}

func intOf(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

// Every scenario runs on a fresh session, and whatever follows a permission run or the cancel
// scenario on a fresh agent process: the record's connections say so, in order, and no two
// scenarios prompt on the same session.
func TestScenariosIsolated(t *testing.T) {
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
		Sandbox:     sandbox.Options{Parent: t.TempDir()},
		TurnTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	conns := record.Split(log.Frames())
	var purposes []string
	for _, c := range conns.Extra {
		steps := record.New(c.Frames).Steps()
		purposes = append(purposes, string(c.Purpose)+" "+strings.Join(steps, ","))
	}
	want := []string{
		"turn turn/permission/cancelled",
		"turn turn/cancel",
		"turn turn/sessions",
		"session-load turn/sessions/load",
		"session-resume turn/sessions/resume",
	}
	if !slices.Equal(purposes, want) {
		t.Errorf("connections after the main one:\n%s\nwant\n%s", strings.Join(purposes, "\n"), strings.Join(want, "\n"))
	}
	if steps := record.New(conns.Main).Steps(); !slices.Equal(steps, []string{"turn/completion", "turn/prompt-shapes", "turn/model-truth", "turn/permission"}) {
		t.Errorf("main connection steps %v", steps)
	}
	owner := map[string]string{} // session id → the scenario that prompted on it
	for _, tr := range r.Turns {
		for _, run := range tr.Runs {
			for _, f := range conns.All {
				if f.Seq != run.Seq || f.Msg == nil {
					continue
				}
				id := acp.ParseObject(f.Msg.Params).String("sessionId")
				if o, ok := owner[id]; ok && o != tr.Scenario {
					t.Errorf("session %s prompted by %s and %s", id, o, tr.Scenario)
				}
				owner[id] = tr.Scenario
			}
		}
	}
	if len(owner) < 6 {
		t.Errorf("%d sessions prompted, want one per scenario and permission run at least: %v", len(owner), owner)
	}
}

// An agent whose sessions start in a mode that does not ask (the model persona with
// --auto-by-default, like claude-agent-acp 0.101.0 in its mode auto): the permission runs in the
// mode that asks (ask) pass; the run in the default mode writes without asking, which is
// information, not a violation; the scenario passes with that note.
func TestPermissionInTheDefaultModeIsInformation(t *testing.T) {
	r := runTurns(t, []string{"--auto-by-default"}, record.ScenarioPermission)
	tr := turnOf(t, r, record.ScenarioPermission)
	if tr.Outcome != report.TurnPassed || len(tr.Notes) != 1 || !strings.HasPrefix(tr.Notes[0], "turn.write-unasked-by-mode: permission: in mode auto") {
		t.Errorf("permission %s, notes %q: want passed, with the note that mode auto wrote without asking", tr.Outcome, tr.Notes)
	}
	var runs []string
	for _, p := range tr.Permission {
		runs = append(runs, fmt.Sprintf("%s asks=%v default=%v %s set=%s asked=%v written=%v", p.Mode, p.Asks, p.Default, p.Answer, p.SetBy, p.Asked, p.FileWritten))
	}
	want := []string{
		"ask asks=true default=false reject set=session/set_config_option asked=true written=false",
		"ask asks=true default=false cancelled set=session/set_config_option asked=true written=false",
		"auto asks=false default=true reject set= asked=false written=true",
	}
	if !slices.Equal(runs, want) {
		t.Errorf("permission runs:\n%s\nwant\n%s", strings.Join(runs, "\n"), strings.Join(want, "\n"))
	}
	for _, f := range r.Findings {
		if f.ID == "turn.write-without-permission" {
			t.Errorf("a MANDATORY finding for a write in a mode that does not ask: %s", f.Message)
		}
	}
}
