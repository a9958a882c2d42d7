package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/record"
)

// Tool is one tool the agent offered the model in a request.
type Tool struct {
	// Name is the tool's name (for a nameless built-in tool, its type).
	Name string `json:"name"`
	// Description is the tool's description, as offered.
	Description string `json:"description,omitempty"`
	// Custom is true for a free-form tool whose input is plain text rather than a JSON
	// object (an OpenAI Responses "custom" tool, such as codex's apply_patch).
	Custom bool `json:"custom,omitempty"`
	// Schema is the tool's input JSON schema; nil when it has none.
	Schema json.RawMessage `json:"schema,omitempty"`
	// Namespace is the OpenAI Responses "namespace" tool the tool is offered in (codex-acp
	// offers each MCP server's tools so, as mcp__<server>); a call of it names the namespace.
	Namespace string `json:"namespace,omitempty"`
	// Via names the free-form tool this one is called through, when it is not offered as a
	// tool of its own but declared inside that tool's description: codex-acp 2.6 offers one
	// "exec" tool that runs JavaScript, whose description declares the tools it can call
	// (`declare const tools: { apply_patch(input: string): … }`). A call of it is an exec
	// call of `text(await tools.<name>(<input>))`.
	Via string `json:"via,omitempty"`
}

// QualifiedName is the tool's name with its namespace, if any ("mcp__srv.tool"), and the
// tool it is called through ("functions.exec/apply_patch").
func (t Tool) QualifiedName() string {
	name := t.Name
	if t.Via != "" {
		name = t.Via + "/" + t.Name
	}
	if t.Namespace == "" {
		return name
	}
	return t.Namespace + "." + name
}

// nestedTool matches a tool declared inside a free-form tool's description, and whether it
// takes a string ("(input: string)") or an object.
var nestedTool = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`declare const tools: \{ ([A-Za-z_$][A-Za-z0-9_$]*)\((input: string)?`)
})

// maxNested bounds the nested tools read from one description.
const maxNested = 256

// addNested adds the tools that the free-form tool t declares in its description (see
// Tool.Via), after t itself.
func (tr *turn) addNested(t Tool) {
	if !t.Custom || !strings.Contains(t.Description, "declare const tools:") {
		return
	}
	for _, m := range nestedTool().FindAllStringSubmatch(t.Description, maxNested) {
		tr.addTool(Tool{Name: m[1], Custom: m[2] != "", Namespace: t.Namespace, Via: t.Name})
	}
}

// turn is what the emulator understood of one model request, whatever its dialect.
type turn struct {
	model      string
	stream     bool
	tools      []Tool
	results    []record.ToolResult
	structured bool
	schema     json.RawMessage // the output schema when structured; nil for "any JSON"
	verdict    string          // the allow verdict of a permission monitor's request (monitors)
	reasoning  string
	lastKinds  []string
	lastText   string
	usage      bool   // Chat Completions: stream_options.include_usage
	skipped    string // what a lenient read skipped (decode), "" when nothing
}

// decode reads a request body into v leniently: a member of a type the emulator did not
// expect (a string where it reads a number, an object where it reads a list) is skipped and
// the rest is read, as encoding/json does; skipped says the first such member. Only a body
// that is not JSON is an error: an agent whose request the emulator refused for a shape it
// had not seen would report an API error, or retry it.
func decode(body []byte, v any) (skipped string, err error) {
	err = json.Unmarshal(body, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := te.Field
		if where == "" {
			where = "the body"
		}
		return excerpt(fmt.Sprintf("%s: a JSON %s where the emulator reads %s", where, te.Value, jsonKind(te.Type))), nil
	}
	return "", err
}

// jsonKind names the JSON value a Go type is read from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "a number"
}

// content is a decoded content block or part of any dialect, reduced to what the emulator
// looks at.
type content struct {
	kind    string
	text    string // its start (textStart)
	callID  string
	name    string // tool name, for a tool call or result
	isError bool
	result  bool     // a tool result
	call    bool     // a tool call made by the model
	refs    []string // the tools a result's tool_reference blocks name (resultContent)
}

// message is one conversation entry: its role and content.
type message struct {
	role  string
	parts []content
}

// finish fills the conversation-derived fields of t: tool results (with the names of the
// calls they answer) and the last user message.
func (t *turn) finish(msgs []message) {
	names := map[string]string{}
	for _, m := range msgs {
		for _, c := range m.parts {
			if c.call && c.callID != "" {
				names[c.callID] = c.name
			}
		}
	}
	// The latest tool results are those of the last user message when nothing the model said
	// comes after it: agents put system and developer entries anywhere (claude-agent-acp
	// puts a token count after a tool result), and those do not make the results older.
	lastUser, lastModel := -1, -1
	for i, m := range msgs {
		switch m.role {
		case "assistant", "model":
			lastModel = i
		case "system", "developer":
		default:
			lastUser = i
		}
	}
	for i, m := range msgs {
		for _, c := range m.parts {
			if !c.result || len(t.results) >= maxToolResults {
				continue
			}
			name := c.name
			if name == "" {
				name = names[c.callID]
			}
			t.results = append(t.results, record.ToolResult{CallID: excerptN(c.callID, maxName), Name: excerptN(name, maxName), IsError: c.isError,
				Latest: i == lastUser && lastUser > lastModel, Content: excerpt(c.text), Found: foundTools(name, c)})
		}
	}
	if lastUser < 0 {
		return
	}
	var texts []string
	for _, c := range msgs[lastUser].parts {
		t.lastKinds = append(t.lastKinds, c.kind)
		if c.kind == "text" {
			texts = append(texts, excerptN(c.text, maxPartExcerpt))
		}
	}
	t.lastText = lastTexts(texts)
}

// lastTexts joins the excerpts of a message's text parts, one per line, keeping the latest
// parts within maxExcerpt: agents put their own context (system reminders, skill lists tens
// of kilobytes long) before the user's words, which come last.
func lastTexts(texts []string) string {
	first, size := len(texts), 0
	for first > 0 && size+len(texts[first-1])+1 <= maxExcerpt+1 {
		first--
		size += len(texts[first]) + 1
	}
	return strings.Join(texts[first:], "\n")
}

// addTool appends a tool, bounded.
func (t *turn) addTool(tool Tool) {
	if len(t.tools) < maxTools {
		t.tools = append(t.tools, tool)
	}
}

// textOf reads a JSON value that is either a string or a list of parts with "text" members,
// and returns the start of its text (of each part's, at most maxExcerpt bytes: see textStart).
func textOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		return stringStart(raw, maxExcerpt)
	}
	var parts []struct {
		Text textStart `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(string(p.Text))
	}
	return b.String()
}

// textStart is a JSON string read as its start, at most maxExcerpt bytes: all the emulator
// keeps of any text of a conversation (LastUserText, ToolResult.Content), read without
// decoding the rest, so that a body's long texts are not held again while it is parsed.
type textStart string

func (v *textStart) UnmarshalJSON(data []byte) error {
	*v = textStart(stringStart(data, maxExcerpt))
	return nil
}

// stringStart decodes the first n bytes at most of the JSON string data ("" when data is
// not a string). Only a prefix of data is decoded: 6n bytes of JSON hold n bytes of text or
// more (an escape \uXXXX, the longest, is 6 bytes for 1 to 3 bytes of UTF-8; a surrogate
// pair is 12 for 4), cut where an escape starts.
func stringStart(data []byte, n int) string {
	data = bytes.TrimSpace(data)
	if len(data) < 2 || data[0] != '"' {
		return ""
	}
	if len(data) > 6*n+2 {
		i := 1
		for i < 6*n+1 {
			if data[i] == '\\' && data[i+1] == 'u' {
				i += 6
			} else if data[i] == '\\' {
				i += 2
			} else {
				i++
			}
		}
		data = append(append(make([]byte, 0, i+1), data[:i]...), '"')
	}
	var s string
	_ = json.Unmarshal(data, &s)
	return excerptN(s, n)
}

// The members that hold a conversation's text are read straight into what the emulator
// keeps of them, by the types below, rather than as a json.RawMessage read again: that would
// hold another copy of the largest part of a body while it is parsed. Each one's
// UnmarshalJSON reads data and keeps none of it; a value it cannot read is empty, as a
// lenient read wants (an error would end the whole read).

// textValue is a JSON value read as text (textOf).
type textValue string

func (v *textValue) UnmarshalJSON(data []byte) error {
	*v = textValue(textOf(data))
	return nil
}

// resultContent is an Anthropic tool_result's content: its text (textOf) and the tools its
// tool_reference blocks name (Claude Code's ToolSearch answers with them).
type resultContent struct {
	text string
	refs []string
}

func (v *resultContent) UnmarshalJSON(data []byte) error {
	v.text = textOf(data)
	if !bytes.Contains(data, []byte(`"tool_reference"`)) {
		return nil
	}
	var parts []struct {
		Type     string `json:"type"`
		ToolName string `json:"tool_name"`
	}
	_ = json.Unmarshal(data, &parts)
	for _, p := range parts {
		if p.Type == "tool_reference" && p.ToolName != "" && len(v.refs) < maxFound {
			v.refs = append(v.refs, excerptN(p.ToolName, maxName))
		}
	}
	return nil
}

// rawExcerpt is the start of a JSON value as it is written (excerpt).
type rawExcerpt string

func (v *rawExcerpt) UnmarshalJSON(data []byte) error {
	*v = rawExcerpt(excerpt(string(data[:min(len(data), maxExcerpt+utf8.UTFMax)])))
	return nil
}
