package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// TestTextEveryDialect sends a plain turn in every dialect, streamed and not, and checks the
// answer the agent decodes and the request the emulator recorded.
func TestTextEveryDialect(t *testing.T) {
	for _, wc := range wireCases {
		for _, stream := range []bool{true, false} {
			t.Run(string(wc.dialect)+map[bool]string{true: "/sse", false: "/json"}[stream], func(t *testing.T) {
				rec := newRecorder()
				s := start(t, rec.options(func(*Call) Reply { return Reply{Chunks: []string{"hel", "lo"}} }))
				resp := post(t, s, wc.dialect, wc.path(stream), wc.first(stream))
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if ct := resp.Header.Get("Content-Type"); stream != strings.HasPrefix(ct, "text/event-stream") {
					t.Errorf("Content-Type %q for stream=%v", ct, stream)
				}
				if stream && !resp.Close {
					t.Errorf("a streamed answer must end the connection (Connection: close)")
				}
				d := wc.decode(t, resp.Body, stream)
				if d.text != "hello" || d.tool != "" {
					t.Errorf("decoded %+v, want text hello and no tool", d)
				}
				if want := map[Dialect]string{Anthropic: "end_turn", OpenAIResponses: "completed", OpenAIChat: "stop", Gemini: "STOP"}[wc.dialect]; d.stop != want {
					t.Errorf("stop %q, want %q", d.stop, want)
				}
				if stream && d.deltas != 2 {
					t.Errorf("%d text deltas, want 2", d.deltas)
				}
				res := <-rec.answered
				req, _ := rec.last()
				if req.Dialect != string(wc.dialect) || req.Endpoint != "generate" || req.Stream != stream || req.Credential != "dummy" {
					t.Errorf("recorded dialect %q endpoint %q stream %v credential %q", req.Dialect, req.Endpoint, req.Stream, req.Credential)
				}
				if !strings.HasSuffix(req.Model, "-test") {
					t.Errorf("model %q", req.Model)
				}
				if len(req.Tools) < 2 || !slices.Contains(req.Tools, "write_file") && !slices.Contains(req.Tools, "Write") {
					t.Errorf("tools %v", req.Tools)
				}
				if req.LastUserText != "say hi" || req.LastUserKinds[0] != "text" || req.Structured || len(req.ToolResults) != 0 {
					t.Errorf("last user %q %v structured %v results %v", req.LastUserText, req.LastUserKinds, req.Structured, req.ToolResults)
				}
				if !json.Valid(req.Body) || req.BodySize != len(req.Body) || req.Seq != 1 {
					t.Errorf("body %d bytes (size %d), seq %d", len(req.Body), req.BodySize, req.Seq)
				}
				if res.Seq != 1 || res.Answer != "text" || !res.Complete || res.Status != 200 || res.Chunks != 2 {
					t.Errorf("response %+v", res)
				}
			})
		}
	}
}

// TestRecordedDetails checks the dialect-specific fields of the record.
func TestRecordedDetails(t *testing.T) {
	want := map[Dialect]struct {
		tools     []string
		kinds     []string
		reasoning string
	}{
		Anthropic:       {[]string{"Edit", "Write"}, []string{"text", "image"}, ""},
		OpenAIResponses: {[]string{"exec_command", "write_file", "web_search"}, []string{"text"}, "effort=high"},
		OpenAIChat:      {[]string{"read_file", "write_file"}, []string{"text", "audio"}, ""},
		Gemini:          {[]string{"read_file", "write_file", "googleSearch"}, []string{"text", "inlineData:audio/wav"}, "thinkingBudget=8192 includeThoughts"},
	}
	for _, wc := range wireCases {
		rec := newRecorder()
		s := start(t, rec.options(nil))
		post(t, s, wc.dialect, wc.path(false), wc.first(false))
		<-rec.answered
		req, _ := rec.last()
		w := want[wc.dialect]
		if !slices.Equal(req.Tools, w.tools) || !slices.Equal(req.LastUserKinds, w.kinds) || req.Reasoning != w.reasoning {
			t.Errorf("%s: tools %v kinds %v reasoning %q, want %v %v %q", wc.dialect, req.Tools, req.LastUserKinds, req.Reasoning, w.tools, w.kinds, w.reasoning)
		}
		if wc.dialect == Anthropic && req.Query != "beta=true" {
			t.Errorf("query %q", req.Query)
		}
		if wc.dialect == Gemini && req.Model != "gemini-test" {
			t.Errorf("Gemini model from the path: %q", req.Model)
		}
	}
}

// TestToolRoundTrip: the model calls the agent's Write tool with arguments built from the
// tool's schema; the follow-up request carries the tool result, which the script sees and
// answers with text.
func TestToolRoundTrip(t *testing.T) {
	for _, wc := range wireCases {
		for _, stream := range []bool{true, false} {
			t.Run(string(wc.dialect)+map[bool]string{true: "/sse", false: "/json"}[stream], func(t *testing.T) {
				rec := newRecorder()
				var seen []record.ToolResult
				script := WriteFile("/work/x.txt", "data\n", "done")
				s := start(t, rec.options(func(c *Call) Reply {
					seen = append(seen, c.Request.ToolResults...)
					return script(c)
				}))
				d := wc.decode(t, post(t, s, wc.dialect, wc.path(stream), wc.first(stream)).Body, stream)
				if d.tool != "write_file" && d.tool != "Write" {
					t.Fatalf("decoded %+v: want a call of the Write tool", d)
				}
				var args map[string]any
				mustDecode(t, d.args, &args)
				if args["file_path"] != "/work/x.txt" || args["content"] != "data\n" || args["mode"] != "create" || len(args) != 3 {
					t.Errorf("arguments %v: want file_path, content and the required enum at its first value", args)
				}
				if want := map[Dialect]string{Anthropic: "tool_use", OpenAIResponses: "completed", OpenAIChat: "tool_calls", Gemini: "STOP"}[wc.dialect]; d.stop != want {
					t.Errorf("stop %q, want %q", d.stop, want)
				}
				res := <-rec.answered
				if res.Answer != "toolCall" || res.Tool != d.tool || res.ToolCallID != d.callID || d.callID == "" {
					t.Errorf("response %+v, decoded call id %q", res, d.callID)
				}
				d2 := wc.decode(t, post(t, s, wc.dialect, wc.path(stream), wc.followup(stream, d.callID)).Body, stream)
				if d2.text != "done" || d2.tool != "" {
					t.Errorf("follow-up decoded %+v, want text done", d2)
				}
				<-rec.answered
				req, _ := rec.last()
				if len(req.ToolResults) != 1 || len(seen) != 1 {
					t.Fatalf("recorded %v, script saw %v: want one result", req.ToolResults, seen)
				}
				r := req.ToolResults[0]
				if r.CallID != d.callID || r.Name != "write_file" && r.Name != "Write" || !r.Latest || r.Content == "" {
					t.Errorf("tool result %+v", r)
				}
				if wc.dialect == Anthropic && !r.IsError {
					t.Errorf("is_error lost: %+v", r)
				}
			})
		}
	}
}

// TestStructuredOutput: a request constrained to a schema gets an object that satisfies it,
// whatever the script says — including gemini-cli's router request.
func TestStructuredOutput(t *testing.T) {
	router := `{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},"required":["complexity_reasoning","complexity_score"]}`
	schema := `{"type":"object","properties":{"model_choice":{"type":"string","enum":["flash","pro"]},"reasoning":{"type":"string","minLength":3},"n":{"type":"integer","minimum":5}},"required":["model_choice","reasoning","n"],"additionalProperties":false}`
	cases := []struct {
		dialect    Dialect
		path, body string
		schema     string
		stream     bool
	}{
		{Gemini, "/v1beta/models/flash-lite:generateContent", `{"contents":[{"role":"user","parts":[{"text":"route"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":` + router + `}}`, router, false},
		{Gemini, "/v1beta/models/flash-lite:generateContent", `{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseSchema":` + schema + `}}`, schema, false},
		{Gemini, "/v1beta/models/flash-lite:streamGenerateContent?alt=sse", `{"contents":[],"generationConfig":{"responseMimeType":"application/json"}}`, `{"type":"object"}`, true},
		{Anthropic, "/v1/messages", `{"model":"m","messages":[],"output_format":{"type":"json_schema","schema":` + schema + `}}`, schema, false},
		{Anthropic, "/v1/messages", `{"model":"m","stream":true,"messages":[],"output_config":{"format":{"type":"json_schema","schema":` + schema + `}}}`, schema, true},
		{OpenAIResponses, "/v1/responses", `{"model":"m","stream":true,"input":"x","text":{"format":{"type":"json_schema","name":"x","schema":` + schema + `}}}`, schema, true},
		{OpenAIChat, "/v1/chat/completions", `{"model":"m","messages":[],"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":` + schema + `}}}`, schema, false},
		{OpenAIChat, "/v1/chat/completions", `{"model":"m","messages":[],"response_format":{"type":"json_object"}}`, `{"type":"object"}`, false},
	}
	for i, tc := range cases {
		rec := newRecorder()
		s := start(t, rec.options(Slow(time.Hour, "not", "json")))
		wc := wireCases[indexOf(tc.dialect)]
		d := wc.decode(t, post(t, s, tc.dialect, tc.path, tc.body).Body, tc.stream)
		validate(t, tc.schema, d.text)
		res := <-rec.answered
		req, _ := rec.last()
		if !req.Structured || res.Answer != "structured" || !res.Complete {
			t.Errorf("case %d: structured %v, answer %+v", i, req.Structured, res)
		}
	}
}

// TestUnknownEndpoints: anything the emulator does not serve is recorded and answered 404;
// count_tokens endpoints are served.
func TestUnknownEndpoints(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(nil))
	for _, tc := range []struct {
		method, path string
		status       int
		endpoint     string
	}{
		{"GET", "/v1/models", 404, "unknown"},
		{"HEAD", "/", 404, "unknown"},
		{"GET", "/v1/messages", 404, "unknown"},
		{"POST", "/api/event_logging/batch", 404, "unknown"},
		{"POST", "/v1beta/models/x:embedContent", 404, "unknown"},
		{"POST", "/v1/messages/count_tokens", 200, "countTokens"},
		{"POST", "/v1beta/models/gemini-test:countTokens", 200, "countTokens"},
	} {
		req, _ := http.NewRequest(tc.method, s.URL()+tc.path+"?key=SECRET123&x=1", strings.NewReader(`{"model":"m","messages":[]}`))
		req.Header.Set("Cookie", "session=abc")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res := <-rec.answered
		got, _ := rec.last()
		if resp.StatusCode != tc.status || res.Status != tc.status || got.Endpoint != tc.endpoint || got.Path != tc.path || got.Method != tc.method {
			t.Errorf("%s %s: status %d (recorded %d), endpoint %q, path %q", tc.method, tc.path, resp.StatusCode, res.Status, got.Endpoint, got.Path)
		}
		if tc.method != "HEAD" && !json.Valid(body) {
			t.Errorf("%s %s: answer is not JSON: %q", tc.method, tc.path, body)
		}
		if got.Query != "key=[redacted]&x=1" || got.Credential != "other" || got.Headers["Cookie"] != nil {
			t.Errorf("%s: query %q credential %q cookie %v: secrets must not be recorded", tc.path, got.Query, got.Credential, got.Headers["Cookie"])
		}
	}
}

// TestSecretsNotRecorded: credential headers never reach the record; a foreign credential
// is flagged, not kept.
func TestSecretsNotRecorded(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(nil))
	req, _ := http.NewRequest("POST", s.URL()+"/v1/messages", strings.NewReader(`{"model":"m","messages":[]}`))
	for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Proxy-Authorization", "Cookie", "X-Session-Token", "Openai-Secret", "Api-Key"} {
		req.Header.Set(h, "sk-real-credential-0123456789")
	}
	req.Header.Set("Anthropic-Version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	<-rec.answered
	got, _ := rec.last()
	b, _ := json.Marshal(got)
	if strings.Contains(string(b), "real-credential") {
		t.Errorf("a secret reached the record: %s", b)
	}
	if got.Credential != "other" || got.Headers["Anthropic-Version"] == nil {
		t.Errorf("credential %q, headers %v", got.Credential, got.Headers)
	}
}

// TestOversizeBody: a body over MaxBody is answered 413 and recorded with its problem.
func TestOversizeBody(t *testing.T) {
	rec := newRecorder()
	opts := rec.options(nil)
	opts.MaxBody = 1024
	s := start(t, opts)
	resp := post(t, s, Anthropic, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"`+strings.Repeat("x", 4096)+`"}]}`)
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
	res := <-rec.answered
	got, _ := rec.last()
	if !strings.Contains(got.Problem, "larger than 1024") || got.BodySize > 1024 || got.Body != nil || res.Answer != "error" {
		t.Errorf("recorded problem %q size %d; response %+v", got.Problem, got.BodySize, res)
	}
}

// TestBadBody: a body that is not the dialect's JSON is recorded and answered 400.
func TestBadBody(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(nil))
	resp := post(t, s, OpenAIChat, "/v1/chat/completions", "\xff not json")
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("status %d, want 400", resp.StatusCode)
	}
	<-rec.answered
	got, _ := rec.last()
	if got.Problem == "" || got.BodyText != "\uFFFD not json" || got.Body != nil {
		t.Errorf("problem %q body %q text %q", got.Problem, got.Body, got.BodyText)
	}
}

// TestErrorReply: a scripted API error has the dialect's status and shape.
func TestErrorReply(t *testing.T) {
	for _, wc := range wireCases {
		rec := newRecorder()
		s := start(t, rec.options(Fail(http.StatusTooManyRequests, "slow down")))
		resp := post(t, s, wc.dialect, wc.path(true), wc.first(true))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 429 || !strings.Contains(string(body), "slow down") {
			t.Errorf("%s: %d %s", wc.dialect, resp.StatusCode, body)
		}
		var shape struct {
			Type  string `json:"type"`
			Error struct {
				Type   string `json:"type"`
				Status string `json:"status"`
				Code   any    `json:"code"`
			} `json:"error"`
		}
		mustDecode(t, string(body), &shape)
		want := map[Dialect]string{Anthropic: "rate_limit_error", OpenAIResponses: "rate_limit_exceeded", OpenAIChat: "rate_limit_exceeded", Gemini: "RESOURCE_EXHAUSTED"}[wc.dialect]
		if shape.Error.Type != want && shape.Error.Status != want {
			t.Errorf("%s: error %+v, want %s", wc.dialect, shape.Error, want)
		}
		if res := <-rec.answered; res.Answer != "error" || res.Status != 429 {
			t.Errorf("%s: response %+v", wc.dialect, res)
		}
	}
}

// TestGeminiStreamWithoutSSE: streamGenerateContent without alt=sse is one JSON array.
func TestGeminiStreamWithoutSSE(t *testing.T) {
	s := start(t, Options{Script: func(*Call) Reply { return Reply{Chunks: []string{"a", "b"}} }})
	resp := post(t, s, Gemini, "/v1beta/models/g:streamGenerateContent", `{"contents":[{"parts":[{"text":"x"}]}]}`)
	var chunks []map[string]any
	b, _ := io.ReadAll(resp.Body)
	mustDecode(t, string(b), &chunks)
	if len(chunks) != 2 {
		t.Errorf("%d chunks, want 2: %s", len(chunks), b)
	}
}

// TestCancelStopsWriting: when the agent drops a slow stream, the emulator stops at once
// and records an incomplete answer.
func TestCancelStopsWriting(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(string(wc.dialect), func(t *testing.T) {
			rec := newRecorder()
			s := start(t, rec.options(Slow(time.Hour, "first", "never")))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", s.URL()+wc.path(true), strings.NewReader(wc.first(true)))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(resp.Body)
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("stream ended before the first chunk: %v", err)
				}
				if strings.Contains(line, "first") {
					break
				}
			}
			cancel()
			resp.Body.Close()
			res := <-rec.answered
			if res.Complete || res.Chunks != 1 || !strings.Contains(res.Problem, "cut short") {
				t.Errorf("response %+v: want incomplete after 1 chunk", res)
			}
		})
	}
}

// TestCloseLeavesNothing: Close ends an answer in progress, returns once every handler has
// returned, and leaves no goroutine behind; a second Close is harmless; the context given
// to Start closes the emulator too.
func TestCloseLeavesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	rec := newRecorder()
	s, err := Start(context.Background(), rec.options(Slow(time.Hour, "a", "b")))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for line, _ := br.ReadString('\n'); !strings.Contains(line, "text_delta"); line, err = br.ReadString('\n') {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if res := <-rec.answered; res.Complete {
		t.Errorf("answer in progress at Close reported complete: %+v", res)
	}
	_, _ = io.ReadAll(br) // returns: the body ended, cleanly or not
	resp.Body.Close()
	_ = s.Close()
	if _, err := http.Get(s.URL() + "/"); err == nil {
		t.Errorf("the emulator still answers after Close")
	}

	ctx, cancel := context.WithCancel(context.Background())
	s2, err := Start(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := http.Get(s2.URL() + "/")
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the emulator still answers after its context ended")
		}
		runtime.Gosched()
	}
	_ = s2.Close()

	http.DefaultClient.CloseIdleConnections()
	for {
		n := runtime.NumGoroutine()
		if n <= before {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines after Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}

// TestSetScript: a new script applies to the next request.
func TestSetScript(t *testing.T) {
	s := start(t, Options{Script: Text("one")})
	wc := wireCases[0]
	if d := wc.decode(t, post(t, s, Anthropic, "/v1/messages", wc.first(false)).Body, false); d.text != "one" {
		t.Errorf("text %q", d.text)
	}
	s.SetScript(Text("two"))
	if d := wc.decode(t, post(t, s, Anthropic, "/v1/messages", wc.first(false)).Body, false); d.text != "two" {
		t.Errorf("text %q", d.text)
	}
}

// TestRequestJSON: the record serialises with stable camelCase names.
func TestRequestJSON(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(nil))
	post(t, s, wireCases[0].dialect, wireCases[0].path(true), wireCases[0].followup(true, "toolu_1"))
	<-rec.answered
	got, res := rec.last()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	mustDecode(t, string(b), &m)
	for _, k := range []string{"seq", "time", "method", "path", "query", "dialect", "endpoint", "model", "stream", "tools", "toolResults", "credential", "headers", "bodySize", "body", "lastUserKinds"} {
		if _, ok := m[k]; !ok {
			t.Errorf("key %q missing from %s", k, b)
		}
	}
	var back record.ModelRequestInfo
	mustDecode(t, string(b), &back)
	if back.Seq != got.Seq || back.ToolResults[0].CallID != "toolu_1" || !back.Time.Equal(got.Time) {
		t.Errorf("round trip lost data: %+v", back)
	}
	rb, _ := json.Marshal(res)
	for _, k := range []string{`"seq"`, `"status"`, `"answer"`, `"chunks"`, `"complete"`} {
		if !strings.Contains(string(rb), k) {
			t.Errorf("response JSON %s lacks %s", rb, k)
		}
	}
}

// TestBodyTimeout: the body read is bounded, but the bound does not cut a slow stream that
// lasts longer than it.
func TestBodyTimeout(t *testing.T) {
	rec := newRecorder()
	opts := rec.options(Slow(40*time.Millisecond, "a", "b", "c", "d"))
	opts.bodyTimeout = 20 * time.Millisecond
	s := start(t, opts)
	d := wireCases[0].decode(t, post(t, s, Anthropic, "/v1/messages", wireCases[0].first(true)).Body, true)
	if res := <-rec.answered; !res.Complete || res.Chunks != 4 || d.text != "abcd" {
		t.Errorf("a stream longer than the body timeout was cut: %+v, text %q", res, d.text)
	}

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { _, _ = pw.Write([]byte(`{"model":`)) }() // and never more
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", pr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	res := <-rec.answered
	got, _ := rec.last()
	if resp.StatusCode != http.StatusBadRequest || res.Status != http.StatusBadRequest || !strings.Contains(got.Problem, "cannot read body") {
		t.Errorf("a body that never ends: status %d, recorded %+v / %q", resp.StatusCode, res, got.Problem)
	}
}

// TestThought: the model's reasoning reaches the agent in each dialect's form, apart from
// its text, before it.
func TestThought(t *testing.T) {
	for _, wc := range wireCases {
		for _, stream := range []bool{true, false} {
			rec := newRecorder()
			s := start(t, rec.options(func(*Call) Reply { return Reply{Thought: "pondering", Text: "hi"} }))
			d := wc.decode(t, post(t, s, wc.dialect, wc.path(stream), wc.first(stream)).Body, stream)
			if d.thought != "pondering" || d.text != "hi" {
				t.Errorf("%s stream=%v: thought %q text %q", wc.dialect, stream, d.thought, d.text)
			}
			if res := <-rec.answered; !res.Thought || !res.Complete {
				t.Errorf("%s stream=%v: response %+v", wc.dialect, stream, res)
			}
		}
	}
}

// TestLastUserTextKeepsTheUsersWords: agents put long context of their own (a skills list,
// system reminders) in the same user message, before the user's words. LastUserText keeps the
// start of each text part and the latest parts, so the user's words are in it whatever came
// before them, and it stays within its cap.
func TestLastUserTextKeepsTheUsersWords(t *testing.T) {
	long := strings.Repeat("skill list ", 3000) // 33 KB, like qwen-code's first prompt
	many := make([]string, 12)
	for i := range many {
		many[i] = fmt.Sprintf("part %02d %s", i, strings.Repeat("x", 400))
	}
	bodies := map[Dialect]func(parts []string) string{
		Anthropic: func(parts []string) string {
			return fmt.Sprintf(`{"model":"m","max_tokens":9,"messages":[{"role":"user","content":[%s]}]}`, join(parts, `{"type":"text","text":%q}`))
		},
		OpenAIResponses: func(parts []string) string {
			return fmt.Sprintf(`{"model":"m","input":[{"role":"user","content":[%s]}]}`, join(parts, `{"type":"input_text","text":%q}`))
		},
		OpenAIChat: func(parts []string) string {
			return fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":[%s]}]}`, join(parts, `{"type":"text","text":%q}`))
		},
		Gemini: func(parts []string) string {
			return fmt.Sprintf(`{"contents":[{"role":"user","parts":[%s]}]}`, join(parts, `{"text":%q}`))
		},
	}
	for _, wc := range wireCases {
		rec := newRecorder()
		s := start(t, rec.options(nil))
		post(t, s, wc.dialect, wc.path(false), bodies[wc.dialect]([]string{long, "a text block naming acpprobe-shape.txt", "Reply with one short line."}))
		<-rec.answered
		req, _ := rec.last()
		want := long[:maxPartExcerpt] + "\na text block naming acpprobe-shape.txt\nReply with one short line."
		if req.LastUserText != want {
			t.Errorf("%s: LastUserText %q…%q (%d bytes), want the start of the long part and the user's words", wc.dialect,
				req.LastUserText[:min(40, len(req.LastUserText))], req.LastUserText[max(0, len(req.LastUserText)-60):], len(req.LastUserText))
		}

		post(t, s, wc.dialect, wc.path(false), bodies[wc.dialect](many))
		<-rec.answered
		req, _ = rec.last()
		lines := strings.Split(req.LastUserText, "\n")
		if len(req.LastUserText) > maxExcerpt || len(lines) != 5 || lines[0] != many[7] || lines[4] != many[11] {
			t.Errorf("%s: %d bytes, %d parts from %.7q to %.7q; want the last 5 parts (408 bytes each) whole within %d bytes", wc.dialect,
				len(req.LastUserText), len(lines), lines[0], lines[len(lines)-1], maxExcerpt)
		}
	}
}

// join formats each of parts with format and joins them with commas.
func join(parts []string, format string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = fmt.Sprintf(format, p)
	}
	return strings.Join(out, ",")
}

// TestChatReasoningForms: Chat Completions carries the reasoning effort as reasoning_effort
// (OpenAI) or as reasoning.effort (OpenRouter's form, sent by qwen-code 0.24.4); both are
// recorded the same way.
func TestChatReasoningForms(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(nil))
	for _, tc := range []struct{ extra, want string }{
		{`"reasoning_effort":"low"`, "effort=low"},
		{`"reasoning":{"effort":"xhigh"}`, "effort=xhigh"},
		{`"reasoning":{}`, ""},
		{`"reasoning":true`, ""},
	} {
		post(t, s, OpenAIChat, "/v1/chat/completions", `{"model":"m",`+tc.extra+`,"messages":[{"role":"user","content":"say hi"}]}`)
		<-rec.answered
		if req, _ := rec.last(); req.Reasoning != tc.want {
			t.Errorf("%s: reasoning %q, want %q", tc.extra, req.Reasoning, tc.want)
		}
	}
}

// TestServeHandedOverListener: a listener given to Serve answers from the same Script and
// records through the same callbacks, in one sequence with the emulator's own address; Close
// closes it, and one given after Close is closed at once.
func TestServeHandedOverListener(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(Text("both")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(ln)
	wc := wireCases[0]
	for _, base := range []string{s.URL(), "http://" + ln.Addr().String()} {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/messages", strings.NewReader(wc.first(false)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", DummyKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if d := wc.decode(t, resp.Body, false); d.text != "both" {
			t.Errorf("%s: text %q", base, d.text)
		}
		resp.Body.Close()
		<-rec.answered
	}
	rec.mu.Lock()
	if len(rec.requests) != 2 || rec.requests[0].Seq+1 != rec.requests[1].Seq || rec.requests[1].Credential != "dummy" {
		t.Errorf("requests %+v, want two in one sequence, the second with the dummy key", rec.requests)
	}
	rec.mu.Unlock()
	_ = s.Close()
	http.DefaultClient.CloseIdleConnections()
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("the handed-over listener still accepts after Close")
	}
	late, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Serve(late)
	if _, err := late.Accept(); err == nil {
		t.Error("a listener given after Close was not closed")
	}
}

// TestEveryDialectOnOnePort: one emulator answers every dialect it speaks, at the paths the
// SDKs post to with a base URL given with /v1, without it, or under a prefix; each recorded
// request says its dialect. It is what the auto backend rests on.
func TestEveryDialectOnOnePort(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(Text("one port")))
	paths := map[Dialect][]string{
		Anthropic:       {"/v1/messages?beta=true", "/messages", "/anthropic/v1/messages"},
		OpenAIResponses: {"/v1/responses", "/responses", "/openai/v1/responses"},
		OpenAIChat:      {"/v1/chat/completions", "/chat/completions", "/openai/chat/completions"},
		Gemini:          {"/v1beta/models/gemini-test:generateContent", "/models/gemini-test:generateContent", "/v1/models/gemini-test:generateContent"},
	}
	for _, wc := range wireCases {
		for _, path := range paths[wc.dialect] {
			resp := post(t, s, wc.dialect, path, wc.first(false))
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s %s: status %d", wc.dialect, path, resp.StatusCode)
			} else if d := wc.decode(t, resp.Body, false); d.text != "one port" {
				t.Errorf("%s %s: answered %+v", wc.dialect, path, d)
			}
			<-rec.answered
			if req, _ := rec.last(); req.Dialect != string(wc.dialect) || req.Endpoint != "generate" {
				t.Errorf("%s %s: recorded dialect %q endpoint %q", wc.dialect, path, req.Dialect, req.Endpoint)
			}
		}
	}
	for _, path := range []string{"/messages/count_tokens", "/v1/messages/count_tokens", "/models/gemini-test:countTokens"} {
		resp := post(t, s, Anthropic, path, `{"model":"m","messages":[]}`)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", path, resp.StatusCode)
		}
		<-rec.answered
		if req, _ := rec.last(); req.Endpoint != "countTokens" {
			t.Errorf("%s: endpoint %q", path, req.Endpoint)
		}
	}
}
