package emulator

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// Script decides the answer to each model request. The emulator calls it once per model
// request (never for other endpoints), one call at a time, in arrival order; it must return
// quickly (the answer's pacing is in the Reply, not in the Script). Past the emulator's
// MaxRequests bound only the reply's text is sent (Options.MaxRequests).
type Script func(*Call) Reply

// Call is what a Script sees of one model request.
type Call struct {
	// Request is the recorded request (read it, do not change it).
	Request *record.ModelRequestInfo
	// Tools are the tools the agent offered in this request, with their input schemas.
	Tools []Tool
	// Schema is the output schema of a structured request (nil for a plain request, or
	// for a request that asks for any JSON).
	Schema json.RawMessage
	// Asked counts the model requests the Script answered before this one since it was
	// installed (Start, SetScript), and ToolCalls how many of those answers were a tool
	// call: a Script uses them to ask for its tool once (ToolThenText). Searches is how many
	// of those tool calls were searches for a tool the agent defers (ToolUse.Search), which a
	// Script counts apart from its call of the tool.
	Asked, ToolCalls, Searches int
}

// Reply is a scripted answer. The zero Reply is an empty text answer.
//
// A structured request (Request.Structured) is always answered with a minimal object that
// satisfies its schema, whatever the Reply says, unless the Reply is an Error: agents parse
// that answer as data and hang or retry on anything else.
type Reply struct {
	// Thought, when set, is the model's reasoning, sent before its text in the dialect's
	// form: an Anthropic thinking block, a Responses reasoning item with a summary, a
	// Gemini thought part, a Chat Completions reasoning_content delta.
	Thought string
	// Text is the assistant's text, sent as one delta unless Chunks is set.
	Text string
	// Chunks, when set, replace Text: each is one streamed delta (for a JSON answer they
	// are joined).
	Chunks []string
	// Delay is the pause before each chunk after the first, and before the tool call when
	// there is text before it (a JSON answer waits the sum before it is sent); the pause
	// ends early when the client goes away or the emulator closes. A slow stream is many
	// chunks with a Delay.
	Delay time.Duration
	// Tool, when set, is a tool call the model makes after its text.
	Tool *ToolUse
	// Error, when set, answers the request with an API error instead.
	Error *APIError
}

// ToolUse is a tool call in a Reply.
type ToolUse struct {
	// Name is the tool's name, one the agent offered.
	Name string
	// Input is the call's arguments, a JSON object; Custom, for a free-form tool, is its
	// plain-text input instead.
	Input  json.RawMessage
	Custom string
	// IsCustom is true when the tool is free-form (Tool.Custom).
	IsCustom bool
	// Namespace is the tool's (Tool.Namespace): the call names it.
	Namespace string
	// Nested is the tool called through Name: Custom is then the JavaScript that calls it
	// (Tool.Via), or Input names it (an agent's tool that invokes a deferred tool, such as
	// qwen-code's tool_call).
	Nested string
	// Search, when set, says that this is a call of the agent's tool-search tool, and what
	// it searches for (the deferred tool's name, or the words of a keyword search): the
	// emulator counts it apart from the Script's one tool call (Call.Searches) and records
	// it (record.ModelResponseInfo.Search).
	Search string
}

// APIError is an error answer in the request's dialect.
type APIError struct {
	// Status is the HTTP status, e.g. 400, 429, 500.
	Status int
	// Type is the provider's error type or status ("invalid_request_error",
	// "RESOURCE_EXHAUSTED" …); empty picks the usual one for Status.
	Type string
	// Message is the human-readable message.
	Message string
}

// ToolPicker chooses one tool among the offered ones (in offer order), or none.
type ToolPicker func([]Tool) (Tool, bool)

// Named picks the tool with the first of names that is offered (names in order of
// preference, matched exactly).
func Named(names ...string) ToolPicker {
	return func(tools []Tool) (Tool, bool) {
		for _, n := range names {
			for _, t := range tools {
				if t.Name == n {
					return t, true
				}
			}
		}
		return Tool{}, false
	}
}

// Containing picks the first offered tool whose name contains name: agents offer an MCP
// server's tool under a name of their own that keeps the tool's (mcp__server__tool,
// server_tool …).
func Containing(name string) ToolPicker {
	return func(tools []Tool) (Tool, bool) {
		for _, t := range tools {
			if strings.Contains(t.QualifiedName(), name) {
				return t, true
			}
		}
		return Tool{}, false
	}
}

// Tool names agents give their file tools, by preference: a tool that creates a file whole
// is best, a patch tool next, an edit tool last (it may refuse a file that does not exist).
var (
	writeToolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(write|write_?file|create_?file|new_?file)$`) })
	patchToolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(apply_?patch|str_?replace_?editor)$`) })
	editToolName  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^(edit|edit_?file|replace|multi_?edit)$`) })
)

// WritesFiles picks a tool that writes files: one named like Write or write_file first,
// then one whose schema has a path-like and a content-like property, then a patch tool
// (apply_patch), then an edit tool (Edit, replace).
func WritesFiles() ToolPicker {
	return func(tools []Tool) (Tool, bool) {
		tiers := []func(Tool) bool{
			func(t Tool) bool { return writeToolName().MatchString(t.Name) },
			func(t Tool) bool {
				props := propertyNames(t.Schema)
				return !editToolName().MatchString(t.Name) && pathProperty(props) != "" && contentProperty(props) != ""
			},
			func(t Tool) bool { return patchToolName().MatchString(t.Name) },
			func(t Tool) bool { return editToolName().MatchString(t.Name) },
		}
		for _, ok := range tiers {
			for _, t := range tools {
				if ok(t) {
					return t, true
				}
			}
		}
		return Tool{}, false
	}
}

// Use builds a call of tool t: its arguments are the minimal object its schema requires,
// with values laid over it (values may name properties the schema does not require). For
// a free-form tool, values["input"] (a string) is its input. A tool called through another
// (Tool.Via) becomes a call of that one, with the JavaScript that calls it and prints its
// result (text): the exec tool's result holds only what the program printed, and the model
// reads the tool's result there.
func Use(t Tool, values map[string]any) (*ToolUse, error) {
	if t.Via != "" {
		var arg any = values["input"]
		if !t.Custom {
			arg = values
		}
		b, err := json.Marshal(arg)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		js := "text(await tools." + t.Name + "(" + string(b) + "));\n"
		return &ToolUse{Name: t.Via, Custom: js, IsCustom: true, Namespace: t.Namespace, Nested: t.Name}, nil
	}
	if t.Custom {
		s, _ := values["input"].(string)
		return &ToolUse{Name: t.Name, Custom: s, IsCustom: true, Namespace: t.Namespace}, nil
	}
	base, err := Minimal(t.Schema)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	var obj map[string]any
	if json.Unmarshal(base, &obj) != nil || obj == nil {
		obj = map[string]any{}
	}
	for k, v := range values {
		obj[k] = v
	}
	in, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("tool %s: %w", t.Name, err)
	}
	return &ToolUse{Name: t.Name, Input: in, Namespace: t.Namespace}, nil
}

// FileArgs gives the arguments that make a file-writing tool write content to path: the
// tool's path-like property (file_path, path, filePath, filename …) gets path and its
// content-like property (content, contents, text, new_string …) gets content. A free-form
// apply_patch tool gets a patch that adds the file.
func FileArgs(t Tool, path, content string) map[string]any {
	if t.Custom || strings.EqualFold(t.Name, "apply_patch") && len(propertyNames(t.Schema)) <= 1 {
		patch := "*** Begin Patch\n*** Add File: " + path + "\n+" +
			strings.ReplaceAll(strings.TrimSuffix(content, "\n"), "\n", "\n+") + "\n*** End Patch\n"
		if t.Custom {
			return map[string]any{"input": patch}
		}
		if names := propertyNames(t.Schema); len(names) == 1 {
			return map[string]any{names[0]: patch}
		}
		return map[string]any{"input": patch}
	}
	props := propertyNames(t.Schema)
	out := map[string]any{}
	if p := pathProperty(props); p != "" {
		out[p] = path
	}
	if p := contentProperty(props); p != "" {
		out[p] = content
	}
	return out
}

// propertyNames lists the top-level property names of an object schema, in name order.
func propertyNames(schema json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// pathProperty and contentProperty find, by name, the property that takes a file's path
// or its content.
func pathProperty(props []string) string {
	return firstNamed(props, "file_path", "filePath", "path", "absolute_path", "filename", "file", "target_file")
}

func contentProperty(props []string) string {
	return firstNamed(props, "content", "contents", "file_text", "text", "new_string", "newString", "data")
}

func firstNamed(props []string, names ...string) string {
	for _, n := range names {
		for _, p := range props {
			if p == n {
				return p
			}
		}
	}
	return ""
}

// Text is a Script that answers every model request with text.
func Text(text string) Script {
	return func(*Call) Reply { return Reply{Text: text} }
}

// Slow is a Script that streams chunks with delay between them: the cancel scenario's
// model.
func Slow(delay time.Duration, chunks ...string) Script {
	return func(*Call) Reply { return Reply{Chunks: chunks, Delay: delay} }
}

// Fail is a Script that answers every model request with an API error.
func Fail(status int, message string) Script {
	return func(*Call) Reply { return Reply{Error: &APIError{Status: status, Message: message}} }
}

// ToolThenText is a Script for a tool round trip: it asks for one call of the tool pick
// chooses, with the arguments args returns for it, once per installation; a request whose
// last message carries tool results, or any request after that call, is answered with text
// (an agent that sends the same conversation again — claude-agent-acp 0.101.0 did, 28 times
// in one turn — gets the text, not another call). When no offered tool fits, the answer is
// the text noMatch (so a turn still ends, and the record shows no tool was called).
//
// An agent that defers its tools (it names them, in its system text or in its search tool's
// description, and offers only a tool that searches for them: Claude Code, qwen-code,
// CodeBuddy Code; or it names none and lists them to the programs its free-form tool runs:
// Codex) is searched first, the way that agent expects (toolSearches), once per installation;
// the tool is then called directly once the agent offers it, through the agent's tool that
// invokes a deferred tool by name, or in a program of its free-form tool, once the search's
// result names it. A search that does not find the tool ends in noMatch, as a tool that is not
// offered does. Only the script's own search result is a reason to go on: a latest tool
// result before the script searched (a conversation that already had one) is answered with
// text, as any other.
func ToolThenText(pick ToolPicker, args func(Tool) map[string]any, text, noMatch string) Script {
	return func(c *Call) Reply {
		if c.ToolCalls > c.Searches {
			return Reply{Text: text}
		}
		search, searching := c.toolSearch()
		for _, r := range c.Request.ToolResults {
			if r.Latest && !(searching && c.Searches > 0 && r.Name == search.tool.Name) {
				return Reply{Text: text}
			}
		}
		var use *ToolUse
		if t, ok := pick(c.Tools); ok {
			use, _ = Use(t, args(t))
		} else if searching {
			use = c.deferred(search, pick, args)
		}
		if use == nil {
			return Reply{Text: noMatch}
		}
		return Reply{Tool: use}
	}
}

// WriteFile is the permission scenario's Script: the model asks the agent's own
// file-writing tool to write content to path, and answers text once it sees the result.
func WriteFile(path, content, text string) Script {
	return ToolThenText(WritesFiles(), func(t Tool) map[string]any { return FileArgs(t, path, content) },
		text, "no file-writing tool was offered")
}
