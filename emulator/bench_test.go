package emulator

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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

// BenchmarkHandler measures the emulator's own cost per request, without the network: the
// handler reads, records (to a discarding callback), answers and reports one request.
func BenchmarkHandler(b *testing.B) {
	cases := []struct {
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
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Start(context.Background(), Options{OnRequest: func(Request) {}, OnResponse: func(Response) {}, Script: Text("hello there")})
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

// BenchmarkRoundTrip measures one request over loopback HTTP, client included: what an
// agent's model call costs when the model is the emulator.
func BenchmarkRoundTrip(b *testing.B) {
	for _, tc := range []struct{ name, body string }{
		{"anthropic-sse-small", wireCases[0].first(true)},
		{"anthropic-sse-94KB", claudeSizedBody(true)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, err := Start(context.Background(), Options{OnRequest: func(Request) {}, Script: Text("hello there")})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(tc.body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}

// BenchmarkStreamChunk measures the cost of one streamed text delta: each iteration is one
// chunk of a single long SSE answer (written, flushed and read over loopback).
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
