package emulator

import (
	"strconv"
	"time"
)

// The OpenAI answers. Responses: a response whose output is a message item (output_text)
// and a function_call or custom_tool_call item, as JSON or as the SSE sequence
// response.created … response.output_item.done … response.completed. Chat Completions: a
// chat.completion, or chat.completion.chunk events ending with data: [DONE].

func responsesUsage(a *answer) map[string]any {
	return map[string]any{"input_tokens": a.inTokens, "output_tokens": a.outTokens, "total_tokens": a.inTokens + a.outTokens,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
}

func responsesObject(a *answer, status string, output []any) map[string]any {
	r := map[string]any{"id": "resp_emu_" + strconv.Itoa(a.n), "object": "response", "created_at": time.Now().Unix(),
		"status": status, "model": a.model, "output": output}
	if status == "completed" {
		r["usage"] = responsesUsage(a)
	}
	return r
}

func responsesMessage(a *answer, status string, text *string) map[string]any {
	content := []any{}
	if text != nil {
		content = append(content, map[string]any{"type": "output_text", "text": *text, "annotations": []any{}})
	}
	return map[string]any{"id": "msg_emu_" + strconv.Itoa(a.n), "type": "message", "status": status, "role": "assistant", "content": content}
}

func responsesToolItem(a *answer, status string, done bool) map[string]any {
	item := map[string]any{"id": "fc_emu_" + strconv.Itoa(a.n), "call_id": a.toolID, "name": a.tool.Name, "status": status}
	if a.tool.Namespace != "" {
		item["namespace"] = a.tool.Namespace
	}
	switch {
	case a.tool.IsCustom:
		item["type"], item["input"] = "custom_tool_call", ""
		if done {
			item["input"] = a.tool.Custom
		}
	default:
		item["type"], item["arguments"] = "function_call", ""
		if done {
			item["arguments"] = string(a.tool.Input)
		}
	}
	return item
}

func responsesReasoning(a *answer, done bool) map[string]any {
	summary := []any{}
	if done {
		summary = append(summary, map[string]any{"type": "summary_text", "text": a.thought})
	}
	return map[string]any{"id": "rs_emu_" + strconv.Itoa(a.n), "type": "reasoning", "summary": summary}
}

func responsesOutput(a *answer) []any {
	out := []any{}
	if a.thought != "" {
		out = append(out, responsesReasoning(a, true))
	}
	if len(a.chunks) > 0 || a.tool == nil {
		text := a.text()
		out = append(out, responsesMessage(a, "completed", &text))
	}
	if a.tool != nil {
		out = append(out, responsesToolItem(a, "completed", true))
	}
	return out
}

func responsesJSON(a *answer) any { return responsesObject(a, "completed", responsesOutput(a)) }

func responsesStream(st *stream, a *answer) error {
	seq := 0
	send := func(typ string, fields map[string]any) error {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return st.event(typ, fields)
	}
	if err := send("response.created", map[string]any{"response": responsesObject(a, "in_progress", []any{})}); err != nil {
		return err
	}
	if err := send("response.in_progress", map[string]any{"response": responsesObject(a, "in_progress", []any{})}); err != nil {
		return err
	}
	index := 0
	if a.thought != "" {
		itemID := "rs_emu_" + strconv.Itoa(a.n)
		part := map[string]any{"type": "summary_text", "text": a.thought}
		for _, ev := range []struct {
			typ    string
			fields map[string]any
		}{
			{"response.output_item.added", map[string]any{"output_index": index, "item": responsesReasoning(a, false)}},
			{"response.reasoning_summary_part.added", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": ""}}},
			{"response.reasoning_summary_text.delta", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0, "delta": a.thought}},
			{"response.reasoning_summary_text.done", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0, "text": a.thought}},
			{"response.reasoning_summary_part.done", map[string]any{"item_id": itemID, "output_index": index, "summary_index": 0, "part": part}},
			{"response.output_item.done", map[string]any{"output_index": index, "item": responsesReasoning(a, true)}},
		} {
			if err := send(ev.typ, ev.fields); err != nil {
				return err
			}
		}
		index++
	}
	if len(a.chunks) > 0 || a.tool == nil {
		itemID := "msg_emu_" + strconv.Itoa(a.n)
		if err := send("response.output_item.added", map[string]any{"output_index": index, "item": responsesMessage(a, "in_progress", nil)}); err != nil {
			return err
		}
		empty := ""
		part := map[string]any{"type": "output_text", "text": empty, "annotations": []any{}}
		if err := send("response.content_part.added", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "part": part}); err != nil {
			return err
		}
		for i, c := range a.chunks {
			fields := map[string]any{"type": "response.output_text.delta", "sequence_number": seq, "item_id": itemID,
				"output_index": index, "content_index": 0, "delta": c}
			seq++
			if err := st.delta(i, "response.output_text.delta", fields); err != nil {
				return err
			}
		}
		text := a.text()
		if err := send("response.output_text.done", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "text": text}); err != nil {
			return err
		}
		part = map[string]any{"type": "output_text", "text": text, "annotations": []any{}}
		if err := send("response.content_part.done", map[string]any{"item_id": itemID, "output_index": index, "content_index": 0, "part": part}); err != nil {
			return err
		}
		if err := send("response.output_item.done", map[string]any{"output_index": index, "item": responsesMessage(a, "completed", &text)}); err != nil {
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
		if err := send("response.output_item.added", map[string]any{"output_index": index, "item": responsesToolItem(a, "in_progress", false)}); err != nil {
			return err
		}
		itemID := "fc_emu_" + strconv.Itoa(a.n)
		if a.tool.IsCustom {
			if err := send("response.custom_tool_call_input.delta", map[string]any{"item_id": itemID, "output_index": index, "delta": a.tool.Custom}); err != nil {
				return err
			}
			if err := send("response.custom_tool_call_input.done", map[string]any{"item_id": itemID, "output_index": index, "input": a.tool.Custom}); err != nil {
				return err
			}
		} else {
			if err := send("response.function_call_arguments.delta", map[string]any{"item_id": itemID, "output_index": index, "delta": string(a.tool.Input)}); err != nil {
				return err
			}
			if err := send("response.function_call_arguments.done", map[string]any{"item_id": itemID, "output_index": index, "arguments": string(a.tool.Input)}); err != nil {
				return err
			}
		}
		if err := send("response.output_item.done", map[string]any{"output_index": index, "item": responsesToolItem(a, "completed", true)}); err != nil {
			return err
		}
	}
	return send("response.completed", map[string]any{"response": responsesObject(a, "completed", responsesOutput(a))})
}

func chatFinish(a *answer) string {
	if a.tool != nil {
		return "tool_calls"
	}
	return "stop"
}

func chatUsage(a *answer) map[string]any {
	return map[string]any{"prompt_tokens": a.inTokens, "completion_tokens": a.outTokens, "total_tokens": a.inTokens + a.outTokens}
}

func chatToolCall(a *answer, args string) map[string]any {
	return map[string]any{"id": a.toolID, "type": "function", "function": map[string]any{"name": a.tool.Name, "arguments": args}}
}

func chatJSON(a *answer) any {
	msg := map[string]any{"role": "assistant", "content": a.text()}
	if a.thought != "" {
		msg["reasoning_content"] = a.thought
	}
	if a.tool != nil {
		msg["tool_calls"] = []any{chatToolCall(a, string(a.tool.Input))}
		if len(a.chunks) == 0 {
			msg["content"] = nil
		}
	}
	return map[string]any{"id": "chatcmpl-emu-" + strconv.Itoa(a.n), "object": "chat.completion", "created": time.Now().Unix(),
		"model": a.model, "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": chatFinish(a)}},
		"usage": chatUsage(a)}
}

func chatStream(st *stream, a *answer) error {
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-emu-" + strconv.Itoa(a.n), "object": "chat.completion.chunk", "created": created,
			"model": a.model, "choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if err := st.event("", chunk(map[string]any{"role": "assistant", "content": ""}, nil)); err != nil {
		return err
	}
	if a.thought != "" {
		if err := st.event("", chunk(map[string]any{"reasoning_content": a.thought}, nil)); err != nil {
			return err
		}
	}
	for i, c := range a.chunks {
		if err := st.delta(i, "", chunk(map[string]any{"content": c}, nil)); err != nil {
			return err
		}
	}
	if a.tool != nil {
		if len(a.chunks) > 0 {
			if err := pause(st.ctx, st.delay); err != nil {
				return err
			}
		}
		call := chatToolCall(a, string(a.tool.Input))
		call["index"] = 0
		if err := st.event("", chunk(map[string]any{"tool_calls": []any{call}}, nil)); err != nil {
			return err
		}
	}
	if err := st.event("", chunk(map[string]any{}, chatFinish(a))); err != nil {
		return err
	}
	if a.usage {
		c := chunk(map[string]any{}, nil)
		c["choices"], c["usage"] = []any{}, chatUsage(a)
		if err := st.event("", c); err != nil {
			return err
		}
	}
	return st.raw("", []byte("[DONE]"))
}
