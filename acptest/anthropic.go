package acptest

// The model persona's side of the Anthropic Messages API: the request (POST /v1/messages,
// stream true), the prompt's content blocks in the API's form, and the SSE answer read
// into text, thinking and tool_use blocks with the usage.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
)

// Limits on what the model sends back.
const (
	maxStream      = 32 << 20 // one answer, in bytes
	maxStreamLine  = 4 << 20  // one SSE line
	maxBlocks      = 256      // content blocks in one answer
	maxErrorBody   = 4 << 10  // the part of an error answer quoted in the turn's error
	maxTokens      = 4096     // the request's max_tokens
	contextSize    = 200000   // usage_update.size: the context window the persona claims
	anthropicVer   = "2023-06-01"
	systemPrompt   = "You are acptest-model, the reference agent of acpprobe. Use the tools to act in the session's working directory."
	modelUserAgent = "acptest-model/0.1.0"
)

// modelURL is the Messages endpoint under ANTHROPIC_BASE_URL. The persona only ever talks
// to a model on loopback: whatever the environment says, it never reaches a provider.
func modelURL(base string) (string, error) {
	if base == "" {
		return "", errors.New("ANTHROPIC_BASE_URL is not set: the model persona talks only to a model on loopback (the emulator)")
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("ANTHROPIC_BASE_URL %q is not an http(s) URL", base)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !(host == "localhost" || ip != nil && ip.IsLoopback()) {
		return "", fmt.Errorf("ANTHROPIC_BASE_URL %q is not on loopback: the model persona never reaches a real provider", base)
	}
	return strings.TrimSuffix(base, "/") + "/v1/messages", nil
}

// userContent maps prompt content blocks to Anthropic content: text as text, an image as an
// image (base64 source), a resource_link as a text "[name](uri)", an embedded text resource
// as a document (text source, titled with its uri), a blob resource as a document (PDF), an
// image, or a text that names it. Audio never gets here (the persona refuses it). dropped
// keeps only the text blocks (the DropBlocks fault).
func userContent(blocks []acp.Object, dropped bool) []any {
	var out []any
	for _, b := range blocks {
		kind := b.String("type")
		if dropped && kind != "text" {
			continue
		}
		switch kind {
		case "text":
			out = append(out, map[string]any{"type": "text", "text": b.String("text")})
		case "image":
			out = append(out, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": b.String("mimeType"), "data": b.String("data")}})
		case "resource_link":
			out = append(out, map[string]any{"type": "text", "text": fmt.Sprintf("[%s](%s)", b.String("name"), b.String("uri"))})
		case "resource":
			out = append(out, resourceContent(b.Object("resource")))
		}
	}
	if len(out) == 0 {
		out = append(out, map[string]any{"type": "text", "text": ""})
	}
	return out
}

func resourceContent(r acp.Object) any {
	uri, mime := r.String("uri"), r.String("mimeType")
	if r.Has("text") {
		return map[string]any{"type": "document", "title": uri, "source": map[string]any{"type": "text", "media_type": "text/plain", "data": r.String("text")}}
	}
	blob := r.String("blob")
	switch {
	case mime == "application/pdf":
		return map[string]any{"type": "document", "title": uri, "source": map[string]any{"type": "base64", "media_type": mime, "data": blob}}
	case strings.HasPrefix(mime, "image/"):
		return map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": mime, "data": blob}}
	}
	return map[string]any{"type": "text", "text": fmt.Sprintf("[resource %s (%s), %d bytes not shown]", uri, mime, base64.StdEncoding.DecodedLen(len(blob)))}
}

// modelReply is one answer of the model.
type modelReply struct {
	content []any // the assistant message's content blocks, for the conversation
	uses    []toolUse
	stop    string // stop_reason
	in, out int    // tokens
}

// toolUse is a tool the model asked to call.
type toolUse struct {
	id, name string
	input    json.RawMessage
}

// callModel posts body and reads the streamed answer; onDelta gets each text (thought
// false) and thinking (thought true) delta as it arrives. Cancelling ctx aborts the stream.
func (h *modelHost) callModel(ctx context.Context, body []byte, onDelta func(thought bool, text string)) (*modelReply, error) {
	endpoint, err := modelURL(h.env["ANTHROPIC_BASE_URL"])
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Anthropic-Version", anthropicVer)
	req.Header.Set("User-Agent", modelUserAgent)
	if key := h.env["ANTHROPIC_API_KEY"]; key != "" {
		req.Header.Set("X-Api-Key", key)
	}
	resp, err := h.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, fmt.Errorf("API Error: %d %s", resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return nil, fmt.Errorf("the model answered %q, not an event stream", ct)
	}
	return readStream(io.LimitReader(resp.Body, maxStream), onDelta)
}

// streamBlock is a content block being streamed.
type streamBlock struct {
	kind, id, name string
	text, sig      strings.Builder
	input          bytes.Buffer
}

// streamEvent is the union of the Messages API's stream events.
type streamEvent struct {
	Type    string `json:"type"`
	Message struct {
		Usage streamUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Thinking string `json:"thinking"`
		ID       string `json:"id"`
		Name     string `json:"name"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *streamUsage `json:"usage"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

type streamUsage struct {
	Input       int `json:"input_tokens"`
	Output      int `json:"output_tokens"`
	CacheCreate int `json:"cache_creation_input_tokens"`
	CacheRead   int `json:"cache_read_input_tokens"`
}

// readStream reads SSE events until message_stop.
func readStream(r io.Reader, onDelta func(thought bool, text string)) (*modelReply, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rep := &modelReply{}
	blocks := map[int]*streamBlock{}
	var order []int
	var data bytes.Buffer
	for {
		line, err := readLine(br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, errors.New("the model's stream ended before message_stop")
			}
			return nil, err
		}
		switch {
		case len(line) == 0:
			if data.Len() == 0 {
				continue
			}
			var ev streamEvent
			if err := json.Unmarshal(data.Bytes(), &ev); err != nil {
				return nil, fmt.Errorf("the model sent an event that is not JSON: %w", err)
			}
			data.Reset()
			switch ev.Type {
			case "message_start":
				u := ev.Message.Usage
				rep.in, rep.out = u.Input+u.CacheCreate+u.CacheRead, u.Output
			case "content_block_start":
				if _, dup := blocks[ev.Index]; dup || len(blocks) >= maxBlocks {
					return nil, fmt.Errorf("the model sent a bad content block index %d", ev.Index)
				}
				b := &streamBlock{kind: ev.ContentBlock.Type, id: ev.ContentBlock.ID, name: ev.ContentBlock.Name}
				b.text.WriteString(ev.ContentBlock.Text + ev.ContentBlock.Thinking)
				blocks[ev.Index] = b
				order = append(order, ev.Index)
			case "content_block_delta":
				b := blocks[ev.Index]
				if b == nil {
					return nil, fmt.Errorf("the model sent a delta for block %d before its start", ev.Index)
				}
				switch ev.Delta.Type {
				case "text_delta":
					b.text.WriteString(ev.Delta.Text)
					onDelta(false, ev.Delta.Text)
				case "thinking_delta":
					b.text.WriteString(ev.Delta.Thinking)
					onDelta(true, ev.Delta.Thinking)
				case "signature_delta":
					b.sig.WriteString(ev.Delta.Signature)
				case "input_json_delta":
					b.input.WriteString(ev.Delta.PartialJSON)
				}
			case "message_delta":
				if ev.Delta.StopReason != "" {
					rep.stop = ev.Delta.StopReason
				}
				if ev.Usage != nil {
					rep.out = ev.Usage.Output
				}
			case "message_stop":
				return rep, rep.finish(blocks, order)
			case "error":
				return nil, fmt.Errorf("API Error: %s: %s", ev.Error.Type, ev.Error.Message)
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		}
	}
}

// finish turns the streamed blocks into the assistant message and its tool calls.
func (rep *modelReply) finish(blocks map[int]*streamBlock, order []int) error {
	for _, i := range order {
		b := blocks[i]
		switch b.kind {
		case "text":
			rep.content = append(rep.content, map[string]any{"type": "text", "text": b.text.String()})
		case "thinking":
			rep.content = append(rep.content, map[string]any{"type": "thinking", "thinking": b.text.String(), "signature": b.sig.String()})
		case "tool_use":
			input := json.RawMessage(bytes.TrimSpace(b.input.Bytes()))
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			if !json.Valid(input) {
				return fmt.Errorf("the model's input for tool %s is not JSON", b.name)
			}
			rep.uses = append(rep.uses, toolUse{id: b.id, name: b.name, input: input})
			rep.content = append(rep.content, map[string]any{"type": "tool_use", "id": b.id, "name": b.name, "input": input})
		}
	}
	return nil
}

// readLine reads one line without its line ending, at most maxStreamLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxStreamLine {
			return nil, fmt.Errorf("the model sent a line longer than %d bytes", maxStreamLine)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
}
