package emulator

import (
	"net/http"
	"strings"
)

// endpoint is what the emulator serves at one path: how to read the request and how to
// write each kind of answer in its dialect.
type endpoint struct {
	kind        string // Request.Endpoint: "generate", "countTokens"; "" for an unknown path
	dialect     Dialect
	model       string // Gemini: the model named in the path
	parse       func([]byte) (*turn, error)
	json        func(*answer) any
	stream      func(*stream, *answer) error
	countTokens func(n int) any
}

// route finds the endpoint of a request. Every dialect is served on every address, so one
// emulator answers an agent whatever API it speaks, and the record says which it was. Paths
// match by their end, with or without /v1 (SDKs join a base URL and a path differently: one
// given …/v1 posts …/v1/messages, one given the bare URL may post /messages), and after any
// prefix (http://127.0.0.1:PORT/anthropic). Only POST is served.
func route(r *http.Request) endpoint {
	p := r.URL.Path
	if r.Method != http.MethodPost {
		return endpoint{dialect: dialectOfPath(p)}
	}
	switch {
	case strings.HasSuffix(p, "/messages"):
		return endpoint{kind: "generate", dialect: Anthropic, parse: parseAnthropic, json: anthropicJSON, stream: anthropicStream}
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return endpoint{kind: "countTokens", dialect: Anthropic, parse: parseAnthropic, countTokens: func(n int) any { return map[string]int{"input_tokens": n} }}
	case strings.HasSuffix(p, "/responses"):
		return endpoint{kind: "generate", dialect: OpenAIResponses, parse: parseResponses, json: responsesJSON, stream: responsesStream}
	case strings.HasSuffix(p, "/chat/completions"):
		return endpoint{kind: "generate", dialect: OpenAIChat, parse: parseChat, json: chatJSON, stream: chatStream}
	}
	i := strings.LastIndex(p, "/models/")
	if i < 0 {
		return endpoint{dialect: dialectOfPath(p)}
	}
	model, action, ok := strings.Cut(p[i+len("/models/"):], ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return endpoint{dialect: Gemini}
	}
	switch action {
	case "generateContent":
		return endpoint{kind: "generate", dialect: Gemini, model: model, json: geminiJSON,
			parse: func(b []byte) (*turn, error) { return parseGemini(b, model, false) }}
	case "streamGenerateContent":
		if r.URL.Query().Get("alt") == "sse" {
			return endpoint{kind: "generate", dialect: Gemini, model: model, stream: geminiStream,
				parse: func(b []byte) (*turn, error) { return parseGemini(b, model, true) }}
		}
		// Without alt=sse the stream is one JSON array of response chunks.
		return endpoint{kind: "generate", dialect: Gemini, model: model, json: geminiArray,
			parse: func(b []byte) (*turn, error) { return parseGemini(b, model, false) }}
	case "countTokens":
		return endpoint{kind: "countTokens", dialect: Gemini, model: model,
			parse:       func(b []byte) (*turn, error) { return parseGemini(b, model, false) },
			countTokens: func(n int) any { return map[string]int{"totalTokens": n} }}
	}
	return endpoint{dialect: Gemini}
}

// dialectOfPath guesses the dialect of an unknown path, for the shape of its 404 answer.
func dialectOfPath(p string) Dialect {
	switch {
	case strings.Contains(p, "/v1beta/") || strings.Contains(p, "/models/") && strings.Contains(p, ":"):
		return Gemini
	case strings.Contains(p, "/messages"):
		return Anthropic
	}
	return OpenAIResponses
}

// errorBody shapes an API error the way the dialect's clients parse it.
func errorBody(d Dialect, e *APIError) any {
	status := e.Status
	switch d {
	case Anthropic:
		typ := e.Type
		if typ == "" {
			typ = map[int]string{400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
				404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}[status]
		}
		if typ == "" {
			typ = "api_error"
		}
		return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": e.Message}}
	case Gemini:
		typ := e.Type
		if typ == "" {
			typ = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
				404: "NOT_FOUND", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}[status]
		}
		if typ == "" {
			typ = "INTERNAL"
		}
		return map[string]any{"error": map[string]any{"code": status, "message": e.Message, "status": typ}}
	}
	typ := e.Type
	if typ == "" {
		typ = map[int]string{400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
			413: "invalid_request_error", 429: "rate_limit_exceeded"}[status]
	}
	if typ == "" {
		typ = "server_error"
	}
	return map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "param": nil, "code": nil}}
}
