package emulator

import (
	"encoding/json"
	"strconv"
)

// The Gemini answer: GenerateContentResponse objects whose candidate holds text parts and a
// functionCall part. generateContent sends one; streamGenerateContent?alt=sse sends one per
// chunk as SSE data (the last one carries finishReason and usageMetadata), and without
// alt=sse the same chunks as one JSON array.

func geminiChunk(a *answer, parts []any, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
	r := map[string]any{"candidates": []any{cand}, "modelVersion": a.model, "responseId": "emu-" + strconv.Itoa(a.n)}
	if last {
		cand["finishReason"] = "STOP"
		r["usageMetadata"] = map[string]any{"promptTokenCount": a.inTokens, "candidatesTokenCount": a.outTokens,
			"totalTokenCount": a.inTokens + a.outTokens}
	}
	return r
}

func geminiCall(a *answer) map[string]any {
	args := a.tool.Input
	if a.tool.IsCustom {
		args, _ = json.Marshal(map[string]string{"input": a.tool.Custom})
	}
	return map[string]any{"functionCall": map[string]any{"name": a.tool.Name, "args": args, "id": a.toolID}}
}

// geminiChunks splits the answer into response chunks: one per text chunk, then the call.
func geminiChunks(a *answer) []map[string]any {
	var parts [][]any
	if a.thought != "" {
		parts = append(parts, []any{map[string]any{"text": a.thought, "thought": true}})
	}
	for _, c := range a.chunks {
		parts = append(parts, []any{map[string]any{"text": c}})
	}
	if a.tool != nil {
		parts = append(parts, []any{geminiCall(a)})
	}
	if len(parts) == 0 {
		parts = append(parts, []any{map[string]any{"text": ""}})
	}
	out := make([]map[string]any, len(parts))
	for i, p := range parts {
		out[i] = geminiChunk(a, p, i == len(parts)-1)
	}
	return out
}

func geminiJSON(a *answer) any {
	var parts []any
	if a.thought != "" {
		parts = append(parts, map[string]any{"text": a.thought, "thought": true})
	}
	if len(a.chunks) > 0 || a.tool == nil {
		parts = append(parts, map[string]any{"text": a.text()})
	}
	if a.tool != nil {
		parts = append(parts, geminiCall(a))
	}
	return geminiChunk(a, parts, true)
}

func geminiArray(a *answer) any { return geminiChunks(a) }

func geminiStream(st *stream, a *answer) error {
	chunks := geminiChunks(a)
	first := 0 // the index of the first text chunk
	if a.thought != "" {
		first = 1
	}
	for i, c := range chunks {
		var err error
		switch {
		case i < first:
			err = st.event("", c)
		case i < first+len(a.chunks):
			err = st.delta(i-first, "", c)
		default: // the tool call, or the empty text of an empty answer
			if len(a.chunks) > 0 {
				if err = pause(st.ctx, st.delay); err != nil {
					return err
				}
			}
			err = st.event("", c)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
