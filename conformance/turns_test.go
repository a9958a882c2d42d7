package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// turnOf evaluates a turn scenario and returns its one turn.
func turnOf(t *testing.T, name string) report.Turn {
	t.Helper()
	facts, _, _ := loadScenario(t, "testdata/scenarios/"+name+".txtar")
	out := Evaluate(context.Background(), facts)
	if len(out.Turns) != 1 {
		t.Fatalf("%s: %d turns, want 1: %+v", name, len(out.Turns), out.Turns)
	}
	return out.Turns[0]
}

func TestTurnFacts(t *testing.T) {
	c := turnOf(t, "turn-completion")
	run := c.Runs[0]
	if c.Outcome != report.TurnPassed || run.StopReason != "end_turn" || strings.Join(run.TextIn, ",") != "agent_message_chunk" ||
		!run.Usage || run.ModelRequests != 1 || strings.Join(run.Models, ",") != "m-small" || run.Text != record.TurnReply || run.FirstChunkMs == nil {
		t.Errorf("completion: %+v %+v", c, run)
	}

	if n := turnOf(t, "turn-not-run-auth"); n.Outcome != report.TurnNotRun || !strings.Contains(n.Reason, "authentication") {
		t.Errorf("auth still refused: outcome %s (%s), want not-run for authentication", n.Outcome, n.Reason)
	}

	s := turnOf(t, "turn-shapes")
	got := map[string]report.ShapeDelivery{}
	for _, d := range s.Shapes {
		got[d.Type] = d
	}
	if d := got["text"]; !d.Advertised || !d.Accepted || !d.Reached {
		t.Errorf("text: %+v, want advertised, accepted, reached", d)
	}
	if d := got["image"]; !d.Advertised || !d.Accepted || d.Reached || strings.Join(d.ReachedAs, ",") != "text" {
		t.Errorf("image: %+v, want advertised, accepted, not reached (reached as text)", d)
	}
	if d := got["audio"]; d.Advertised || !d.Accepted || d.Reached {
		t.Errorf("audio: %+v, want not advertised, accepted, not reached", d)
	}
	if d := got["resource"]; !d.Advertised || d.Accepted || d.Code == nil || *d.Code != -32602 {
		t.Errorf("resource: %+v, want advertised and refused -32602", d)
	}
	if s.Outcome != report.TurnFailed {
		t.Errorf("shapes outcome %s, want failed", s.Outcome)
	}

	m := turnOf(t, "turn-model-not-reached")
	reached := map[string]string{}
	for _, v := range m.Models {
		switch {
		case v.Reached == nil:
			reached[v.Value] = "?"
		case *v.Reached:
			reached[v.Value] = "yes"
		default:
			reached[v.Value] = "no"
		}
	}
	if want := map[string]string{"default": "?", "m-small": "yes", "m-large": "no", "high": "yes"}; len(reached) != len(want) ||
		reached["default"] != "?" || reached["m-small"] != "yes" || reached["m-large"] != "no" || reached["high"] != "yes" {
		t.Errorf("model truth reached %v, want %v", reached, want)
	}

	p := turnOf(t, "turn-permission")
	if len(p.Permission) != 1 {
		t.Fatalf("permission runs %+v, want one", p.Permission)
	}
	if pt := p.Permission[0]; p.Outcome != report.TurnPassed || !pt.Asked || pt.Answered != "reject" || pt.FileWritten || pt.ToolStatus != "failed" || !pt.Offered || !pt.ToolCall {
		t.Errorf("permission: %s %+v", p.Outcome, pt)
	}

	// INFO-only is passed, with notes: a raced cancel, a write in a mode that does not ask.
	for file, note := range map[string]string{"turn-cancel-race": "turn.cancel-race: ", "turn-write-unasked-by-mode": "turn.write-unasked-by-mode: "} {
		tr := turnOf(t, file)
		if tr.Outcome != report.TurnPassed || len(tr.Notes) != 1 || !strings.HasPrefix(tr.Notes[0], note) {
			t.Errorf("%s: %s, notes %q: want passed with the note %s…", file, tr.Outcome, tr.Notes, note)
		}
	}
	if c := turnOf(t, "turn-cancel-race").Cancel; !c.ModelDone || !c.Sent {
		t.Errorf("raced cancel %+v: want sent after the model's answer was done", c)
	}
	if c := turnOf(t, "turn-cancel-ignored").Cancel; c.ModelDone {
		t.Errorf("ignored cancel %+v: the model's answer was still streaming when cancel was sent", c)
	}

	// A scenario on a fresh agent process is read from that connection.
	if f := turnOf(t, "turn-fresh-process"); f.Outcome != report.TurnPassed || f.Cancel == nil || !f.Cancel.Sent || f.Cancel.StopReason != "cancelled" || !f.Cancel.NextText {
		t.Errorf("the cancel scenario on its own agent process: %s %+v", f.Outcome, f.Cancel)
	}

	k := turnOf(t, "turn-cancel-ignored")
	if ct := k.Cancel; k.Outcome != report.TurnFailed || !ct.Sent || ct.StopReason != "end_turn" || ct.WithinMs == nil ||
		ct.NextStopReason != "end_turn" || ct.NextText || ct.NextModelRequests != 0 {
		t.Errorf("cancel: %s %+v", k.Outcome, ct)
	}
}

// The zero-_meta contract as a fact of the report: held when initialize, session/new and a
// prompt turn worked without _meta; broken when an answer demanded metadata; unverified when no
// prompt turn was sent.
func TestZeroMetaFact(t *testing.T) {
	for file, want := range map[string]report.ZeroMetaOutcome{
		"turn-completion":               report.ZeroMetaHeld,
		"extensions-zero-meta-contract": report.ZeroMetaBroken,
		"clean":                         report.ZeroMetaUnverified,
	} {
		facts, _, _ := loadScenario(t, "testdata/scenarios/"+file+".txtar")
		z := facts.Result.ZeroMeta
		if z == nil || z.Outcome != want {
			t.Errorf("%s: zero _meta %+v, want %s", file, z, want)
			continue
		}
		if want == report.ZeroMetaBroken && (z.Reason == "" || !slices.ContainsFunc(z.Steps, func(s report.ZeroMetaStep) bool { return s.Demands != "" })) {
			t.Errorf("%s: broken, but no step names the key it demanded: %+v", file, z)
		}
	}
}
