package emulator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/acpprobe/acpprobe/record"
)

// This file plays the agent: it builds each dialect's requests and decodes the emulator's
// answers (SSE parsed line by line), so every dialect is tested end to end over HTTP.

// writeSchema is the input schema of the Write-like tool every test request offers.
const writeSchema = `{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"},"mode":{"type":"string","enum":["create","overwrite"]}},"required":["file_path","content","mode"],"additionalProperties":false}`

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data string
}

// readSSE parses a text/event-stream body into events; it fails on a line that is neither a
// field nor blank, and on data that is not JSON (except [DONE]).
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" || cur.name != "" {
				if cur.data != "[DONE]" && !json.Valid([]byte(cur.data)) {
					t.Fatalf("SSE data is not JSON: %q", cur.data)
				}
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("SSE line neither field nor blank: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading SSE: %v", err)
	}
	if cur.data != "" {
		t.Fatalf("SSE body ends inside an event: %+v", cur)
	}
	return out
}

// decoded is an answer as the agent understands it.
type decoded struct {
	thought string // the model's reasoning, apart from its text
	text    string
	deltas  int // text deltas seen (streams)
	tool    string
	callID  string
	args    string // JSON object, or the free-form input
	stop    string // stop_reason / finish_reason / status
}

// wireCase is one dialect as seen by its client.
type wireCase struct {
	dialect Dialect
	path    func(stream bool) string
	// first is a request with a user prompt and the Write tool offered; followup continues
	// it with the model's call callID and the tool's result.
	first    func(stream bool) string
	followup func(stream bool, callID string) string
	decode   func(t *testing.T, body io.Reader, stream bool) decoded
}

func mustDecode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %q: %v", s, err)
	}
}

var wireCases = []wireCase{
	{
		dialect: Anthropic,
		path:    func(bool) string { return "/v1/messages?beta=true" },
		first: func(stream bool) string {
			return fmt.Sprintf(`{"model":"claude-test","stream":%v,"max_tokens":100,"tools":[{"name":"Edit","input_schema":{"type":"object"}},{"name":"Write","input_schema":%s}],
				"messages":[{"role":"user","content":[{"type":"text","text":"say hi"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}]}`, stream, writeSchema)
		},
		followup: func(stream bool, id string) string {
			return fmt.Sprintf(`{"model":"claude-test","stream":%v,"tools":[{"name":"Write","input_schema":%s}],"messages":[
				{"role":"user","content":"say hi"},
				{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":"Write","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"is_error":true,"content":"User refused permission"}]}]}`, stream, writeSchema, id, id)
		},
		decode: func(t *testing.T, body io.Reader, stream bool) decoded {
			var d decoded
			type block struct {
				Type     string          `json:"type"`
				Thinking string          `json:"thinking"`
				Text     string          `json:"text"`
				ID       string          `json:"id"`
				Name     string          `json:"name"`
				Input    json.RawMessage `json:"input"`
			}
			if !stream {
				var m struct {
					Type       string  `json:"type"`
					Content    []block `json:"content"`
					StopReason string  `json:"stop_reason"`
				}
				b, _ := io.ReadAll(body)
				mustDecode(t, string(b), &m)
				for _, c := range m.Content {
					switch c.Type {
					case "thinking":
						d.thought += c.Thinking
					case "text":
						d.text += c.Text
					case "tool_use":
						d.tool, d.callID, d.args = c.Name, c.ID, string(c.Input)
					}
				}
				d.stop = m.StopReason
				return d
			}
			evs := readSSE(t, body)
			var names []string
			for _, e := range evs {
				names = append(names, e.name)
				var ev struct {
					Type         string `json:"type"`
					ContentBlock block  `json:"content_block"`
					Delta        struct {
						Type        string `json:"type"`
						Thinking    string `json:"thinking"`
						Text        string `json:"text"`
						PartialJSON string `json:"partial_json"`
						StopReason  string `json:"stop_reason"`
					} `json:"delta"`
				}
				mustDecode(t, e.data, &ev)
				if ev.Type != e.name {
					t.Errorf("event %q carries type %q", e.name, ev.Type)
				}
				switch {
				case ev.Type == "content_block_start" && ev.ContentBlock.Type == "tool_use":
					d.tool, d.callID = ev.ContentBlock.Name, ev.ContentBlock.ID
				case ev.Delta.Type == "thinking_delta":
					d.thought += ev.Delta.Thinking
				case ev.Delta.Type == "text_delta":
					d.text += ev.Delta.Text
					d.deltas++
				case ev.Delta.Type == "input_json_delta":
					d.args += ev.Delta.PartialJSON
				case ev.Type == "message_delta":
					d.stop = ev.Delta.StopReason
				}
			}
			if names[0] != "message_start" || names[len(names)-1] != "message_stop" {
				t.Errorf("events %v: want message_start … message_stop", names)
			}
			return d
		},
	},
	{
		dialect: OpenAIResponses,
		path:    func(bool) string { return "/v1/responses" },
		first: func(stream bool) string {
			return fmt.Sprintf(`{"model":"gpt-test","stream":%v,"reasoning":{"effort":"high"},"tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},{"type":"function","name":"write_file","parameters":%s},{"type":"web_search"}],
				"input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]},{"type":"message","role":"user","content":[{"type":"input_text","text":"say hi"}]}]}`, stream, writeSchema)
		},
		followup: func(stream bool, id string) string {
			return fmt.Sprintf(`{"model":"gpt-test","stream":%v,"tools":[{"type":"function","name":"write_file","parameters":%s}],"input":[
				{"role":"user","content":"say hi"},
				{"type":"function_call","call_id":%q,"name":"write_file","arguments":"{}"},
				{"type":"function_call_output","call_id":%q,"output":"rejected by the user"}]}`, stream, writeSchema, id, id)
		},
		decode: func(t *testing.T, body io.Reader, stream bool) decoded {
			var d decoded
			type item struct {
				Type      string `json:"type"`
				CallID    string `json:"call_id"`
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
				Input     string `json:"input"`
				Content   []struct {
					Text string `json:"text"`
				} `json:"content"`
				Summary []struct {
					Text string `json:"text"`
				} `json:"summary"`
			}
			type response struct {
				Status string `json:"status"`
				Output []item `json:"output"`
				Usage  *struct {
					TotalTokens int `json:"total_tokens"`
				} `json:"usage"`
			}
			fromOutput := func(r response) {
				for _, it := range r.Output {
					switch it.Type {
					case "function_call":
						d.tool, d.callID, d.args = it.Name, it.CallID, it.Arguments
					case "custom_tool_call":
						d.tool, d.callID, d.args = it.Name, it.CallID, it.Input
					}
					for _, s := range it.Summary {
						d.thought += s.Text
					}
				}
				d.stop = r.Status
				if r.Usage == nil || r.Usage.TotalTokens <= 0 {
					t.Errorf("completed response without usage")
				}
			}
			if !stream {
				var r response
				b, _ := io.ReadAll(body)
				mustDecode(t, string(b), &r)
				for _, it := range r.Output {
					for _, c := range it.Content {
						d.text += c.Text
					}
				}
				fromOutput(r)
				return d
			}
			evs := readSSE(t, body)
			for i, e := range evs {
				var ev struct {
					Type     string   `json:"type"`
					Seq      int      `json:"sequence_number"`
					Delta    string   `json:"delta"`
					Response response `json:"response"`
				}
				mustDecode(t, e.data, &ev)
				if ev.Type != e.name || ev.Seq != i {
					t.Errorf("event %d %q: type %q sequence_number %d", i, e.name, ev.Type, ev.Seq)
				}
				switch ev.Type {
				case "response.output_text.delta":
					d.text += ev.Delta
					d.deltas++
				case "response.completed":
					d.thought = "" // the completed response repeats the summary
					fromOutput(ev.Response)
				}
			}
			if evs[0].name != "response.created" || evs[len(evs)-1].name != "response.completed" {
				t.Errorf("want response.created … response.completed, got %s … %s", evs[0].name, evs[len(evs)-1].name)
			}
			return d
		},
	},
	{
		dialect: OpenAIChat,
		path:    func(bool) string { return "/v1/chat/completions" },
		first: func(stream bool) string {
			return fmt.Sprintf(`{"model":"chat-test","stream":%v,"stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}},{"type":"function","function":{"name":"write_file","parameters":%s}}],
				"messages":[{"role":"system","content":"rules"},{"role":"user","content":[{"type":"text","text":"say hi"},{"type":"input_audio","input_audio":{}}]}]}`, stream, writeSchema)
		},
		followup: func(stream bool, id string) string {
			return fmt.Sprintf(`{"model":"chat-test","stream":%v,"tools":[{"type":"function","function":{"name":"write_file","parameters":%s}}],"messages":[
				{"role":"user","content":"say hi"},
				{"role":"assistant","content":null,"tool_calls":[{"id":%q,"type":"function","function":{"name":"write_file","arguments":"{}"}}]},
				{"role":"tool","tool_call_id":%q,"content":"rejected"}]}`, stream, writeSchema, id, id)
		},
		decode: func(t *testing.T, body io.Reader, stream bool) decoded {
			var d decoded
			type call struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			}
			if !stream {
				var r struct {
					Object  string `json:"object"`
					Choices []struct {
						Message struct {
							Content          *string `json:"content"`
							ReasoningContent string  `json:"reasoning_content"`
							ToolCalls        []call  `json:"tool_calls"`
						} `json:"message"`
						FinishReason string `json:"finish_reason"`
					} `json:"choices"`
				}
				b, _ := io.ReadAll(body)
				mustDecode(t, string(b), &r)
				m := r.Choices[0].Message
				d.thought = m.ReasoningContent
				if m.Content != nil {
					d.text = *m.Content
				}
				for _, c := range m.ToolCalls {
					d.tool, d.callID, d.args = c.Function.Name, c.ID, c.Function.Arguments
				}
				d.stop = r.Choices[0].FinishReason
				return d
			}
			evs := readSSE(t, body)
			if last := evs[len(evs)-1]; last.data != "[DONE]" {
				t.Errorf("last chunk %q, want [DONE]", last.data)
			}
			usage := false
			for _, e := range evs[:len(evs)-1] {
				var c struct {
					Object  string `json:"object"`
					Choices []struct {
						Delta struct {
							Content          *string `json:"content"`
							ReasoningContent string  `json:"reasoning_content"`
							ToolCalls        []call  `json:"tool_calls"`
						} `json:"delta"`
						FinishReason *string `json:"finish_reason"`
					} `json:"choices"`
					Usage json.RawMessage `json:"usage"`
				}
				mustDecode(t, e.data, &c)
				if c.Object != "chat.completion.chunk" {
					t.Errorf("chunk object %q", c.Object)
				}
				if len(c.Usage) > 0 {
					usage = true
				}
				for _, ch := range c.Choices {
					d.thought += ch.Delta.ReasoningContent
					if ch.Delta.Content != nil && *ch.Delta.Content != "" {
						d.text += *ch.Delta.Content
						d.deltas++
					}
					for _, tc := range ch.Delta.ToolCalls {
						d.tool, d.callID, d.args = tc.Function.Name, tc.ID, d.args+tc.Function.Arguments
					}
					if ch.FinishReason != nil {
						d.stop = *ch.FinishReason
					}
				}
			}
			if !usage && strings.Contains(d.stop, "tool") {
				t.Errorf("stream_options.include_usage asked for a usage chunk; none came")
			}
			return d
		},
	},
	{
		dialect: Gemini,
		path: func(stream bool) string {
			if stream {
				return "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
			}
			return "/v1beta/models/gemini-test:generateContent"
		},
		first: func(bool) string {
			return fmt.Sprintf(`{"contents":[{"role":"user","parts":[{"text":"say hi"},{"inlineData":{"mimeType":"audio/wav","data":"AA=="}}]}],
				"tools":[{"functionDeclarations":[{"name":"read_file","parameters":{"type":"OBJECT"}},{"name":"write_file","parametersJsonSchema":%s}]},{"googleSearch":{}}],
				"generationConfig":{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}}`, writeSchema)
		},
		followup: func(_ bool, id string) string {
			return fmt.Sprintf(`{"contents":[{"role":"user","parts":[{"text":"say hi"}]},
				{"role":"model","parts":[{"functionCall":{"id":%q,"name":"write_file","args":{}}}]},
				{"role":"user","parts":[{"functionResponse":{"id":%q,"name":"write_file","response":{"error":"canceled by the user"}}}]}],
				"tools":[{"functionDeclarations":[{"name":"write_file","parametersJsonSchema":%s}]}]}`, id, id, writeSchema)
		},
		decode: func(t *testing.T, body io.Reader, stream bool) decoded {
			var d decoded
			type chunk struct {
				Candidates []struct {
					Content struct {
						Role  string `json:"role"`
						Parts []struct {
							Thought      bool    `json:"thought"`
							Text         *string `json:"text"`
							FunctionCall *struct {
								ID   string          `json:"id"`
								Name string          `json:"name"`
								Args json.RawMessage `json:"args"`
							} `json:"functionCall"`
						} `json:"parts"`
					} `json:"content"`
					FinishReason string `json:"finishReason"`
				} `json:"candidates"`
				UsageMetadata *struct {
					TotalTokenCount int `json:"totalTokenCount"`
				} `json:"usageMetadata"`
			}
			add := func(c chunk) {
				for _, cand := range c.Candidates {
					if cand.Content.Role != "model" {
						t.Errorf("candidate role %q", cand.Content.Role)
					}
					for _, p := range cand.Content.Parts {
						if p.Text != nil && p.Thought {
							d.thought += *p.Text
						} else if p.Text != nil {
							d.text += *p.Text
							d.deltas++
						}
						if f := p.FunctionCall; f != nil {
							d.tool, d.callID, d.args = f.Name, f.ID, string(f.Args)
						}
					}
					if cand.FinishReason != "" {
						d.stop = cand.FinishReason
						if c.UsageMetadata == nil || c.UsageMetadata.TotalTokenCount <= 0 {
							t.Errorf("last chunk without usageMetadata")
						}
					}
				}
			}
			if !stream {
				var c chunk
				b, _ := io.ReadAll(body)
				mustDecode(t, string(b), &c)
				add(c)
				return d
			}
			for _, e := range readSSE(t, body) {
				if e.name != "" {
					t.Errorf("Gemini SSE has no event names, got %q", e.name)
				}
				var c chunk
				mustDecode(t, e.data, &c)
				add(c)
			}
			return d
		},
	},
}

// recorder collects what the emulator reports.
type recorder struct {
	mu        sync.Mutex
	requests  []record.ModelRequestInfo
	responses []record.ModelResponseInfo
	answered  chan record.ModelResponseInfo
}

func newRecorder() *recorder { return &recorder{answered: make(chan record.ModelResponseInfo, 64)} }

func (r *recorder) options(script Script) Options {
	return Options{
		Script: script,
		OnRequest: func(q record.ModelRequestInfo) {
			r.mu.Lock()
			r.requests = append(r.requests, q)
			r.mu.Unlock()
		},
		OnResponse: func(s record.ModelResponseInfo) {
			r.mu.Lock()
			r.responses = append(r.responses, s)
			r.mu.Unlock()
			r.answered <- s
		},
	}
}

func (r *recorder) last() (record.ModelRequestInfo, record.ModelResponseInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[len(r.requests)-1], r.responses[len(r.responses)-1]
}

// start runs an emulator for the test.
func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// post sends body to the emulator as an agent of dialect d would, with the dummy key.
func post(t *testing.T, s *Server, d Dialect, path, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	switch d {
	case Anthropic:
		req.Header.Set("x-api-key", DummyKey)
	case Gemini:
		req.Header.Set("x-goog-api-key", DummyKey)
	default:
		req.Header.Set("Authorization", "Bearer "+DummyKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
