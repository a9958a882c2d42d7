package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// sessionsResult is a report whose sessions scenario ran: a load that misses the tool call,
// close cycles that leak, a fork, resume not advertised.
func sessionsResult() *report.Result {
	zero := 0
	code := -32002
	tool := report.ToolCallTruth{ID: "tc1", Kind: "edit", Status: "failed"}
	return &report.Result{Turns: []report.Turn{{Scenario: string(record.ScenarioSessions), Outcome: report.TurnFailed, Runs: []report.TurnRun{},
		Sessions: &report.SessionsTruth{SessionID: "s1", Cwd: "/w", Advertised: []string{"load", "list", "fork", "close"},
			Live: report.SessionHistory{AgentText: true, ToolCalls: []report.ToolCallTruth{tool}, Updates: 3},
			List: &report.SessionList{SessionCall: report.SessionCall{Seq: 3, AnswerSeq: 4}, Listed: true, Cwd: "/w"},
			Load: &report.SessionLoad{SessionCall: report.SessionCall{Seq: 5, AnswerSeq: 8}, Replay: report.SessionHistory{UserText: true, AgentText: true, Updates: 2},
				Missing: []string{"tool call tc1 (edit, failed)"}},
			Fork: &report.SessionFork{SessionCall: report.SessionCall{Seq: 9, AnswerSeq: 10}, NewID: "s2", Distinct: true},
			Close: &report.SessionClose{Cycles: 5, Before: &zero, Processes: []int{1, 2, 3, 4, 5}, Grew: true,
				Prompt: &report.SessionCall{Seq: 40, AnswerSeq: 41, Code: &code, Message: "gone"}},
		}}}}
}

// The sessions scenario in the text report, the HTML matrix and its matrix cell: what a load
// replays and what close frees, each part on its line, a part not advertised said so.
func TestSessionsRendered(t *testing.T) {
	r := sessionsResult()
	var b bytes.Buffer
	if err := Text(&Screen{W: &b, Width: 1000}, r); err != nil { // a line a fact
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
	if got := TurnCell(r, record.ScenarioSessions); got != "failed (load partial, close leaks)" {
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
