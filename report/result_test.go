package report_test

import (
	"encoding/json"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// A result written before the permission scenario made several runs holds one object, whose
// "answer" is the option the agent was answered with: it reads as that one run. A list reads as
// it is.
func TestPermissionRunsReadsAnOlderResult(t *testing.T) {
	var old report.Turn
	if err := json.Unmarshal([]byte(`{"scenario":"permission","outcome":"passed","runs":[],"permission":{"toolCall":true,"asked":true,"askedSeq":7,"answer":"reject-once","fileWritten":false,"offered":true}}`), &old); err != nil {
		t.Fatal(err)
	}
	if len(old.Permission) != 1 {
		t.Fatalf("permission %+v, want one run", old.Permission)
	}
	if p := old.Permission[0]; p.Answered != "reject-once" || p.Answer != record.AnswerReject || !p.Asked || p.AskedSeq != 7 || !p.Default {
		t.Errorf("run %+v, want answered reject-once, policy reject, asked at 7", p)
	}
	var cancelled report.Turn
	if err := json.Unmarshal([]byte(`{"scenario":"permission","outcome":"passed","runs":[],"permission":{"toolCall":true,"asked":true,"answer":"cancelled","fileWritten":false,"offered":true}}`), &cancelled); err != nil {
		t.Fatal(err)
	}
	if p := cancelled.Permission[0]; p.Answer != record.AnswerCancelled {
		t.Errorf("run %+v, want the policy cancelled", p)
	}
	var now report.Turn
	if err := json.Unmarshal([]byte(`{"scenario":"permission","outcome":"passed","runs":[],"permission":[{"mode":"ask","asks":true,"default":true,"answer":"reject","answered":"reject","toolCall":true,"asked":true,"fileWritten":false,"offered":true},{"mode":"ask","asks":true,"default":true,"answer":"cancelled","answered":"cancelled","toolCall":true,"asked":true,"fileWritten":false,"offered":true}]}`), &now); err != nil {
		t.Fatal(err)
	}
	if len(now.Permission) != 2 || now.Permission[1].Answer != record.AnswerCancelled || now.Permission[0].Mode != "ask" {
		t.Errorf("runs %+v", now.Permission)
	}
	if err := json.Unmarshal([]byte(`{"scenario":"permission","outcome":"passed","runs":[],"permission":"yes"}`), &now); err == nil {
		t.Error("a string was read as permission runs")
	}
}
