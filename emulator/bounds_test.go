package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestLenientShapes attacks the read of a request of a shape the emulator has not seen: a
// member of another type than the one it reads (a string for a boolean, an object for a
// list, a whole body that is a list). Each is answered like any other request — never 400,
// which an agent reports as an API error or retries — and recorded, saying what was skipped.
func TestLenientShapes(t *testing.T) {
	for _, tc := range []struct {
		dialect    Dialect
		path, body string
		lastText   string
	}{
		{Anthropic, "/v1/messages", `{"model":"m","stream":"yes","max_tokens":"9","tools":{"name":"Write"},"thinking":"adaptive",
			"output_config":{"effort":{"level":"high"}},"messages":[{"role":"user","content":"say hi"}]}`, "say hi"},
		{Anthropic, "/v1/messages", `[{"role":"user","content":"say hi"}]`, ""},
		{OpenAIResponses, "/v1/responses", `{"model":"m","reasoning":"high","tools":[{"type":"function","name":5}],"input":"say hi"}`, "say hi"},
		{OpenAIChat, "/v1/chat/completions", `{"model":"m","stream_options":true,"tools":[{"type":"function","function":"write_file"}],
			"messages":[{"role":"user","content":"say hi"}]}`, "say hi"},
		{Gemini, "/v1beta/models/g:generateContent", `{"contents":[{"role":"user","parts":[{"text":"say hi"}]}],
			"generationConfig":{"thinkingConfig":{"thinkingBudget":"8192"}},"tools":[{"functionDeclarations":{}}]}`, "say hi"},
	} {
		rec := newRecorder()
		s := start(t, rec.options(Text("fine")))
		resp := post(t, s, tc.dialect, tc.path, tc.body)
		wc := wireCases[indexOf(tc.dialect)]
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s %.40s: status %d, want 200", tc.dialect, tc.body, resp.StatusCode)
			<-rec.answered
			continue
		}
		if d := wc.decode(t, resp.Body, false); d.text != "fine" {
			t.Errorf("%s %.40s: answered %+v", tc.dialect, tc.body, d)
		}
		res := <-rec.answered
		req, _ := rec.last()
		if res.Answer != "text" || req.Endpoint != "generate" || req.Dialect != string(tc.dialect) || req.LastUserText != tc.lastText ||
			!strings.HasPrefix(req.Problem, "read leniently, skipping ") || len(req.Body) == 0 {
			t.Errorf("%s %.40s: recorded %q %q %q problem %q, answer %q", tc.dialect, tc.body, req.Endpoint, req.Dialect, req.LastUserText, req.Problem, res.Answer)
		}
	}
}

// indexOf is the index of d's case in wireCases.
func indexOf(d Dialect) int {
	for i, wc := range wireCases {
		if wc.dialect == d {
			return i
		}
	}
	panic("no wire case for " + string(d))
}

// TestToolCallAskedOnce attacks the tool round trip with an agent that sends the same
// conversation again after the tool call, without its result (claude-agent-acp 0.101.0 did,
// and was asked for the write 28 times in one turn): the script asks for its tool once per
// installation, and answers the rest with its text; installing it again asks again.
func TestToolCallAskedOnce(t *testing.T) {
	for _, wc := range wireCases {
		rec := newRecorder()
		script := WriteFile("/work/x.txt", "data\n", "done")
		s := start(t, rec.options(script))
		for i, want := range []string{"tool", "done", "done"} {
			d := wc.decode(t, post(t, s, wc.dialect, wc.path(false), wc.first(false)).Body, false)
			if got := map[bool]string{true: "tool", false: d.text}[d.tool != ""]; got != want {
				t.Errorf("%s: request %d answered %+v, want %s", wc.dialect, i+1, d, want)
			}
			<-rec.answered
		}
		s.SetScript(script)
		if d := wc.decode(t, post(t, s, wc.dialect, wc.path(false), wc.first(false)).Body, false); d.tool == "" {
			t.Errorf("%s: after SetScript the script did not ask for its tool: %+v", wc.dialect, d)
		}
		<-rec.answered
	}
}

// TestModelRequestsBounded attacks the bound on the model requests of one installed script
// with scripts that never stop asking for a tool, or never stop failing (an agent retries a
// 429 or a 5xx): the first 16 requests get what the script says, every later one text, and
// its recorded answer says it was bounded; SetScript starts the count again.
func TestModelRequestsBounded(t *testing.T) {
	always := func(c *Call) Reply {
		use, err := Use(c.Tools[len(c.Tools)-1], nil)
		if err != nil {
			panic(err)
		}
		return Reply{Tool: use}
	}
	for _, tc := range []struct {
		name   string
		script Script
		first  func(*http.Response, decoded) bool
	}{
		{"tool call", always, func(_ *http.Response, d decoded) bool { return d.tool != "" }},
		{"error", Fail(http.StatusServiceUnavailable, "overloaded"), func(r *http.Response, _ decoded) bool { return r.StatusCode == 503 }},
	} {
		for _, wc := range wireCases {
			rec := newRecorder()
			s := start(t, rec.options(tc.script))
			for i := 1; i <= 20; i++ {
				resp := post(t, s, wc.dialect, wc.path(true), wc.first(true))
				var d decoded
				if resp.StatusCode == http.StatusOK {
					d = wc.decode(t, resp.Body, true)
				}
				res := <-rec.answered
				b, _ := json.Marshal(res)
				var m map[string]any
				mustDecode(t, string(b), &m)
				bounded := m["bounded"] == true
				if i <= 16 && (!tc.first(resp, d) || bounded) || i > 16 && (resp.StatusCode != http.StatusOK || d.tool != "" || d.text == "" || !bounded) {
					t.Fatalf("%s %s: request %d: status %d, answered %+v, recorded %s", tc.name, wc.dialect, i, resp.StatusCode, d, b)
				}
			}
			s.SetScript(tc.script)
			resp := post(t, s, wc.dialect, wc.path(true), wc.first(true))
			var d decoded
			if resp.StatusCode == http.StatusOK {
				d = wc.decode(t, resp.Body, true)
			}
			if !tc.first(resp, d) {
				t.Errorf("%s %s: after SetScript: status %d, answered %+v", tc.name, wc.dialect, resp.StatusCode, d)
			}
			<-rec.answered
		}
	}
}
