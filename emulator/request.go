package emulator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Dialect names a model API wire format.
type Dialect string

// The dialects the emulator speaks.
const (
	// Anthropic is the Anthropic Messages API: POST /v1/messages.
	Anthropic Dialect = "anthropic"
	// OpenAIResponses is the OpenAI Responses API: POST /v1/responses.
	OpenAIResponses Dialect = "openai-responses"
	// OpenAIChat is the OpenAI Chat Completions API: POST /v1/chat/completions.
	OpenAIChat Dialect = "openai-chat"
	// Gemini is the Gemini API: POST /v1beta/models/<model>:generateContent and
	// :streamGenerateContent.
	Gemini Dialect = "gemini"
)

// Dialects lists every dialect, in a stable order.
var Dialects = []Dialect{Anthropic, OpenAIResponses, OpenAIChat, Gemini}

// ParseDialect reads a dialect name, as given to --backend.
func ParseDialect(s string) (Dialect, error) {
	if d := Dialect(s); slices.Contains(Dialects, d) {
		return d, nil
	}
	return "", fmt.Errorf("emulator: unknown dialect %q (want anthropic, openai-responses, openai-chat or gemini)", s)
}

// Request is one HTTP request that reached the emulator, as recorded. It holds no secret
// header and no credential value; the body is kept as sent (the caller redacts further).
// Field names are stable: a Request is a frame of the probe's record.
type Request struct {
	// Seq numbers the requests of one emulator from 1, in arrival order.
	Seq int `json:"seq"`
	// Time is when the request's headers arrived.
	Time time.Time `json:"time"`
	// Method and Path are the HTTP method and URL path; Query is the raw query with
	// credential-looking parameters (key=…) replaced by "[redacted]".
	Method string `json:"method"`
	Path   string `json:"path"`
	Query  string `json:"query,omitempty"`
	// Dialect is the wire format of a model request; empty for other endpoints.
	Dialect Dialect `json:"dialect,omitempty"`
	// Endpoint classifies the request: "generate" (a model turn), "countTokens", or
	// "unknown" (answered 404).
	Endpoint string `json:"endpoint"`
	// Model is the model the request asked for (from the body, or from the path for Gemini).
	Model string `json:"model,omitempty"`
	// Stream is true when the request asked for a streamed (SSE) answer.
	Stream bool `json:"stream"`
	// Tools are the names of the tools offered in this request, in order (for a tool without
	// a name, such as a provider's built-in web search, its type).
	Tools []string `json:"tools,omitempty"`
	// ToolResults are the tool results the conversation carries, oldest first.
	ToolResults []ToolResult `json:"toolResults,omitempty"`
	// Structured is true when the request constrains the answer to a JSON schema (or to
	// JSON); the emulator then answers a minimal object that satisfies it.
	Structured bool `json:"structured,omitempty"`
	// Reasoning summarises the reasoning or thinking settings of the request, e.g.
	// "effort=high" or "thinking=enabled budget=1024"; empty when there are none.
	Reasoning string `json:"reasoning,omitempty"`
	// LastUserKinds and LastUserText describe the last user message: its content kinds in
	// order ("text", "image", "document", "audio", "file", "tool_result", Gemini's
	// "inlineData:<mime type>" …) and its text: the start of each text part (512 bytes at
	// most), one per line, the latest parts kept within 2 KiB (agents put their own, long
	// context before the user's words).
	LastUserKinds []string `json:"lastUserKinds,omitempty"`
	LastUserText  string   `json:"lastUserText,omitempty"`
	// Credential says which credential the request carried: "none", "dummy" (the key the
	// profile gave the agent) or "other" (anything else: never recorded, only flagged).
	Credential string `json:"credential"`
	// Headers are the request headers without any whose name looks secret.
	Headers map[string][]string `json:"headers,omitempty"`
	// BodySize is the body's length in bytes (up to the cap when it was too large).
	BodySize int `json:"bodySize"`
	// Body is the request body when it is JSON; BodyText holds any other body (as valid
	// UTF-8, bytes that are not replaced by U+FFFD).
	Body     json.RawMessage `json:"body,omitempty"`
	BodyText string          `json:"bodyText,omitempty"`
	// Problem says why the request could not be read or understood (body too large, not
	// JSON …); empty when it was.
	Problem string `json:"problem,omitempty"`
}

// ToolResult is one tool result carried by a model request.
type ToolResult struct {
	// CallID is the tool call id the result answers (tool_use_id, call_id, tool_call_id,
	// functionResponse.id); Name the tool's name, when the conversation tells it.
	CallID string `json:"callId,omitempty"`
	Name   string `json:"name,omitempty"`
	// IsError is true when the result is marked as an error (Anthropic is_error).
	IsError bool `json:"isError,omitempty"`
	// Latest is true for results in the conversation's last message: the ones the model is
	// asked to respond to now.
	Latest bool `json:"latest,omitempty"`
	// Content is the start of the result's text.
	Content string `json:"content,omitempty"`
}

// Limits on what a recorded request keeps beyond its body.
const (
	maxExcerpt     = 2048 // ToolResult.Content, LastUserText
	maxPartExcerpt = 512  // each text part in LastUserText
	maxToolResults = 256
	maxTools       = 512
	maxHeaders     = 64 // headers kept, and values per header
)

// secretHeader matches header names whose values must never be recorded.
var secretHeader = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)authorization|api-?key|token|secret|cookie|passw|credential|signature|auth`)
})

// secretParam matches query parameter names whose values must never be recorded.
var secretParam = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(key|api[-_]?key|access[-_]?token|token|auth|signature|sig|secret|password)$`)
})

// cleanHeaders copies h without secret-looking headers.
func cleanHeaders(h http.Header) map[string][]string {
	out := make(map[string][]string, len(h))
	for name, vals := range h {
		if secretHeader().MatchString(name) || len(out) >= maxHeaders {
			continue
		}
		out[name] = slices.Clone(vals[:min(len(vals), maxHeaders)])
	}
	return out
}

// cleanQuery returns the raw query with secret-looking parameter values redacted, in the
// original order.
func cleanQuery(raw string) string {
	if raw == "" {
		return ""
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if ok && secretParam().MatchString(name) {
			parts[i] = k + "=[redacted]"
		}
	}
	return strings.Join(parts, "&")
}

// credentialOf says which credential r carries, comparing against the dummy key.
func credentialOf(r *http.Request, dummy string) string {
	var vals []string
	for name, vs := range r.Header {
		l := strings.ToLower(name)
		if l == "authorization" || l == "x-api-key" || l == "x-goog-api-key" || l == "api-key" {
			vals = append(vals, vs...)
		}
	}
	if k := r.URL.Query().Get("key"); k != "" {
		vals = append(vals, k)
	}
	if len(vals) == 0 {
		return "none"
	}
	for _, v := range vals {
		v = strings.TrimSpace(v)
		if s, ok := strings.CutPrefix(v, "Bearer "); ok {
			v = strings.TrimSpace(s)
		}
		if dummy == "" || v != dummy {
			return "other"
		}
	}
	return "dummy"
}

// excerpt cuts s to at most maxExcerpt bytes on a rune boundary.
func excerpt(s string) string { return excerptN(s, maxExcerpt) }

// excerptN cuts s to at most n bytes on a rune boundary.
func excerptN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
