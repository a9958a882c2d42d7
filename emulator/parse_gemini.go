package emulator

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

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
