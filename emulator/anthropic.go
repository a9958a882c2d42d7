package emulator

import (
	"encoding/json"
	"strconv"
)

// The Anthropic Messages API answer: a message with text and tool_use content blocks, as
// one JSON object or as the SSE sequence message_start, content_block_start/delta/stop …,
// message_delta, message_stop.

func anthropicStop(a *answer) string {
	if a.tool != nil {
		return "tool_use"
	}
	return "end_turn"
}

func anthropicMessage(a *answer, content []any, stop any, outTokens int) map[string]any {
	return map[string]any{
		"id": "msg_emu_" + strconv.Itoa(a.n), "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": a.inTokens, "output_tokens": outTokens,
			"cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
	}
}

// anthropicSignature stands in for the signature of a thinking block, which clients send
// back with the block and never check themselves.
const anthropicSignature = "emulator-signature"

func anthropicJSON(a *answer) any {
	content := []any{}
	if a.thought != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": a.thought, "signature": anthropicSignature})
	}
	if len(a.chunks) > 0 || a.tool == nil {
		content = append(content, map[string]any{"type": "text", "text": a.text()})
	}
	if a.tool != nil {
		content = append(content, map[string]any{"type": "tool_use", "id": a.toolID, "name": a.tool.Name, "input": a.tool.Input})
	}
	return anthropicMessage(a, content, anthropicStop(a), a.outTokens)
}

func anthropicStream(st *stream, a *answer) error {
	if err := st.event("message_start", map[string]any{"type": "message_start", "message": anthropicMessage(a, []any{}, nil, 1)}); err != nil {
		return err
	}
	if err := st.event("ping", map[string]any{"type": "ping"}); err != nil {
		return err
	}
	index := 0
	if a.thought != "" {
		for _, ev := range []map[string]any{
			{"type": "content_block_start", "index": index, "content_block": map[string]any{"type": "thinking", "thinking": ""}},
			{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "thinking_delta", "thinking": a.thought}},
			{"type": "content_block_delta", "index": index, "delta": map[string]any{"type": "signature_delta", "signature": anthropicSignature}},
			{"type": "content_block_stop", "index": index},
		} {
			if err := st.event(ev["type"].(string), ev); err != nil {
				return err
			}
		}
		index++
	}
	if len(a.chunks) > 0 || a.tool == nil {
		if err := st.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "text", "text": ""}}); err != nil {
			return err
		}
		for i, c := range a.chunks {
			if err := st.delta(i, "content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
				"delta": map[string]any{"type": "text_delta", "text": c}}); err != nil {
				return err
			}
		}
		if err := st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}); err != nil {
			return err
		}
		index++
	}
	if a.tool != nil {
		if len(a.chunks) > 0 {
			if err := pause(st.ctx, st.delay); err != nil {
				return err
			}
		}
		if err := st.event("content_block_start", map[string]any{"type": "content_block_start", "index": index,
			"content_block": map[string]any{"type": "tool_use", "id": a.toolID, "name": a.tool.Name, "input": json.RawMessage("{}")}}); err != nil {
			return err
		}
		if err := st.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": index,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": string(a.tool.Input)}}); err != nil {
			return err
		}
		if err := st.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": index}); err != nil {
			return err
		}
	}
	if err := st.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": anthropicStop(a), "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": a.outTokens}}); err != nil {
		return err
	}
	return st.event("message_stop", map[string]any{"type": "message_stop"})
}
