package emulator

import (
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
