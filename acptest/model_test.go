package acptest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// A one-line turn end to end: the prompt reaches the model with the persona's tools, the
// default model and effort and the profile's dummy key; the thinking and the text come back
// as a thought chunk and a message chunk, then a usage_update, then end_turn.
func TestModelTextTurn(t *testing.T) {
	m := newModel(t, func(*emulator.Call) emulator.Reply {
		return emulator.Reply{Thought: "pondering", Chunks: []string{"Hello ", "from the model."}}
	})
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd)
	if got := c.stopReason(sid, text("say hi")); got != "end_turn" {
		t.Fatalf("stopReason %q", got)
	}
	r := m.request(t)
	if r.Path != "/v1/messages" || r.Dialect != string(emulator.Anthropic) || !r.Stream || r.Model != "acptest-small" ||
		r.Credential != "dummy" || r.LastUserText != "say hi" || r.Reasoning != "thinking=adaptive effort=medium" {
		t.Errorf("model request %+v", r)
	}
	if !slices.Equal(r.Tools, []string{"Write", "Read"}) {
		t.Errorf("tools %v", r.Tools)
	}
	us := c.updates(sid, 0)
	if got, want := kinds(us), []string{"agent_thought_chunk", "agent_message_chunk", "agent_message_chunk", "usage_update"}; !slices.Equal(got, want) {
		t.Fatalf("updates %v, want %v", got, want)
	}
	if us[0].text() != "pondering" || us[1].text()+us[2].text() != "Hello from the model." {
		t.Errorf("chunks %q %q %q", us[0].text(), us[1].text(), us[2].text())
	}
	if used, _ := us[3].obj.Int("used"); used <= 0 {
		t.Errorf("usage_update %v", us[3].obj)
	}
	if last := us[len(us)-1].seq; last > c.answerSeq(acp.MethodSessionPrompt) {
		t.Error("an update came after the answer")
	}
}

// The permission scenario: the model asks Write to create a file. Allowed, the file is
// written and the call completes; rejected or cancelled, nothing is written and the call
// fails; either way the result reaches the model's next request and its text ends the turn.
func TestModelPermission(t *testing.T) {
	for _, policy := range []string{"allow", "reject", "cancelled"} {
		t.Run(policy, func(t *testing.T) {
			m := newModel(t, emulator.WriteFile("notes/out.txt", "written by the model\n", "done"))
			c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), policy)
			sid := c.newSession(m.cwd)
			if got := c.stopReason(sid, text("write the file")); got != "end_turn" {
				t.Fatalf("stopReason %q", got)
			}
			p := c.permission()
			call := p.Object("toolCall")
			var options []string
			for _, o := range p.Array("options") {
				options = append(options, acp.ParseObject(o).String("kind"))
			}
			if p.String("sessionId") != sid || call.String("kind") != "edit" || !slices.Equal(options, []string{"allow_once", "reject_once"}) {
				t.Errorf("permission request %v", p)
			}
			first, second := m.request(t), m.request(t)
			if len(first.ToolResults) != 0 || len(second.ToolResults) != 1 {
				t.Fatalf("tool results %v then %v", first.ToolResults, second.ToolResults)
			}
			res := second.ToolResults[0]
			allowed := policy == "allow"
			if !res.Latest || res.Name != "Write" || res.CallID != call.String("toolCallId") || res.IsError == allowed {
				t.Errorf("tool result %+v (call %v)", res, call)
			}
			path := filepath.Join(m.cwd, "notes", "out.txt")
			if fileExists(t, path) != allowed {
				t.Fatalf("file written: %v, want %v", !allowed, allowed)
			}
			if allowed && readFile(t, m.cwd, "notes/out.txt") != "written by the model\n" {
				t.Error("wrong content")
			}
			us := c.updates(sid, 0)
			want := []string{"tool_call", "tool_call_update", "agent_message_chunk", "usage_update"}
			if !slices.Equal(kinds(us), want) {
				t.Fatalf("updates %v, want %v", kinds(us), want)
			}
			status := map[bool]string{true: "completed", false: "failed"}[allowed]
			if us[0].obj.String("status") != "pending" || us[0].obj.String("kind") != "edit" || us[1].obj.String("status") != status ||
				us[1].obj.String("toolCallId") != call.String("toolCallId") || us[2].text() != "done" {
				t.Errorf("tool call updates %v %v %v", us[0].obj, us[1].obj, us[2].obj)
			}
		})
	}
}

// session/cancel in the middle of a slow stream: the stream is cut, the prompt answers
// cancelled, nothing more comes for that turn, and the next turn works.
func TestModelCancel(t *testing.T) {
	chunks := make([]string, 400)
	for i := range chunks {
		chunks[i] = "slow "
	}
	m := newModel(t, emulator.Slow(20*time.Millisecond, chunks...))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd)
	pending, err := c.conn.Request(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("go slowly")}})
	if err != nil {
		t.Fatal(err)
	}
	c.waitUpdate(sid, 0, func(u update) bool { return u.kind == "agent_message_chunk" })
	if err := c.conn.Notify(acp.MethodSessionCancel, map[string]string{"sessionId": sid}); err != nil {
		t.Fatal(err)
	}
	if got := wantResult(t, pending); got.String("stopReason") != "cancelled" {
		t.Fatalf("answer %v", got)
	}
	if r := m.response(t); r.Complete || r.Chunks >= len(chunks) {
		t.Errorf("the stream was not cut: %+v", r)
	}
	cancelled := c.answerSeq(acp.MethodSessionPrompt)
	m.request(t)

	m.srv.SetScript(emulator.Text("second turn"))
	if got := c.stopReason(sid, text("again")); got != "end_turn" {
		t.Fatalf("second turn: %q", got)
	}
	after := c.updates(sid, cancelled)
	if !slices.Equal(kinds(after), []string{"agent_message_chunk", "usage_update"}) || after[0].text() != "second turn" {
		t.Errorf("after the cancelled answer: %v", kinds(after))
	}
}

// A cancel while the permission request waits ends the turn cancelled, and nothing is
// written.
func TestModelCancelDuringPermission(t *testing.T) {
	m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "hold")
	sid := c.newSession(m.cwd)
	pending, err := c.conn.Request(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("write")}})
	if err != nil {
		t.Fatal(err)
	}
	c.permission()
	if err := c.conn.Notify(acp.MethodSessionCancel, map[string]string{"sessionId": sid}); err != nil {
		t.Fatal(err)
	}
	if got := wantResult(t, pending); got.String("stopReason") != "cancelled" {
		t.Fatalf("answer %v", got)
	}
	if fileExists(t, filepath.Join(m.cwd, "out.txt")) {
		t.Error("the file was written")
	}
	us := c.updates(sid, 0)
	if !slices.Equal(kinds(us), []string{"tool_call", "tool_call_update"}) || us[1].obj.String("status") != "failed" {
		t.Errorf("updates %v", kinds(us))
	}
}

func wantResult(t *testing.T, p *jsonrpc.Pending) acp.Object {
	t.Helper()
	ctx, cancel := contextWithWait()
	defer cancel()
	m, err := p.Wait(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e := m.Err(); e != nil {
		t.Fatalf("error %d %s", e.Code, e.Message)
	}
	return acp.ParseObject(m.Result)
}

// Model truth: the selected model and thought level reach the request.
func TestModelSelection(t *testing.T) {
	m := newModel(t, emulator.Text("ok"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd)
	res := c.result(acp.MethodSetConfigOption, map[string]string{"sessionId": sid, "configId": "model", "value": "acptest-large"})
	if got := acp.ParseSessionResult(mustJSON(res)).ConfigOptions; len(got) != 3 || got[0].Current() != "acptest-large" {
		t.Errorf("set_config_option answered %v", res)
	}
	c.result(acp.MethodSetConfigOption, map[string]string{"sessionId": sid, "configId": "thought_level", "value": "high"})
	if e := c.call(acp.MethodSetConfigOption, map[string]string{"sessionId": sid, "configId": "model", "value": "gpt-9"}).Err(); e == nil || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("an unknown model: %v", e)
	}
	c.stopReason(sid, text("hi"))
	if r := m.request(t); r.Model != "acptest-large" || r.Reasoning != "thinking=adaptive effort=high" {
		t.Errorf("model %q reasoning %q", r.Model, r.Reasoning)
	}
}

// Every prompt block the persona accepts reaches the model: text as text, an image as an
// image, a resource_link as a text naming it, an embedded resource as a document; audio,
// not advertised, is refused.
func TestModelPromptBlocks(t *testing.T) {
	m := newModel(t, emulator.Text("ok"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("look"),
		map[string]string{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
		map[string]string{"type": "resource_link", "name": "spec", "uri": "file:///spec.md"},
		map[string]any{"type": "resource", "resource": map[string]string{"uri": "file:///notes.txt", "text": "the notes"}})
	r := m.request(t)
	if !slices.Equal(r.LastUserKinds, []string{"text", "image", "text", "document"}) || !strings.Contains(r.LastUserText, "[spec](file:///spec.md)") {
		t.Errorf("kinds %v text %q", r.LastUserKinds, r.LastUserText)
	}
	if !strings.Contains(string(r.Body), `"data":"the notes"`) {
		t.Errorf("the resource's text is not in the request: %s", r.Body)
	}
	e := c.prompt(sid, text("hear"), map[string]string{"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="}).Err()
	if e == nil || e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("audio: %v", e)
	}
}

// Read needs no permission: the file's text is the call's content and the model's result.
func TestModelRead(t *testing.T) {
	m := newModel(t, emulator.ToolThenText(emulator.Named("Read"), func(emulator.Tool) map[string]any {
		return map[string]any{"file_path": "in.txt"}
	}, "read it", "no Read tool"))
	if err := os.WriteFile(filepath.Join(m.cwd, "in.txt"), []byte("the file's text"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "reject")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("read in.txt"))
	c.noPermission()
	m.request(t)
	if r := m.request(t); len(r.ToolResults) != 1 || r.ToolResults[0].Content != "the file's text" || r.ToolResults[0].IsError {
		t.Errorf("tool results %+v", r.ToolResults)
	}
	us := c.updates(sid, 0)
	if len(us) < 2 || us[0].obj.String("kind") != "read" || us[1].obj.String("status") != "completed" {
		t.Errorf("updates %v", kinds(us))
	}
}

// A model error ends the turn with an error answer that quotes it, and nothing else.
func TestModelAPIError(t *testing.T) {
	m := newModel(t, emulator.Fail(429, "slow down"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd)
	e := c.prompt(sid, text("hi")).Err()
	if e == nil || e.Code != jsonrpc.CodeInternalError || !strings.Contains(e.Message, "API Error: 429") || !strings.Contains(e.Message, "slow down") {
		t.Errorf("answer %v", e)
	}
	if us := c.updates(sid, 0); len(us) != 0 {
		t.Errorf("updates %v", kinds(us))
	}
}
