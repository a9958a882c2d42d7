package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// turnOf evaluates a turn scenario and returns its one turn.
func turnOf(t *testing.T, name string) report.Turn {
	t.Helper()
	x, r, opts, _ := loadScenario(t, "testdata/scenarios/"+name+".txtar")
	out, err := Evaluate(context.Background(), x, r, opts)
	if err != nil {
		t.Fatal(err)
	}
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
	if pt := p.Permission; p.Outcome != report.TurnPassed || !pt.Asked || pt.Answer != "reject" || pt.FileWritten || pt.ToolStatus != "failed" || !pt.Offered || !pt.ToolCall {
		t.Errorf("permission: %s %+v", p.Outcome, pt)
	}

	k := turnOf(t, "turn-cancel-ignored")
	if ct := k.Cancel; k.Outcome != report.TurnFailed || !ct.Sent || ct.StopReason != "end_turn" || ct.WithinMs == nil ||
		ct.NextStopReason != "end_turn" || ct.NextText || ct.NextModelRequests != 0 {
		t.Errorf("cancel: %s %+v", k.Outcome, ct)
	}
}

// names matches a selected value against the model a request asked for, by whole words.
func TestNames(t *testing.T) {
	for _, c := range []struct {
		req, value string
		want       bool
	}{
		{"claude-sonnet-4-6", "sonnet", true},
		{"claude-sonnet-4-6", "sonnet[1m]", true},
		{"claude-opus-4-1", "sonnet", false},
		{"effort=high", "high", true},
		{"effort=xhigh", "high", false},
		{"gpt-5.1-codex", "gpt-5.1-codex", true},
		{"gpt-5.1-codex-mini", "gpt-5.1-codex", true},
		{"models/gemini-2.5-pro", "gemini-2.5-pro", true},
		{"gemini-2.5-flash", "gemini-2.5-pro", false},
		{"m", "", false},
	} {
		if got := names(c.req, c.value); got != c.want {
			t.Errorf("names(%q, %q) = %v, want %v", c.req, c.value, got, c.want)
		}
	}
}

// reached decides by the value a request names best, so that a longer model name is not taken
// for a shorter one, and says nothing for an alias.
func TestReached(t *testing.T) {
	values := []string{"default", "gpt-5.1-codex", "gpt-5.1-codex-mini"}
	show := func(b *bool) string {
		if b == nil {
			return "?"
		}
		if *b {
			return "yes"
		}
		return "no"
	}
	for _, c := range []struct {
		value     string
		requested []string
		want      string
	}{
		{"gpt-5.1-codex", []string{"gpt-5.1-codex"}, "yes"},
		{"gpt-5.1-codex", []string{"gpt-5.1-codex-mini"}, "no"},
		{"gpt-5.1-codex-mini", []string{"gpt-5.1-codex-mini"}, "yes"},
		{"default", []string{"gpt-5.1-codex"}, "?"},
		{"gpt-5.1-codex", nil, "?"},
		{"gpt-5.1-codex", []string{"o3"}, "?"},
	} {
		if got := show(reached(c.value, values, c.requested)); got != c.want {
			t.Errorf("reached(%q, %v) = %s, want %s", c.value, c.requested, got, c.want)
		}
	}
}
