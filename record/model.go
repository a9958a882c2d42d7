package record

import (
	"encoding/json"
	"strings"
	"time"
)

// The payloads of what reached the model emulator during a prompt turn and what it answered:
// the emulator produces them and hands them to the callbacks that record them.

// ModelRequestInfo is one HTTP request that reached the model emulator, as recorded. It holds no secret
// header and no credential value; the body is kept as sent (the caller redacts further).
// Field names are stable: it is the payload of a model-request event.
type ModelRequestInfo struct {
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
	Dialect string `json:"dialect,omitempty"`
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
	// BodySize is the body's length in bytes (up to the cap when it was too large; 0 when
	// its Content-Length was over the cap and it was not read).
	BodySize int `json:"bodySize"`
	// Body is the request body when it is JSON; BodyText holds any other body (as valid
	// UTF-8, bytes that are not replaced by U+FFFD).
	Body     json.RawMessage `json:"body,omitempty"`
	BodyText string          `json:"bodyText,omitempty"`
	// BodyTruncated is true when the body was larger than the emulator records (256 KiB):
	// BodyText then holds its start, Body is empty, and BodySize is its whole length. What
	// the emulator read of it (Model, Tools, ToolResults, LastUser…) was read from all of it.
	BodyTruncated bool `json:"bodyTruncated,omitempty"`
	// Problem says why the request could not be read or understood (body too large, not
	// JSON …), or which member of an unexpected type a lenient read skipped ("read
	// leniently, skipping …": the request was answered all the same); empty otherwise.
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
	// Found, on the result of an agent's tool-search tool, are the tools it declares in a form
	// the emulator knows (Claude Code's tool_reference blocks, qwen-code's <function>
	// declarations, CodeBuddy Code's "## NAME" headings): tools the agent defers, which the
	// model may now call. A name the result only echoes ("Not found: NAME") is not one.
	Found []string `json:"found,omitempty"`
}

// ModelResponseInfo is what the emulator answered to one request.
type ModelResponseInfo struct {
	// Seq is the request's Seq.
	Seq int `json:"seq"`
	// Time is when the answer ended.
	Time time.Time `json:"time"`
	// Status is the HTTP status sent.
	Status int `json:"status"`
	// Answer is "text", "toolCall", "structured", "verdict" (the allow verdict of the agent's
	// own permission monitor, such as Claude Code's auto mode: see the emulator), "error",
	// "countTokens" or "notFound".
	Answer string `json:"answer"`
	// Tool and ToolCallID name the tool call made ("toolCall" answers). A tool called through
	// another is named "VIA/TOOL": codex-acp's JavaScript exec tool ("functions.exec/apply_patch"),
	// or an agent's tool that invokes a deferred tool by name ("tool_call/mcp__srv__tool").
	Tool       string `json:"tool,omitempty"`
	ToolCallID string `json:"toolCallId,omitempty"`
	// Search, on a call of the agent's tool-search tool (Tool is then that tool: ToolSearch,
	// tool_search), is what the model searched for: the name of a tool the agent defers (it
	// names the tool but does not offer it until the model searches for it), or the words of a
	// keyword search. Its ToolCallID is the id the search's result answers.
	Search string `json:"search,omitempty"`
	// Thought is true when the answer carried the model's reasoning (Reply.Thought).
	Thought bool `json:"thought,omitempty"`
	// Chunks counts the text deltas written.
	Chunks int `json:"chunks"`
	// Complete is true when the whole answer was written; false when the client went away,
	// the emulator closed or MaxResponse passed first.
	Complete bool `json:"complete"`
	// Bounded is true when the request was past the emulator's bound on the model requests
	// one installed script answers (16 by default; the turn scenarios install one for each
	// prompt): the answer is then text, whatever the script asked for, so that an agent that
	// keeps asking the model cannot loop.
	Bounded bool `json:"bounded,omitempty"`
	// Problem says why the answer is incomplete or an error was sent.
	Problem string `json:"problem,omitempty"`
}

// RouteInfo is how acpprobe turn pointed the agent at the model emulator (the payload of the
// turn-route event, before the main connection): the route, what it set, and what it
// created. Values that are secret are never here (the dummy key is named, not given).
type RouteInfo struct {
	// Kind is the route.
	Kind RouteKind `json:"kind"`
	// Profile is the backend profile (route profile or auto) and MatchedBy the key that chose
	// it ("registry id codex-acp", "program codebuddy", "--backend anthropic"); VerifiedOn
	// the agent versions the profile was verified on ("NAME VERSION").
	Profile    string   `json:"profile,omitempty"`
	MatchedBy  string   `json:"matchedBy,omitempty"`
	VerifiedOn []string `json:"verifiedOn,omitempty"`
	// Dialect is the wire format the route expects ("auto": whichever the agent speaks).
	Dialect string `json:"dialect,omitempty"`
	// Env are the variables set for the agent, Emptied those removed; Files the files
	// written into its HOME (paths under ~).
	Env     []EnvSetting `json:"env,omitempty"`
	Emptied []string     `json:"emptied,omitempty"`
	Files   []string     `json:"files,omitempty"`
	// Authenticate is the authMethods id logged in with; Gateway the base URL given to a
	// gateway login.
	Authenticate string `json:"authenticate,omitempty"`
	Gateway      string `json:"gateway,omitempty"`
	// Conditions are what the route created that changes what the agent does (a trusted
	// workspace, a client that declares gateway logins).
	Conditions []string `json:"conditions,omitempty"`
	// Reason says why there is no route (Kind none).
	Reason string `json:"reason,omitempty"`
}

// VerifiedFor reports whether the profile was verified on the agent name and version
// (agentInfo): a VerifiedOn entry "NAME VERSION" whose name is name, or the same npm package
// under another scope (PackageName).
func (r RouteInfo) VerifiedFor(name, version string) bool {
	for _, v := range r.VerifiedOn {
		n, rest, _ := strings.Cut(v, " ")
		ver, _, _ := strings.Cut(rest, " ")
		if ver == version && (n == name || PackageName(n) == PackageName(name)) {
			return true
		}
	}
	return false
}

// PackageName is an npm package name without its scope and version ("@a/b@1.2" is "b"): the
// @zed-industries and @agentclientprotocol builds of an adapter are one family.
func PackageName(name string) string {
	if rest, ok := strings.CutPrefix(name, "@"); ok {
		if _, after, found := strings.Cut(rest, "/"); found {
			name = after
		}
	}
	name, _, _ = strings.Cut(name, "@")
	return name
}

// RouteKind names a route to the model emulator.
type RouteKind string

// The routes, in the order a turn run tries them.
const (
	// RouteProfile: a backend profile (data: environment, files, authenticate) for this agent,
	// or the generic one of --backend.
	RouteProfile RouteKind = "profile"
	// RouteGateway: the agent's own gateway login (ACP authenticate with _meta.gateway), the
	// emulator as the gateway.
	RouteGateway RouteKind = "gateway"
	// RouteAuto: every dialect on the emulator's one port, and every base-URL and key
	// variable the profiles know.
	RouteAuto RouteKind = "auto"
	// RouteNone: no route (Reason says why); no turn runs.
	RouteNone RouteKind = "none"
)

// EnvSetting is one variable a route set.
type EnvSetting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Describe names the route in a sentence's words: "the backend profile codex-acp (matched by
// registry id codex-acp)", "the agent's gateway login gateway", "the auto route".
func (r RouteInfo) Describe() string {
	switch r.Kind {
	case RouteProfile:
		if r.MatchedBy == "" {
			return "the backend profile " + r.Profile
		}
		return "the backend profile " + r.Profile + " (matched by " + r.MatchedBy + ")"
	case RouteGateway:
		return "the agent's gateway login " + r.Authenticate + " (base URL " + r.Gateway + ")"
	case RouteAuto:
		return "the auto route (every dialect on one port, every base-URL and key variable the profiles know)"
	}
	return "no route"
}
