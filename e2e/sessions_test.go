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
// the turn's sandbox (measured 2026-11):
//   - claude-agent-acp 0.23.1 advertises load, list, fork, close and resume. It lists the
//     session in its real cwd, its load replays the user message, the text and the tool call
//     (same id, kind and status), close frees the session (a prompt after it is refused) and
//     leaves no process behind over the cycles, resume replays nothing; but session/load of a
//     fresh fork replays nothing at all (sessions.fork-broken).
//   - codex-acp 0.16.0 advertises load, list, close and resume: all work, and its load replays
//     the refused write's tool call completed where the live turn left it in_progress
//     (sessions.replay-incomplete).
//   - gemini-cli 0.61.0 advertises load only, and a fresh process usually cannot load the
//     session: -32603 "No previous sessions found for this project." (sessions.load-failed).
//     Its chat file shows why: the loading process appends a fresh start for the same session
//     id ($set of the messages to the session context alone) before it reads the file back, so
//     nothing resumable is left. It is a race in gemini-cli: now and then the read comes first
//     and the load replays part of the turn (seen once, in a matrix run on a loaded machine);
//     geminiLoad accepts either, as long as the report says which.
func TestSessionsReal(t *testing.T) {
	requireE2E(t)
	for _, c := range []struct {
		name       string
		argv       func(*testing.T) []string
		advertised string
		findings   string
	}{
		{"claude-agent-acp", func(t *testing.T) []string { return []string{agentBin(t, "claude-agent-acp")} },
			"load,list,fork,close,resume", "sessions.fork-broken"},
		{"codex-acp", func(t *testing.T) []string { return []string{agentBin(t, "codex-acp")} },
			"load,list,close,resume", "sessions.replay-incomplete"},
		{"gemini-cli", func(t *testing.T) []string { return []string{agentBin(t, "gemini"), "--acp"} },
			"load", ""}, // geminiLoad
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tr, ids := sessionsOf(t, c.argv(t)...)
			s := tr.Sessions
			if s == nil {
				t.Fatalf("no sessions facts: %+v", tr)
			}
			check(t, "advertised", strings.Join(s.Advertised, ","), c.advertised)
			check(t, "outcome", tr.Outcome, report.TurnFailed)
			if c.name == "gemini-cli" {
				geminiLoad(t, s, ids)
				return
			}
			check(t, "findings", strings.Join(ids, ","), c.findings)
			if s.List == nil || !s.List.Listed || s.List.Cwd != s.Cwd {
				t.Errorf("list %+v, want the session in %s", s.List, s.Cwd)
			}
			if s.Load == nil || !s.Load.OK() || !s.Load.Replay.UserText || len(s.Load.Replay.ToolCalls) != 1 || s.Load.Replay.ToolCalls[0].ID != s.Live.ToolCalls[0].ID {
				t.Errorf("load %+v against the live turn %+v", s.Load, s.Live)
			}
			cl := s.Close
			if cl == nil || cl.Cycles != turn.SessionCycles || cl.Grew || cl.Prompt == nil || cl.Prompt.OK() || cl.ModelRequests != 0 {
				t.Errorf("close %+v: want %d cycles, no growth, a refused prompt", cl, turn.SessionCycles)
			}
			if s.Resume == nil || !s.Resume.OK() || s.Resume.Replayed != 0 {
				t.Errorf("resume %+v", s.Resume)
			}
			switch c.name {
			case "claude-agent-acp":
				if s.Fork == nil || !s.Fork.Distinct || s.Fork.Load == nil || !s.Fork.Load.OK() || s.Fork.Load.Replay.Updates != 0 {
					t.Errorf("fork %+v, want a new id whose load replays nothing", s.Fork)
				}
			case "codex-acp":
				check(t, "live tool call status", s.Live.ToolCalls[0].Status, "in_progress")
				check(t, "replayed tool call status", s.Load.Replay.ToolCalls[0].Status, "completed")
			}
		})
	}
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
