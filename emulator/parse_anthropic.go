package emulator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

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
