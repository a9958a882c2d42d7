package emulator

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
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

// Limits on what a recorded request keeps beyond its body.
const (
	maxExcerpt      = 2048 // ToolResult.Content, LastUserText
	maxPartExcerpt  = 512  // each text part in LastUserText
	maxToolResults  = 256
	maxTools        = 512
	maxHeaders      = 64        // headers kept, and values per header
	maxName         = 256       // Model, Reasoning, each tool name, call id and content kind
	maxFound        = 16        // ToolResult.Found
	maxKinds        = 64        // LastUserKinds: the latest kinds
	maxRecordedBody = 256 << 10 // Body, BodyText: the largest body a real agent sent was 94 KB
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

// excerptN cuts s to at most n bytes on a rune boundary. A cut excerpt is a copy: a
// substring would keep the whole of a long string (a body's text) alive in the record.
func excerptN(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strings.Clone(s[:cut])
}
