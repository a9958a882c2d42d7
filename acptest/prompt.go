package acptest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
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

// requiredParams are the required fields of the optional methods (ACP v1 schema): an SDK
// rejects params without them before any handler runs.
var requiredParams = map[string][]string{
	acp.MethodSetConfigOption: {"sessionId", "configId", "value"},
	acp.MethodSetMode:         {"sessionId", "modeId"},
	acp.MethodSetModel:        {"sessionId", "modelId"},
	acp.MethodSessionLoad:     {"sessionId", "cwd", "mcpServers"},
	acp.MethodSessionResume:   {"sessionId", "cwd"},
	acp.MethodSessionFork:     {"sessionId", "cwd"},
	acp.MethodSessionClose:    {"sessionId"},
	acp.MethodSessionDelete:   {"sessionId"},
	acp.MethodSessionList:     {},
}

// validateParams checks an optional method's params the way an SDK validates them, before
// any session lookup: required fields present, strings where strings belong (mcpServers an
// array). It words the error in the persona's style, like validatePrompt.
func validateParams(method string, params acp.Object, style string, code int) *jsonrpc.Error {
	fields, ok := requiredParams[method]
	if !ok {
		return nil
	}
	var bad []paramIssue
	for _, f := range fields {
		if _, present := params[f]; !present {
			bad = append(bad, paramIssue{f, "undefined", f == "mcpServers"})
		}
	}
	for f, v := range params {
		var s string
		if f == "mcpServers" || f == "_meta" || f == "value" || f == "additionalDirectories" {
			continue
		}
		if json.Unmarshal(v, &s) != nil && string(v) != "null" {
			bad = append(bad, paramIssue{f, jsonType(v), false})
		}
	}
	if len(bad) == 0 {
		return nil
	}
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
		tree := map[string]any{"_errors": []string{}}
		for _, b := range bad {
			tree[b.field] = map[string]any{"_errors": []string{b.zodMessage()}}
		}
		data = tree
	case StyleZodUnion:
		var issues []any
		for _, b := range bad {
			issues = append(issues, map[string]any{"expected": b.expected(), "code": "invalid_type", "path": []any{b.field}, "message": b.zodMessage()})
		}
		data = issues
	case StyleSerde:
		msg := "missing field `" + bad[0].field + "`"
		if bad[0].got != "undefined" {
			msg = fmt.Sprintf("invalid type: %s, expected a string", bad[0].got)
		}
		data = map[string]any{"error": msg, "phase": "deserialization"}
	default:
		e.Message = "Invalid params: " + bad[0].field + " is required and must be a " + bad[0].expected()
	}
	if data != nil {
		e.Data, _ = json.Marshal(data)
	}
	return e
}

// paramIssue is a field that is missing (got "undefined") or of the wrong JSON type.
type paramIssue struct {
	field, got string
	array      bool
}

func (p paramIssue) expected() string {
	if p.array {
		return "array"
	}
	return "string"
}

func (p paramIssue) zodMessage() string {
	return fmt.Sprintf("Invalid input: expected %s, received %s", p.expected(), p.got)
}

// jsonType names a JSON value's type as zod does.
func jsonType(v json.RawMessage) string {
	switch t := strings.TrimSpace(string(v)); {
	case strings.HasPrefix(t, "{"):
		return "object"
	case strings.HasPrefix(t, "["):
		return "array"
	case strings.HasPrefix(t, `"`):
		return "string"
	case t == "true" || t == "false":
		return "boolean"
	}
	return "number"
}
