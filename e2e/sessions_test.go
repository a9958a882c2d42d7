package e2e

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

// sessionsOf runs the sessions scenario on argv and returns its turn and the sessions
// findings.
func sessionsOf(t *testing.T, argv ...string) (report.Turn, []string) {
	t.Helper()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{Launcher: transport.Command{Argv: argv}, Timeout: 4 * probeTimeout,
			StartupTimeout: startupTimeout, RequestTimeout: requestTimeout},
		Scenarios: []record.Scenario{record.ScenarioSessions},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range r.Findings {
		t.Logf("finding %s %s [seq %d]: %s", f.Tier, f.ID, f.Seq, f.Message)
		if strings.HasPrefix(f.ID, "sessions.") {
			ids = append(ids, f.ID)
		}
	}
	for _, tr := range r.Turns {
		if tr.Scenario == string(record.ScenarioSessions) {
			b, _ := json.MarshalIndent(tr.Sessions, "", "  ")
			t.Logf("sessions: %s %s %s", tr.Outcome, tr.Reason, b)
			return tr, ids
		}
	}
	t.Fatalf("no sessions turn (error %+v)", r.Error)
	return report.Turn{}, nil
}

// TestSessionsReal: session continuity of each pinned agent, offline, on fresh processes in
// the turn's sandbox (measured 2026-12; what 0.23.1 and 0.16.0 did is in testdata/agents):
//   - claude-agent-acp 0.101.0 advertises load, list, fork, close and resume, and all of them
//     work: it lists the session in its real cwd, its load replays the user message, the text
//     and the tool call (same id, kind and status), a fresh fork's load replays that history
//     too (0.23.1's replayed nothing: sessions.fork-broken), close frees the session (a prompt
//     after it is refused) and leaves no process behind over the cycles, resume replays nothing.
//   - codex-acp 2.6.0 advertises the same five and passes the same way; the refused write's
//     tool call is completed live and in the replay (0.16.0 left it in_progress live:
//     sessions.replay-incomplete). After every session/resume it sends an agent_message_chunk
//     "Config warning: Codex could not find bubblewrap on PATH": a notice, not a replay.
//   - gemini-cli 0.61.0 advertises load only, and a fresh process usually cannot load the
//     session: -32603 "No previous sessions found for this project." (sessions.load-failed).
//     Its chat file shows why: the loading process appends a fresh start for the same session
//     id ($set of the messages to the session context alone) before it reads the file back, so
//     nothing resumable is left. It is a race in gemini-cli: now and then the read comes first
//     and the load replays part of the turn (seen once, in a matrix run on a loaded machine);
//     geminiLoad accepts either, as long as the report says which.
//   - qwen-code 0.24.4 advertises load, list and resume, and all three work.
//   - opencode 1.18.33 advertises and passes all five, as claude-agent-acp does.
//   - CodeBuddy Code 2.117.0 advertises load only; it loads the session, but replays the
//     refused write's tool call cancelled where the live turn left it pending
//     (sessions.replay-incomplete: a client that reloads shows another status).
func TestSessionsReal(t *testing.T) {
	requireE2E(t)
	for _, c := range []struct {
		name       string
		argv       func(*testing.T) []string
		advertised string
		// findings, when set, are the sessions findings of a failed scenario.
		findings string
	}{
		{"claude-agent-acp", func(t *testing.T) []string { return []string{agentBin(t, "claude-agent-acp")} },
			"load,list,fork,close,resume", ""},
		{"codex-acp", func(t *testing.T) []string { return []string{agentBin(t, "codex-acp")} },
			"load,list,fork,close,resume", ""},
		{"gemini-cli", func(t *testing.T) []string { return []string{agentBin(t, "gemini"), "--acp"} },
			"load", ""}, // geminiLoad
		{"qwen-code", func(t *testing.T) []string { return agentArgv(t, "qwen") }, "load,list,resume", ""},
		{"opencode", func(t *testing.T) []string { return agentArgv(t, "opencode") }, "load,list,fork,close,resume", ""},
		{"codebuddy", func(t *testing.T) []string { return agentArgv(t, "codebuddy") }, "load", "sessions.replay-incomplete"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr, ids := sessionsOf(t, c.argv(t)...)
			s := tr.Sessions
			if s == nil {
				t.Fatalf("no sessions facts: %+v", tr)
			}
			check(t, "advertised", strings.Join(s.Advertised, ","), c.advertised)
			if c.name == "gemini-cli" {
				check(t, "outcome", tr.Outcome, report.TurnFailed)
				geminiLoad(t, s, ids)
				return
			}
			check(t, "findings", strings.Join(ids, ","), c.findings)
			if c.findings != "" {
				check(t, "outcome", tr.Outcome, report.TurnFailed)
				if s.Load == nil || !s.Load.OK() || len(s.Load.Missing) == 0 {
					t.Errorf("load %+v, want one that worked and missed part of the live turn %+v", s.Load, s.Live)
				}
				return
			}
			check(t, "outcome", tr.Outcome, report.TurnPassed)
			advertised := func(m string) bool { return slices.Contains(s.Advertised, m) }
			if len(s.Live.ToolCalls) != 1 || !s.Live.AgentText {
				t.Fatalf("the live turn %+v, want the reply and one tool call", s.Live)
			}
			check(t, "live tool call status", s.Live.ToolCalls[0].Status, "completed")
			loads := map[string]*report.SessionLoad{"load": s.Load}
			if advertised("fork") {
				loads["the fork's load"] = forkLoad(s.Fork)
				if s.Fork == nil || !s.Fork.Distinct {
					t.Errorf("fork %+v, want a new id", s.Fork)
				}
			}
			for what, l := range loads {
				if l == nil || !l.OK() || !l.Replay.UserText || !l.Replay.AgentText || !slices.Equal(l.Replay.ToolCalls, s.Live.ToolCalls) {
					t.Errorf("%s %+v against the live turn %+v", what, l, s.Live)
				}
			}
			if advertised("list") && (s.List == nil || !s.List.Listed || s.List.Cwd != s.Cwd) {
				t.Errorf("list %+v, want the session in %s", s.List, s.Cwd)
			}
			if cl := s.Close; advertised("close") && (cl == nil || cl.Cycles != turn.SessionCycles || cl.Grew || cl.Prompt == nil || cl.Prompt.OK() || cl.ModelRequests != 0) {
				t.Errorf("close %+v: want %d cycles, no growth, a refused prompt", cl, turn.SessionCycles)
			}
			if advertised("resume") && (s.Resume == nil || !s.Resume.OK() || s.Resume.Replayed != 0) {
				t.Errorf("resume %+v", s.Resume)
			}
		})
	}
}

// forkLoad is the load of a fork's new session (nil: no fork, or no load of it).
func forkLoad(f *report.SessionFork) *report.SessionLoad {
	if f == nil {
		return nil
	}
	return f.Load
}

// geminiLoad checks gemini-cli's sessions findings against what its load did (see
// TestSessionsReal): a refused load is reported as sessions.load-failed and nothing else; a
// load that went through (the race gemini-cli sometimes loses against itself) is not.
func geminiLoad(t *testing.T, s *report.SessionsTruth, ids []string) {
	t.Helper()
	if s.Load == nil || !s.Load.OK() {
		check(t, "gemini's findings, its load refused", strings.Join(ids, ","), "sessions.load-failed")
		return
	}
	if slices.Contains(ids, "sessions.load-failed") {
		t.Errorf("gemini's load went through (%+v), yet the findings say %v", s.Load, ids)
	}
	t.Logf("gemini-cli loaded the session this time (its own race went the other way): findings %v", ids)
}
