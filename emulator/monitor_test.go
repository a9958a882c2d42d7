package emulator

import "testing"

// TestPermissionMonitorVerdict: Claude Code's auto mode asks its model whether an MCP call may
// go ahead (a request with the stop sequence </block>); the emulator answers "<block>no" (not
// blocked), recorded as a verdict, whatever the script says, and the script's one tool call
// is still to come. Before, the script answered it (here with the tool call, elsewhere with
// its text), and Claude Code blocked the call ("could not evaluate this action").
func TestPermissionMonitorVerdict(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(WriteFile("/w/f", "x", "done")))
	wc := wireCases[indexOf(Anthropic)]
	monitor := `{"model":"claude-sonnet-5","max_tokens":64,"stop_sequences":["</block>"],"stream":false,
		"tools":[{"name":"Write","input_schema":` + writeSchema + `}],
		"system":[{"type":"text","text":"You are a security monitor. Your ENTIRE response MUST begin with <block>."}],
		"messages":[{"role":"user","content":"<transcript>…</transcript>"}]}`
	for range 2 {
		d := wc.decode(t, post(t, s, Anthropic, wc.path(false), monitor).Body, false)
		if res := <-rec.answered; d.text != "<block>no" || d.tool != "" || res.Answer != "verdict" {
			t.Fatalf("monitor answered %+v, recorded %q", d, res.Answer)
		}
	}
	if d := wc.decode(t, post(t, s, Anthropic, wc.path(false), wc.first(false)).Body, false); d.tool != "Write" {
		t.Errorf("after the verdicts the script's call: %+v", d)
	}
	<-rec.answered
}
