package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"sort"
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

// openAIContent is OpenAI message content, read into its parts (openAIParts).
type openAIContent []content

func (c *openAIContent) UnmarshalJSON(data []byte) error {
	*c = openAIParts(data)
	return nil
}

// text is the content's text: its parts' text, joined (textOf).
func (c openAIContent) text() string {
	if len(c) == 1 {
		return c[0].text
	}
	var b strings.Builder
	for _, p := range c {
		b.WriteString(p.text)
	}
	return b.String()
}

// anthropicContent is a Messages API message's content, a string or a list of blocks, read
// into its parts.
type anthropicContent []content

func (c *anthropicContent) UnmarshalJSON(data []byte) error {
	if s := bytes.TrimSpace(data); len(s) > 0 && s[0] == '"' {
		*c = anthropicContent{{kind: "text", text: textOf(s)}}
		return nil
	}
	var blocks []struct {
		Type      string        `json:"type"`
		Text      textStart     `json:"text"`
		ID        string        `json:"id"`
		Name      string        `json:"name"`
		ToolUseID string        `json:"tool_use_id"`
		Content   resultContent `json:"content"`
		IsError   bool          `json:"is_error"`
	}
	_ = json.Unmarshal(data, &blocks)
	*c = make(anthropicContent, 0, len(blocks))
	for _, b := range blocks {
		part := content{kind: b.Type, text: string(b.Text)}
		switch b.Type {
		case "tool_use", "server_tool_use":
			part.call, part.callID, part.name = true, b.ID, b.Name
		case "tool_result":
			part.result, part.callID, part.isError, part.text, part.refs = true, b.ToolUseID, b.IsError, b.Content.text, b.Content.refs
		}
		*c = append(*c, part)
	}
	return nil
}

// parseAnthropic reads a Messages API request.
func parseAnthropic(body []byte) (*turn, error) {
	type format struct {
		Type   string          `json:"type"`
		Schema json.RawMessage `json:"schema"`
	}
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Name        string          `json:"name"`
			Type        string          `json:"type"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Messages []struct {
			Role    string           `json:"role"`
			Content anthropicContent `json:"content"`
		} `json:"messages"`
		Thinking *struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
		StopSequences []string `json:"stop_sequences"`
		OutputFormat  *format  `json:"output_format"`
		OutputConfig  *struct {
			Effort string  `json:"effort"`
			Format *format `json:"format"`
		} `json:"output_config"`
	}
	skipped, err := decode(body, &req)
	if err != nil {
		return nil, err
	}
	t := &turn{model: req.Model, stream: req.Stream, skipped: skipped, verdict: verdictFor(req.StopSequences)}
	for _, tl := range req.Tools {
		name := tl.Name
		if name == "" {
			name = tl.Type
		}
		t.addTool(Tool{Name: name, Description: tl.Description, Schema: tl.InputSchema})
	}
	var reasoning []string
	if req.Thinking != nil && req.Thinking.Type != "" {
		s := "thinking=" + req.Thinking.Type
		if req.Thinking.BudgetTokens > 0 {
			s += fmt.Sprintf(" budget=%d", req.Thinking.BudgetTokens)
		}
		reasoning = append(reasoning, s)
	}
	f := req.OutputFormat
	if oc := req.OutputConfig; oc != nil {
		if oc.Effort != "" {
			reasoning = append(reasoning, "effort="+oc.Effort)
		}
		if oc.Format != nil {
			f = oc.Format
		}
	}
	t.reasoning = strings.Join(reasoning, " ")
	if f != nil && f.Type == "json_schema" {
		t.structured, t.schema = true, f.Schema
	}
	msgs := make([]message, 0, len(req.Messages))
	for _, m := range req.Messages {
		msgs = append(msgs, message{role: m.Role, parts: m.Content})
	}
	t.finish(msgs)
	return t, nil
}

// responsesTool is a tool of an OpenAI Responses request.
type responsesTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

func (tl responsesTool) tool() Tool {
	name := tl.Name
	if name == "" {
		name = tl.Type
	}
	return Tool{Name: name, Description: tl.Description, Custom: tl.Type == "custom", Schema: tl.Parameters}
}

// parseResponses reads an OpenAI Responses API request.
func parseResponses(body []byte) (*turn, error) {
	var req struct {
		Model  string         `json:"model"`
		Stream bool           `json:"stream"`
		Tools  []requestTool  `json:"tools"`
		Input  responsesInput `json:"input"`
		Text   *struct {
			Format *struct {
				Type   string          `json:"type"`
				Schema json.RawMessage `json:"schema"`
			} `json:"format"`
		} `json:"text"`
		Reasoning *struct {
			Effort  string `json:"effort"`
			Summary string `json:"summary"`
		} `json:"reasoning"`
	}
	skipped, err := decode(body, &req)
	if err != nil {
		return nil, err
	}
	t := &turn{model: req.Model, stream: req.Stream, skipped: skipped}
	for _, tl := range append(req.Tools, req.Input.tools...) {
		if tl.Type == "namespace" {
			for _, in := range tl.Tools {
				tool := in.tool()
				tool.Namespace = tl.Name
				t.addTool(tool)
				t.addNested(tool)
			}
			continue
		}
		t.addTool(tl.tool())
		t.addNested(tl.tool())
	}
	if r := req.Reasoning; r != nil && r.Effort != "" {
		t.reasoning = "effort=" + r.Effort
	}
	if req.Text != nil && req.Text.Format != nil {
		switch req.Text.Format.Type {
		case "json_schema":
			t.structured, t.schema = true, req.Text.Format.Schema
		case "json_object":
			t.structured = true
		}
	}
	t.finish(req.Input.msgs)
	return t, nil
}

// requestTool is a tool of a Responses request, or a "namespace" of tools.
type requestTool struct {
	responsesTool
	// Tools are the tools of a "namespace" tool.
	Tools []responsesTool `json:"tools"`
}

// responsesInput is a Responses request's input, a string or a list of items, read into its
// messages (see textValue), and the tools its "additional_tools" items offer (codex-acp 2.6
// offers its tools so, not in the request's tools).
type responsesInput struct {
	msgs  []message
	tools []requestTool
}

func (in *responsesInput) UnmarshalJSON(data []byte) error {
	if s := bytes.TrimSpace(data); len(s) > 0 && s[0] == '"' {
		in.msgs = []message{{role: "user", parts: []content{{kind: "text", text: textOf(s)}}}}
		return nil
	}
	var items []struct {
		Type    string        `json:"type"`
		Role    string        `json:"role"`
		Content openAIContent `json:"content"`
		CallID  string        `json:"call_id"`
		Name    string        `json:"name"`
		Output  textValue     `json:"output"`
		Tools   []requestTool `json:"tools"`
	}
	_ = json.Unmarshal(data, &items)
	msgs := []message(nil)
	for _, it := range items {
		switch it.Type {
		case "function_call", "custom_tool_call", "local_shell_call":
			msgs = appendPart(msgs, "assistant", content{kind: it.Type, call: true, callID: it.CallID, name: it.Name})
		case "function_call_output", "custom_tool_call_output", "local_shell_call_output":
			msgs = appendPart(msgs, "tool", content{kind: "tool_result", result: true, callID: it.CallID, text: string(it.Output)})
		case "", "message":
			msgs = append(msgs, message{role: it.Role, parts: it.Content})
		case "additional_tools":
			in.tools = append(in.tools, it.Tools...)
		default:
			msgs = appendPart(msgs, "assistant", content{kind: it.Type})
		}
	}
	in.msgs = msgs
	return nil
}

// appendPart adds c to the last message when it has the same role, or starts a new one.
func appendPart(msgs []message, role string, c content) []message {
	if n := len(msgs); n > 0 && msgs[n-1].role == role {
		msgs[n-1].parts = append(msgs[n-1].parts, c)
		return msgs
	}
	return append(msgs, message{role: role, parts: []content{c}})
}

// openAIParts reads OpenAI message content: a string or a list of typed parts
// (input_text, output_text, text, input_image, image_url, input_audio, input_file, file …).
func openAIParts(raw json.RawMessage) []content {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		return []content{{kind: "text", text: textOf(raw)}}
	}
	var parts []struct {
		Type string    `json:"type"`
		Text textStart `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	out := make([]content, 0, len(parts))
	for _, p := range parts {
		kind := p.Type
		switch p.Type {
		case "input_text", "output_text":
			kind = "text"
		case "input_image", "image_url":
			kind = "image"
		case "input_audio":
			kind = "audio"
		case "input_file", "file":
			kind = "file"
		}
		out = append(out, content{kind: kind, text: string(p.Text)})
	}
	return out
}

// parseChat reads an OpenAI Chat Completions request.
func parseChat(body []byte) (*turn, error) {
	var req struct {
		Model  string `json:"model"`
		Stream bool   `json:"stream"`
		Tools  []struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role       string        `json:"role"`
			Content    openAIContent `json:"content"`
			ToolCallID string        `json:"tool_call_id"`
			ToolCalls  []struct {
				ID       string `json:"id"`
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		ResponseFormat *struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		ReasoningEffort string `json:"reasoning_effort"`
		// Reasoning is OpenRouter's form, {"effort": …}, which qwen-code sends; other
		// providers put other shapes there, which are not an error.
		Reasoning     json.RawMessage `json:"reasoning"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	skipped, err := decode(body, &req)
	if err != nil {
		return nil, err
	}
	t := &turn{model: req.Model, stream: req.Stream, usage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage, skipped: skipped}
	for _, tl := range req.Tools {
		name := tl.Function.Name
		if name == "" {
			name = tl.Type
		}
		t.addTool(Tool{Name: name, Description: tl.Function.Description, Schema: tl.Function.Parameters})
	}
	if req.ReasoningEffort != "" {
		t.reasoning = "effort=" + req.ReasoningEffort
	} else {
		var r struct {
			Effort string `json:"effort"`
		}
		if json.Unmarshal(req.Reasoning, &r) == nil && r.Effort != "" {
			t.reasoning = "effort=" + r.Effort
		}
	}
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case "json_schema":
			t.structured = true
			if rf.JSONSchema != nil {
				t.schema = rf.JSONSchema.Schema
			}
		case "json_object":
			t.structured = true
		}
	}
	msgs := make([]message, 0, len(req.Messages))
	for _, m := range req.Messages {
		if m.Role == "tool" {
			msgs = appendPart(msgs, "tool", content{kind: "tool_result", result: true, callID: m.ToolCallID, text: m.Content.text()})
			continue
		}
		msg := message{role: m.Role, parts: m.Content}
		for _, c := range m.ToolCalls {
			msg.parts = append(msg.parts, content{kind: "tool_call", call: true, callID: c.ID, name: c.Function.Name})
		}
		msgs = append(msgs, msg)
	}
	t.finish(msgs)
	return t, nil
}

// parseGemini reads a Gemini generateContent request; the model comes from the path.
func parseGemini(body []byte, model string, stream bool) (*turn, error) {
	type part struct {
		Text         *textStart `json:"text"`
		Thought      bool       `json:"thought"`
		InlineData   *blob      `json:"inlineData"`
		FileData     *blob      `json:"fileData"`
		FunctionCall *struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"functionCall"`
		FunctionResponse *struct {
			ID       string     `json:"id"`
			Name     string     `json:"name"`
			Response rawExcerpt `json:"response"`
		} `json:"functionResponse"`
	}
	type decl struct {
		Name                 string          `json:"name"`
		Description          string          `json:"description"`
		Parameters           json.RawMessage `json:"parameters"`
		ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []part `json:"parts"`
		} `json:"contents"`
		Tools            []map[string]json.RawMessage `json:"tools"`
		GenerationConfig *struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseSchema     json.RawMessage `json:"responseSchema"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
			ThinkingConfig     *struct {
				ThinkingBudget  *int   `json:"thinkingBudget"`
				ThinkingLevel   string `json:"thinkingLevel"`
				IncludeThoughts bool   `json:"includeThoughts"`
			} `json:"thinkingConfig"`
		} `json:"generationConfig"`
	}
	skipped, err := decode(body, &req)
	if err != nil {
		return nil, err
	}
	t := &turn{model: model, stream: stream, skipped: skipped}
	for _, tl := range req.Tools {
		if raw, ok := tl["functionDeclarations"]; ok {
			var decls []decl
			_ = json.Unmarshal(raw, &decls)
			for _, d := range decls {
				schema := d.ParametersJSONSchema
				if len(schema) == 0 {
					schema = d.Parameters
				}
				t.addTool(Tool{Name: d.Name, Description: d.Description, Schema: schema})
			}
			continue
		}
		keys := make([]string, 0, len(tl))
		for k := range tl {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.addTool(Tool{Name: k})
		}
	}
	if gc := req.GenerationConfig; gc != nil {
		switch {
		case len(gc.ResponseJSONSchema) > 0:
			t.structured, t.schema = true, gc.ResponseJSONSchema
		case len(gc.ResponseSchema) > 0:
			t.structured, t.schema = true, gc.ResponseSchema
		case gc.ResponseMimeType == "application/json":
			t.structured = true
		}
		if tc := gc.ThinkingConfig; tc != nil {
			var r []string
			if tc.ThinkingLevel != "" {
				r = append(r, "thinkingLevel="+tc.ThinkingLevel)
			}
			if tc.ThinkingBudget != nil {
				r = append(r, fmt.Sprintf("thinkingBudget=%d", *tc.ThinkingBudget))
			}
			if tc.IncludeThoughts {
				r = append(r, "includeThoughts")
			}
			t.reasoning = strings.Join(r, " ")
		}
	}
	msgs := make([]message, 0, len(req.Contents))
	for _, c := range req.Contents {
		role := c.Role
		if role == "" {
			role = "user"
		}
		msg := message{role: role}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				msg.parts = append(msg.parts, content{kind: "functionCall", call: true, callID: p.FunctionCall.ID, name: p.FunctionCall.Name})
			case p.FunctionResponse != nil:
				msg.parts = append(msg.parts, content{kind: "tool_result", result: true, callID: p.FunctionResponse.ID,
					name: p.FunctionResponse.Name, text: string(p.FunctionResponse.Response)})
			case p.Text != nil && p.Thought:
				msg.parts = append(msg.parts, content{kind: "thought"})
			case p.Text != nil:
				msg.parts = append(msg.parts, content{kind: "text", text: string(*p.Text)})
			case p.InlineData != nil:
				msg.parts = append(msg.parts, content{kind: "inlineData:" + p.InlineData.MimeType})
			case p.FileData != nil:
				msg.parts = append(msg.parts, content{kind: "fileData:" + p.FileData.MimeType})
			default:
				msg.parts = append(msg.parts, content{kind: "other"})
			}
		}
		msgs = append(msgs, msg)
	}
	t.finish(msgs)
	return t, nil
}

// blob is a Gemini inlineData or fileData part, of which the emulator reads the type (a
// json.RawMessage would copy the data).
type blob struct {
	MimeType string `json:"mimeType"`
}
