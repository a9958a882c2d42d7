package acptest

// The model persona's prompt turn, modelled on claude-agent-acp: the prompt goes to the
// model with the persona's tools; its text streams back as agent_message_chunk (thinking as
// agent_thought_chunk); a tool call is announced (tool_call), asked for when it writes
// (session/request_permission), run, reported (tool_call_update) and its result sent back
// to the model, until the model ends its turn; then a usage_update and the stopReason.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Bounds of a turn.
const (
	maxRounds    = 16      // model requests in one turn (then stopReason max_turn_requests)
	maxFileBytes = 1 << 20 // what Write writes and Read reads
	maxTitle     = 80
)

// LateText is the text of the agent_message_chunk the UpdatesAfterAnswer fault sends after
// the session/prompt answer.
const LateText = "acptest: this update comes after the turn ended"

// turn is one running prompt turn.
type turn struct {
	h      *modelHost
	s      *modelSession
	ctx    context.Context
	cancel context.CancelFunc
	id     json.RawMessage // the session/prompt request's id
	cwd    string
	model  string
	effort string
	mode   string             // the session's mode: auto writes without asking
	tools  map[string]mcpTool // the MCP tools offered in the last request, by model-side name
	// deferred are the MCP tools the DeferMCPTools fault held back from the last request,
	// by model-side name, and found those a ToolSearch call found in this turn (offered from
	// then on).
	deferred map[string]mcpTool
	found    map[string]bool
}

// startTurn checks a session/prompt and starts its turn, which answers on its own; a
// returned error is the answer instead.
func (h *modelHost) startTurn(msg *jsonrpc.Message) *jsonrpc.Error {
	params := acp.ParseObject(msg.Params)
	if err := validatePrompt(params["prompt"], h.a.p.PromptErrors, h.a.paramsErrorCode()); err != nil {
		return err
	}
	var blocks []acp.Object
	for _, b := range params.Array("prompt") {
		blocks = append(blocks, acp.ParseObject(b))
		if blocks[len(blocks)-1].String("type") == "audio" {
			return invalidParams("audio content is not supported (promptCapabilities.audio is false): the model takes no audio")
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessions[params.String("sessionId")]
	if s == nil {
		return errUnknownSession
	}
	if s.cancelTurn != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: a prompt turn is already running on this session"}
	}
	t := &turn{h: h, s: s, id: msg.ID, cwd: s.cwd, model: s.config["model"], effort: s.config["thought_level"], mode: s.config["mode"]}
	if h.a.cfg.IgnoreModel {
		t.model = defaultModel
	}
	if h.a.cfg.IgnoreThoughtLevel {
		t.effort = defaultEffort
	}
	t.ctx, t.cancel = context.WithCancel(h.ctx)
	s.cancelTurn = t.cancel
	h.turns.Add(1)
	go t.run(blocks)
	return nil
}

// run plays the turn and answers the prompt. Nothing is sent for the turn after the answer
// (unless the UpdatesAfterAnswer fault says so).
func (t *turn) run(blocks []acp.Object) {
	defer t.h.turns.Done()
	stop, err := t.play(blocks)
	t.h.mu.Lock()
	t.s.cancelTurn = nil
	t.s.updated = time.Now().UTC()
	t.h.mu.Unlock()
	t.cancel()
	t.h.persist(t.s)
	a := t.h.a
	if err != nil {
		_ = a.writeError(t.id, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error()})
	} else {
		out, _ := json.Marshal(map[string]string{"stopReason": stop})
		_ = a.writeResult(t.id, out)
	}
	if a.cfg.UpdatesAfterAnswer {
		_ = a.notify(acp.MethodSessionUpdate, map[string]any{"sessionId": t.s.id,
			"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": LateText}}})
	}
}

// play runs the model rounds and returns the stop reason, or an error (the model could
// not be reached or answered an error).
func (t *turn) play(blocks []acp.Object) (string, error) {
	h := t.h
	user, _ := json.Marshal(map[string]any{"role": "user", "content": userContent(blocks, h.a.cfg.DropBlocks)})
	h.mu.Lock()
	for _, b := range blocks {
		u, _ := json.Marshal(map[string]any{"sessionUpdate": "user_message_chunk", "content": b})
		t.s.history = append(t.s.history, u)
		if t.s.title == "" && b.String("type") == "text" {
			t.s.title = title(b.String("text"))
		}
	}
	t.s.messages = append(t.s.messages, user)
	h.mu.Unlock()
	h.persist(t.s)

	var used int
	for range maxRounds {
		body, err := t.request()
		if err != nil {
			return "", err
		}
		reply, err := h.callModel(t.ctx, body, t.delta)
		if t.ctx.Err() != nil {
			return "cancelled", nil
		}
		if err != nil {
			return "", err
		}
		used = reply.in + reply.out
		t.answered(reply)
		if reply.stop != "tool_use" || len(reply.uses) == 0 {
			t.send(map[string]any{"sessionUpdate": "usage_update", "used": used, "size": contextSize}, false)
			return stopReason(reply.stop), nil
		}
		var results []any
		for _, u := range reply.uses {
			results = append(results, t.call(u))
		}
		msg, _ := json.Marshal(map[string]any{"role": "user", "content": results})
		h.mu.Lock()
		t.s.messages = append(t.s.messages, msg)
		h.mu.Unlock()
		if t.ctx.Err() != nil {
			return "cancelled", nil
		}
	}
	t.send(map[string]any{"sessionUpdate": "usage_update", "used": used, "size": contextSize}, false)
	return "max_turn_requests", nil
}

func stopReason(s string) string {
	switch s {
	case "max_tokens", "refusal":
		return s
	}
	return "end_turn"
}

func title(text string) string {
	text = strings.Join(strings.Fields(text), " ")
	if r := []rune(text); len(r) > maxTitle {
		return string(r[:maxTitle])
	}
	return text
}

// request builds the next model request: the conversation, the tools (Write, Read and the
// MCP servers' tools), the selected model and thought level.
func (t *turn) request() ([]byte, error) {
	h := t.h
	h.mu.Lock()
	messages, servers := t.s.messages, t.s.servers
	h.mu.Unlock()
	tools := []any{
		map[string]any{"name": "Write", "description": "Write a file in the session's working directory (asks the user first).",
			"input_schema": map[string]any{"type": "object", "required": []string{"file_path", "content"}, "properties": map[string]any{
				"file_path": map[string]string{"type": "string", "description": "The file's path, relative to the working directory or absolute inside it"},
				"content":   map[string]string{"type": "string", "description": "The whole content to write"}}}},
		map[string]any{"name": "Read", "description": "Read a file in the session's working directory.",
			"input_schema": map[string]any{"type": "object", "required": []string{"file_path"}, "properties": map[string]any{
				"file_path": map[string]string{"type": "string", "description": "The file's path, relative to the working directory or absolute inside it"}}}},
	}
	t.tools, t.deferred = map[string]mcpTool{}, map[string]mcpTool{}
	if !h.a.cfg.HideMCPTools {
		for _, srv := range servers {
			for _, tl := range srv.tools {
				name := mcpToolName(srv.name, tl.Name)
				if h.a.cfg.DeferMCPTools && !t.found[name] {
					t.deferred[name] = mcpTool{server: srv, tool: tl}
					continue
				}
				schema := tl.InputSchema
				if schema == nil {
					schema = map[string]any{"type": "object"}
				}
				tools = append(tools, map[string]any{"name": name, "description": tl.Description, "input_schema": schema})
				t.tools[name] = mcpTool{server: srv, tool: tl}
			}
		}
	}
	system := systemPrompt
	if len(t.deferred) > 0 {
		tools = append(tools, toolSearchTool)
		system += deferredNotice(t.deferred)
	}
	return json.Marshal(map[string]any{
		"model": t.model, "max_tokens": maxTokens, "stream": true, "system": system,
		"messages": messages, "tools": tools,
		"thinking": map[string]string{"type": "adaptive"}, "output_config": map[string]string{"effort": t.effort},
	})
}

// delta streams one text or thinking delta to the client (the TextAsThought fault sends the
// text as thought too).
func (t *turn) delta(thought bool, text string) {
	kind := "agent_message_chunk"
	if thought || t.h.a.cfg.TextAsThought {
		kind = "agent_thought_chunk"
	}
	t.send(map[string]any{"sessionUpdate": kind, "content": map[string]string{"type": "text", "text": text}}, false)
}

// answered keeps a model answer: in the conversation, and in the history as whole chunks
// (the same kinds the deltas went out as).
func (t *turn) answered(reply *modelReply) {
	msg, _ := json.Marshal(map[string]any{"role": "assistant", "content": reply.content})
	t.h.mu.Lock()
	defer t.h.mu.Unlock()
	t.s.messages = append(t.s.messages, msg)
	for _, c := range reply.content {
		block := c.(map[string]any)
		var kind, text string
		switch block["type"] {
		case "text":
			kind, text = "agent_message_chunk", block["text"].(string)
			if t.h.a.cfg.TextAsThought {
				kind = "agent_thought_chunk"
			}
		case "thinking":
			kind, text = "agent_thought_chunk", block["thinking"].(string)
		default:
			continue
		}
		u, _ := json.Marshal(map[string]any{"sessionUpdate": kind, "content": map[string]string{"type": "text", "text": text}})
		t.s.history = append(t.s.history, u)
	}
}

// send sends a session/update for the turn; keep adds it to the history too.
func (t *turn) send(update map[string]any, keep bool) {
	if keep {
		u, _ := json.Marshal(update)
		t.h.mu.Lock()
		t.s.history = append(t.s.history, u)
		t.h.mu.Unlock()
	}
	_ = t.h.a.notify(acp.MethodSessionUpdate, map[string]any{"sessionId": t.s.id, "update": update})
}

// call runs one tool call and returns its tool_result block for the model.
func (t *turn) call(u toolUse) any {
	switch {
	case u.name == "Write":
		return t.write(u)
	case u.name == "Read":
		return t.read(u)
	case u.name == toolSearchName && len(t.deferred) > 0:
		return t.search(u)
	}
	if tool, ok := t.tools[u.name]; ok {
		return t.mcp(u, tool)
	}
	return toolResult(u.id, "no such tool: "+u.name, true)
}

func toolResult(id, text string, isError bool) any {
	return map[string]any{"type": "tool_result", "tool_use_id": id, "content": text, "is_error": isError}
}

// fileInput is the input of Write and Read.
type fileInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

// announce sends the tool_call: pending, with the file's location when it has one.
func (t *turn) announce(u toolUse, title, kind, path string) map[string]any {
	call := map[string]any{"sessionUpdate": "tool_call", "toolCallId": u.id, "title": title, "kind": kind, "status": "pending", "rawInput": u.input}
	if path != "" {
		call["locations"] = []map[string]string{{"path": path}}
	}
	t.send(call, true)
	return call
}

// fail ends a tool call as failed, with reason as its content and as the model's result.
func (t *turn) fail(u toolUse, reason string) any {
	t.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": u.id, "status": "failed",
		"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": reason}}}}, true)
	return toolResult(u.id, reason, true)
}

// write is the Write tool: permission first (allow_once / reject_once), then the file,
// which must stay inside the session's cwd.
func (t *turn) write(u toolUse) any {
	var in fileInput
	_ = json.Unmarshal(u.input, &in)
	target, perr := insideDir(t.cwd, in.FilePath)
	call := t.announce(u, "Write "+in.FilePath, "edit", target)
	if perr != nil {
		return t.fail(u, fmt.Sprintf("cannot write %s: %v", in.FilePath, perr))
	}
	if len(in.Content) > maxFileBytes {
		return t.fail(u, fmt.Sprintf("cannot write %s: more than %d bytes", in.FilePath, maxFileBytes))
	}
	cfg := t.h.a.cfg
	decision := "allow"
	if !cfg.WriteWithoutPermission && t.mode != "auto" {
		decision = t.ask(call)
	}
	if decision != "allow" && !cfg.WriteAfterReject {
		return t.fail(u, "The user did not allow writing "+in.FilePath+" ("+decision+")")
	}
	var old any // null: a new file
	if b, err := os.ReadFile(target); err == nil && len(b) <= maxFileBytes {
		old = string(b)
	}
	err := os.MkdirAll(filepath.Dir(target), 0o755)
	if err == nil {
		err = os.WriteFile(target, []byte(in.Content), 0o644)
	}
	switch {
	case err != nil:
		return t.fail(u, fmt.Sprintf("cannot write %s: %v", in.FilePath, err))
	case decision != "allow": // WriteAfterReject: written, and reported as refused
		return t.fail(u, "The user did not allow writing "+in.FilePath+" ("+decision+")")
	}
	t.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": u.id, "status": "completed",
		"content": []any{map[string]any{"type": "diff", "path": target, "oldText": old, "newText": in.Content}}}, true)
	return toolResult(u.id, fmt.Sprintf("Wrote %d bytes to %s", len(in.Content), in.FilePath), false)
}

// ask sends session/request_permission for a tool call and waits for the client's choice or
// the end of the turn: "allow", "reject", "cancelled" (the client's outcome, or the turn
// was cancelled) or "refused" (an error answer).
func (t *turn) ask(call map[string]any) string {
	toolCall := map[string]any{}
	for k, v := range call {
		if k != "sessionUpdate" {
			toolCall[k] = v
		}
	}
	key, ch, err := t.h.a.request(acp.MethodRequestPermission, map[string]any{"sessionId": t.s.id, "toolCall": toolCall,
		"options": []map[string]string{{"optionId": "allow", "name": "Allow", "kind": "allow_once"}, {"optionId": "reject", "name": "Reject", "kind": "reject_once"}}})
	if err != nil {
		return "cancelled"
	}
	select {
	case m := <-ch:
		if m.Err() != nil {
			return "refused"
		}
		outcome := acp.ParseObject(m.Result).Object("outcome")
		if outcome.String("outcome") == "selected" {
			switch id := outcome.String("optionId"); id {
			case "allow", "reject":
				return id
			}
			return "refused"
		}
		return "cancelled"
	case <-t.ctx.Done():
		t.h.a.forget(key)
		return "cancelled"
	}
}

// read is the Read tool: no permission, a file inside the session's cwd.
func (t *turn) read(u toolUse) any {
	var in fileInput
	_ = json.Unmarshal(u.input, &in)
	target, err := insideDir(t.cwd, in.FilePath)
	t.announce(u, "Read "+in.FilePath, "read", target)
	if err != nil {
		return t.fail(u, fmt.Sprintf("cannot read %s: %v", in.FilePath, err))
	}
	f, err := os.Open(target)
	if err != nil {
		return t.fail(u, fmt.Sprintf("cannot read %s: %v", in.FilePath, err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileBytes))
	if err != nil {
		return t.fail(u, fmt.Sprintf("cannot read %s: %v", in.FilePath, err))
	}
	text := string(b)
	t.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": u.id, "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": text}}}}, true)
	return toolResult(u.id, text, false)
}

// mcp calls an MCP server's tool.
func (t *turn) mcp(u toolUse, tool mcpTool) any {
	t.announce(u, tool.server.name+": "+tool.tool.Name, "other", "")
	text, isError, err := tool.server.call(t.ctx, tool.tool.Name, u.input)
	if err != nil {
		return t.fail(u, fmt.Sprintf("MCP tool %s failed: %v", u.name, err))
	}
	if isError {
		return t.fail(u, text)
	}
	t.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": u.id, "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": text}}}}, true)
	return toolResult(u.id, text, false)
}
