package emulator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/record"
)

// claudeSizedBody builds an Anthropic request of the size Claude Code sends (about 94 KB:
// 21 tools with schemas, a long system prompt, a few messages).
func claudeSizedBody(stream bool) string {
	var tools []string
	for i := range 21 {
		tools = append(tools, fmt.Sprintf(`{"name":"Tool%d","description":%q,"input_schema":%s}`, i, strings.Repeat("describes the tool. ", 120), writeSchema))
	}
	return fmt.Sprintf(`{"model":"claude-sonnet-4-6","stream":%v,"max_tokens":32000,"thinking":{"type":"adaptive"},"output_config":{"effort":"medium"},
		"system":[{"type":"text","text":%q}],"tools":[%s],
		"messages":[{"role":"user","content":[{"type":"text","text":%q},{"type":"text","text":"say hi"}]}]}`,
		stream, strings.Repeat("You are an agent. ", 2500), strings.Join(tools, ","), strings.Repeat("reminder ", 500))
}

// handlerCases are the requests BenchmarkHandler and BenchmarkBareHandler serve.
var handlerCases = []struct {
	name, path, body string
}{
	{"anthropic-json-small", "/v1/messages", wireCases[0].first(false)},
	{"anthropic-sse-small", "/v1/messages", wireCases[0].first(true)},
	{"anthropic-sse-94KB", "/v1/messages?beta=true", claudeSizedBody(true)},
	{"responses-sse-small", "/v1/responses", wireCases[1].first(true)},
	{"chat-sse-small", "/v1/chat/completions", wireCases[2].first(true)},
	{"gemini-sse-small", "/v1beta/models/g:streamGenerateContent?alt=sse", wireCases[3].first(true)},
	{"gemini-structured", "/v1beta/models/g:generateContent", `{"contents":[],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"a":{"type":"STRING"},"b":{"type":"INTEGER"}},"required":["a","b"]}}}`},
}

// roundTripCases are the requests BenchmarkRoundTrip and BenchmarkBareRoundTrip send.
var roundTripCases = []struct{ name, body string }{
	{"anthropic-sse-small", wireCases[0].first(true)},
	{"anthropic-sse-94KB", claudeSizedBody(true)},
}

// BenchmarkHandler measures the emulator's own cost per request, without the network: the
// handler reads, records (to a discarding callback), answers and reports one request.
// BenchmarkBareHandler is its baseline.
func BenchmarkHandler(b *testing.B) {
	for _, tc := range handlerCases {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Start(context.Background(), Options{OnRequest: func(record.ModelRequestInfo) {}, OnResponse: func(record.ModelResponseInfo) {}, Script: Text("hello there")})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.SetBytes(int64(len(tc.body)))
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				w := httptest.NewRecorder()
				s.serve(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// recordedAnswer is the emulator's answer to one request (headers and body), captured once
// so that the bare baselines send the same bytes without understanding anything.
func recordedAnswer(b *testing.B, path, body string) (http.Header, []byte) {
	b.Helper()
	s, err := Start(context.Background(), Options{Script: Text("hello there")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w := httptest.NewRecorder()
	s.serve(w, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	if w.Code != http.StatusOK || w.Body.Len() == 0 {
		b.Fatalf("status %d: %s", w.Code, w.Body)
	}
	return w.Header(), w.Body.Bytes()
}

// bareHandler is the baseline of the emulator's handler: a plain net/http handler that reads
// the whole body and writes a fixed answer (the emulator's own answer to that request, same
// headers and bytes), and neither parses, records nor scripts anything.
func bareHandler(header http.Header, answer []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		for k, v := range header {
			w.Header()[k] = v
		}
		_, _ = w.Write(answer)
	}
}

// BenchmarkBareHandler is BenchmarkHandler's baseline: the same requests served by
// bareHandler, so the difference is the emulator's own work (parse, record, script, encode).
func BenchmarkBareHandler(b *testing.B) {
	for _, tc := range handlerCases {
		b.Run(tc.name, func(b *testing.B) {
			h := bareHandler(recordedAnswer(b, tc.path, tc.body))
			b.SetBytes(int64(len(tc.body)))
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, tc.path, strings.NewReader(tc.body))
				w := httptest.NewRecorder()
				h(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkRoundTrip measures one request over loopback HTTP, client included: what an
// agent's model call costs when the model is the emulator. BenchmarkBareRoundTrip is its
// baseline.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tc := range roundTripCases {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Start(context.Background(), Options{OnRequest: func(record.ModelRequestInfo) {}, Script: Text("hello there")})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				roundTrip(b, s.URL()+"/v1/messages", tc.body)
			}
		})
	}
}

// BenchmarkBareRoundTrip is BenchmarkRoundTrip's baseline: a plain net/http server on
// loopback that answers bareHandler's fixed answer (Connection: close included, like the
// emulator's SSE answers).
func BenchmarkBareRoundTrip(b *testing.B) {
	for _, tc := range roundTripCases {
		b.Run(tc.name, func(b *testing.B) {
			srv := httptest.NewServer(bareHandler(recordedAnswer(b, "/v1/messages", tc.body)))
			defer srv.Close()
			b.ReportAllocs()
			for b.Loop() {
				roundTrip(b, srv.URL+"/v1/messages", tc.body)
			}
		})
	}
}

// roundTrip posts body to url and reads the whole answer.
func roundTrip(b *testing.B, url, body string) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

// BenchmarkStreamChunk measures the cost of one streamed text delta: each iteration is one
// chunk of a single long SSE answer (written, flushed and read over loopback).
// BenchmarkBareStreamChunk is its baseline.
func BenchmarkStreamChunk(b *testing.B) {
	for _, wc := range wireCases {
		b.Run(string(wc.dialect), func(b *testing.B) {
			chunks := make([]string, b.N)
			for i := range chunks {
				chunks[i] = "word "
			}
			s, err := Start(context.Background(), Options{Script: func(*Call) Reply { return Reply{Chunks: chunks} }})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			body := wc.first(true)
			b.ReportAllocs()
			b.ResetTimer()
			resp, err := http.Post(s.URL()+wc.path(true), "application/json", strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			b.StopTimer()
			b.ReportMetric(float64(n)/float64(b.N), "bytes/chunk")
		})
	}
}

// BenchmarkBareStreamChunk is BenchmarkStreamChunk's baseline: a plain net/http handler
// that writes and flushes one fixed, pre-encoded Anthropic text delta event per iteration
// (no encoding, no pacing checks), read over loopback.
func BenchmarkBareStreamChunk(b *testing.B) {
	event := []byte("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"word \"}}\n\n")
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Connection", "close")
		rc := http.NewResponseController(w)
		for range n {
			if _, err := w.Write(event); err != nil {
				return
			}
			if rc.Flush() != nil {
				return
			}
		}
	}))
	defer srv.Close()
	b.Run("anthropic", func(b *testing.B) {
		n = b.N
		b.ReportAllocs()
		b.ResetTimer()
		resp, err := http.Post(srv.URL+"/v1/messages", "application/json", strings.NewReader(wireCases[0].first(true)))
		if err != nil {
			b.Fatal(err)
		}
		read, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.StopTimer()
		b.ReportMetric(float64(read)/float64(b.N), "bytes/chunk")
	})
}

// BenchmarkDeferredSearch measures what ToolThenText costs on a request of Claude Code's size
// (94 KB) that defers the tool it wants: the names in every string of the body are read to
// find the agent's name for it (Call.deferred), against the same script on a request that
// offers the tool.
func BenchmarkDeferredSearch(b *testing.B) {
	search := `{"name":"ToolSearch","input_schema":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"type":"number"}},"required":["query","max_results"]}}`
	deferred := strings.Replace(claudeSizedBody(true), `"tools":[`, `"tools":[`+search+`,`, 1)
	deferred = strings.Replace(deferred, `"say hi"`, `"Call the tool probe_tool once. Deferred tools:\nmcp__srv__probe_tool\n"`, 1)
	offered := strings.Replace(claudeSizedBody(true), `"tools":[`, `"tools":[{"name":"mcp__srv__probe_tool","input_schema":{"type":"object"}},`, 1)
	for _, tc := range []struct{ name, body, want string }{{"deferred", deferred, "ToolSearch"}, {"offered", offered, "mcp__srv__probe_tool"}} {
		b.Run(tc.name, func(b *testing.B) {
			tr, err := parseAnthropic([]byte(tc.body))
			if err != nil {
				b.Fatal(err)
			}
			c := &Call{Request: &record.ModelRequestInfo{Body: []byte(tc.body), LastUserText: tr.lastText}, Tools: tr.tools}
			script := probeScript()
			b.SetBytes(int64(len(tc.body)))
			b.ReportAllocs()
			for b.Loop() {
				if r := script(c); r.Tool == nil || r.Tool.Name != tc.want {
					b.Fatalf("answered %+v", r)
				}
			}
		})
	}
}
