package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
)

// sessionsResult is a report whose sessions scenario ran: a load that misses the tool call,
// close cycles that leak, a fork, resume not advertised.
func sessionsResult() *probe.Result {
	zero := 0
	code := -32002
	tool := probe.ToolCallTruth{ID: "tc1", Kind: "edit", Status: "failed"}
	return &probe.Result{Turns: []probe.Turn{{Scenario: string(probe.ScenarioSessions), Outcome: probe.TurnFailed, Runs: []probe.TurnRun{},
		Sessions: &probe.SessionsTruth{SessionID: "s1", Cwd: "/w", Advertised: []string{"load", "list", "fork", "close"},
			Live: probe.SessionHistory{AgentText: true, ToolCalls: []probe.ToolCallTruth{tool}, Updates: 3},
			List: &probe.SessionList{SessionCall: probe.SessionCall{Seq: 3, AnswerSeq: 4}, Listed: true, Cwd: "/w"},
			Load: &probe.SessionLoad{SessionCall: probe.SessionCall{Seq: 5, AnswerSeq: 8}, Replay: probe.SessionHistory{UserText: true, AgentText: true, Updates: 2},
				Missing: []string{"tool call tc1 (edit, failed)"}},
			Fork: &probe.SessionFork{SessionCall: probe.SessionCall{Seq: 9, AnswerSeq: 10}, NewID: "s2", Distinct: true},
			Close: &probe.SessionClose{Cycles: 5, Before: &zero, Processes: []int{1, 2, 3, 4, 5}, Grew: true,
				Prompt: &probe.SessionCall{Seq: 40, AnswerSeq: 41, Code: &code, Message: "gone"}},
		}}}}
}

// The sessions scenario in the text report, the HTML matrix and its matrix cell: what a load
// replays and what close frees, each part on its line, a part not advertised said so.
func TestSessionsRendered(t *testing.T) {
	r := sessionsResult()
	var b bytes.Buffer
	if err := Text(&b, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"sessions", "failed — load misses tool call tc1 (edit, failed); close frees the session, LEAKS processes (1, 2, 3, 4, 5)",
		"list", "listed, cwd /w", "fork", "new id s2", "resume", "not advertised",
		"5 load/close cycle(s)", "a prompt after close: -32002 \"gone\"",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the text report lacks %q:\n%s", want, b.String())
		}
	}
	if got := TurnCell(r, probe.ScenarioSessions); got != "failed (load partial, close leaks)" {
		t.Errorf("matrix cell %q", got)
	}
	m := &matrix.Matrix{Rows: []matrix.Row{{ID: "a", Result: r}}}
	var h bytes.Buffer
	if err := MatrixHTML(&h, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(h.String(), "LEAKS processes (1, 2, 3, 4, 5)") || !strings.Contains(h.String(), "Sessions") {
		t.Errorf("the HTML matrix lacks the sessions facts or column")
	}
}
