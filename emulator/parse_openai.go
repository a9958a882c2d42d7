package emulator

import (
	"bytes"
	"encoding/json"
	"strings"
)

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
