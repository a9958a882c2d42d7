package acptest

import (
	"encoding/json"
	"fmt"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Prompt error styles: how a persona words a session/prompt params error, as the SDKs real
// agents are built on do.
const (
	StylePlain    = ""          // -32602 with a sentence
	StyleZodTree  = "zod-tree"  // TypeScript SDK, zod's formatted tree ({_errors, field: {_errors}}), as claude-agent-acp
	StyleZodUnion = "zod-union" // zod issue list with invalid_union branches, as gemini-cli
	StyleSerde    = "serde"     // Rust SDK, serde messages, as codex-acp
)

// contentBlocks are the ACP content block variants and their required fields (besides type).
var contentBlocks = []struct {
	kind     string
	required []string
}{
	{"text", []string{"text"}},
	{"image", []string{"data", "mimeType"}},
	{"audio", []string{"data", "mimeType"}},
	{"resource_link", []string{"name", "uri"}},
	{"resource", []string{"resource"}},
}

// validatePrompt checks a prompt the way an SDK validates params, before any session lookup:
// an array of content blocks, each with a known type and its required fields.
func validatePrompt(raw json.RawMessage, style string, code int) *jsonrpc.Error {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil || raw == nil {
		return promptError(style, code, -1, "array", nil)
	}
	for i, item := range items {
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil {
			return promptError(style, code, i, "object", nil)
		}
		var kind string
		_ = json.Unmarshal(obj["type"], &kind)
		for _, b := range contentBlocks {
			if b.kind != kind {
				continue
			}
			for _, f := range b.required {
				if _, ok := obj[f]; !ok {
					return promptError(style, code, i, "", obj)
				}
			}
			goto next
		}
		return promptError(style, code, i, "", obj)
	next:
	}
	return nil
}

// promptError words the error: index -1 is a prompt that is not an array; want names a wrong
// JSON type of the item; otherwise obj is an item that matches no content block.
func promptError(style string, code, index int, want string, obj map[string]json.RawMessage) *jsonrpc.Error {
	if code == 0 {
		code = jsonrpc.CodeInvalidParams
	}
	e := &jsonrpc.Error{Code: code, Message: "Invalid params"}
	if code == jsonrpc.CodeInternalError {
		e.Message = "Internal error"
	}
	var data any
	switch style {
	case StyleZodTree:
		if index < 0 {
			data = map[string]any{"_errors": []string{}, "prompt": map[string]any{"_errors": []string{"Invalid input: expected array, received string"}}}
			break
		}
		item := map[string]any{"_errors": []string{}}
		var typeErrs []string
		for _, b := range contentBlocks {
			typeErrs = append(typeErrs, fmt.Sprintf("Invalid input: expected %q", b.kind))
			for _, f := range b.required {
				if _, ok := obj[f]; !ok {
					node, _ := item[f].(map[string]any)
					if node == nil {
						node = map[string]any{"_errors": []string{}}
					}
					node["_errors"] = append(node["_errors"].([]string), "Invalid input: expected string, received undefined")
					item[f] = node
				}
			}
		}
		item["type"] = map[string]any{"_errors": typeErrs}
		data = map[string]any{"_errors": []string{}, "prompt": map[string]any{"_errors": []string{}, fmt.Sprint(index): item}}
	case StyleZodUnion:
		if index < 0 {
			data = []any{map[string]any{"expected": "array", "code": "invalid_type", "path": []any{"prompt"}, "message": "Invalid input: expected array, received string"}}
			break
		}
		var branches []any
		for _, b := range contentBlocks {
			var issues []any
			for _, f := range b.required {
				if _, ok := obj[f]; !ok {
					issues = append(issues, map[string]any{"expected": "string", "code": "invalid_type", "path": []any{f}, "message": "Invalid input: expected string, received undefined"})
				}
			}
			issues = append(issues, map[string]any{"code": "invalid_value", "values": []string{b.kind}, "path": []any{"type"}, "message": fmt.Sprintf("Invalid input: expected %q", b.kind)})
			branches = append(branches, issues)
		}
		data = []any{map[string]any{"code": "invalid_union", "errors": branches, "path": []any{"prompt", index}, "message": "Invalid input"}}
	case StyleSerde:
		msg := "invalid type: string, expected a sequence"
		if index >= 0 {
			var kind string
			_ = json.Unmarshal(obj["type"], &kind)
			switch {
			case obj["type"] == nil:
				msg = "missing field `type`"
			case !knownBlock(kind):
				msg = fmt.Sprintf("unknown variant `%s`, expected one of `text`, `image`, `audio`, `resource_link`, `resource`", kind)
			default:
				msg = "missing field `" + missingOf(kind, obj) + "`"
			}
		}
		data = map[string]any{"error": msg, "phase": "deserialization"}
	default:
		e.Message = "Invalid params: prompt must be an array of content blocks with a known type"
	}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	return e
}

func knownBlock(kind string) bool {
	for _, b := range contentBlocks {
		if b.kind == kind {
			return true
		}
	}
	return false
}

func missingOf(kind string, obj map[string]json.RawMessage) string {
	for _, b := range contentBlocks {
		if b.kind != kind {
			continue
		}
		for _, f := range b.required {
			if _, ok := obj[f]; !ok {
				return f
			}
		}
	}
	return ""
}
