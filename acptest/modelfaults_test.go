package acptest_test

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
)

// Each fault of a turn scenario makes that scenario fail, in the way the scenario sees it.

func TestFaultWriteWithoutPermission(t *testing.T) {
	m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{WriteWithoutPermission: true})), "reject")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("write"))
	c.noPermission()
	if !fileExists(t, filepath.Join(m.cwd, "out.txt")) {
		t.Error("the file was not written")
	}
}

func TestFaultWriteAfterReject(t *testing.T) {
	m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{WriteAfterReject: true})), "reject")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("write"))
	c.permission()
	if !fileExists(t, filepath.Join(m.cwd, "out.txt")) {
		t.Error("the file was not written")
	}
	// It says it did not write: only the file tells.
	us := c.updates(sid, 0)
	if len(us) < 2 || us[1].kind != "tool_call_update" || us[1].obj.String("status") != "failed" {
		t.Errorf("updates %v", kinds(us))
	}
}

func TestFaultIgnoreModel(t *testing.T) {
	m := newModel(t, emulator.Text("ok"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{IgnoreModel: true, IgnoreThoughtLevel: true})), "allow")
	sid := c.newSession(m.cwd)
	c.result(acp.MethodSetConfigOption, map[string]string{"sessionId": sid, "configId": "model", "value": "acptest-large"})
	c.result(acp.MethodSetConfigOption, map[string]string{"sessionId": sid, "configId": "thought_level", "value": "low"})
	c.stopReason(sid, text("hi"))
	if r := m.request(t); r.Model != "acptest-small" || r.Reasoning != "thinking=adaptive effort=medium" {
		t.Errorf("model %q reasoning %q", r.Model, r.Reasoning)
	}
}

func TestFaultIgnoreCancel(t *testing.T) {
	m := newModel(t, emulator.Slow(5*time.Millisecond, "a", "b", "c", "d", "e", "f"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{IgnoreCancel: true})), "allow")
	sid := c.newSession(m.cwd)
	pending, err := c.conn.Request(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": []any{text("go")}})
	if err != nil {
		t.Fatal(err)
	}
	c.waitUpdate(sid, 0, func(u update) bool { return u.kind == "agent_message_chunk" })
	if err := c.conn.Notify(acp.MethodSessionCancel, map[string]string{"sessionId": sid}); err != nil {
		t.Fatal(err)
	}
	if got := wantResult(t, pending).String("stopReason"); got != "end_turn" {
		t.Errorf("stopReason %q", got)
	}
	if r := m.response(t); !r.Complete || r.Chunks != 6 {
		t.Errorf("the stream was cut: %+v", r)
	}
}

func TestFaultUpdatesAfterAnswer(t *testing.T) {
	m := newModel(t, emulator.Text("ok"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{UpdatesAfterAnswer: true})), "allow")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("hi"))
	late := c.waitUpdate(sid, c.answerSeq(acp.MethodSessionPrompt), func(u update) bool { return true })
	if late.kind != "agent_message_chunk" || late.text() != acptest.LateText {
		t.Errorf("late update %v", late.obj)
	}
}

func TestFaultTextAsThought(t *testing.T) {
	m := newModel(t, emulator.Text("the answer"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{TextAsThought: true})), "allow")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("hi"))
	us := c.updates(sid, 0)
	if !slices.Equal(kinds(us), []string{"agent_thought_chunk", "usage_update"}) || us[0].text() != "the answer" {
		t.Errorf("updates %v", kinds(us))
	}
}

func TestFaultDropBlocks(t *testing.T) {
	m := newModel(t, emulator.Text("ok"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{DropBlocks: true})), "allow")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("look"), map[string]string{"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="})
	if r := m.request(t); !slices.Equal(r.LastUserKinds, []string{"text"}) {
		t.Errorf("kinds %v", r.LastUserKinds)
	}
}

// The persona never reaches a model off loopback, writes nowhere outside its cwd, and
// reads no session file outside its store.
func TestModelBounds(t *testing.T) {
	t.Run("remote model", func(t *testing.T) {
		m := newModel(t, emulator.Text("ok"))
		cfg := m.config(acptest.ModelFaults{})
		cfg.Env = append(cfg.Env, "ANTHROPIC_BASE_URL=https://api.anthropic.com")
		c := connect(t, acptest.Launcher(cfg), "allow")
		sid := c.newSession(m.cwd)
		if e := c.prompt(sid, text("hi")).Err(); e == nil || e.Code != -32603 {
			t.Errorf("answer %v", e)
		}
	})
	t.Run("write outside cwd", func(t *testing.T) {
		m := newModel(t, emulator.WriteFile("../escaped.txt", "x", "done"))
		c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
		sid := c.newSession(m.cwd)
		c.stopReason(sid, text("write"))
		c.noPermission()
		if fileExists(t, filepath.Join(filepath.Dir(m.cwd), "escaped.txt")) {
			t.Error("written outside the cwd")
		}
		us := c.updates(sid, 0)
		if len(us) < 2 || us[1].obj.String("status") != "failed" {
			t.Errorf("updates %v", kinds(us))
		}
	})
	t.Run("session id as a path", func(t *testing.T) {
		m := newModel(t, emulator.Text("ok"))
		c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
		e := c.call(acp.MethodSessionLoad, map[string]any{"sessionId": "../../etc/passwd", "cwd": m.cwd, "mcpServers": []any{}}).Err()
		if e == nil || e.Code != -32002 {
			t.Errorf("answer %v", e)
		}
	})
}

// Mode auto writes without asking, mode ask asks; AutoByDefault starts sessions in auto, and
// mode ask then still asks.
func TestModeAutoWritesWithoutAsking(t *testing.T) {
	m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{AutoByDefault: true})), "reject")
	sid := c.newSession(m.cwd)
	c.stopReason(sid, text("write"))
	c.noPermission()
	if !fileExists(t, filepath.Join(m.cwd, "out.txt")) {
		t.Fatal("in mode auto the file was not written")
	}

	m = newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	c = connect(t, acptest.Launcher(m.config(acptest.ModelFaults{AutoByDefault: true})), "reject")
	sid = c.newSession(m.cwd)
	res := c.result(acp.MethodSetConfigOption, map[string]string{"sessionId": sid, "configId": "mode", "value": "ask"})
	if opt := acp.ModeOption(acp.ParseSessionResult(mustJSON(res)).ConfigOptions); opt == nil || opt.Current() != "ask" {
		t.Fatalf("set_config_option mode=ask answered %v", res)
	}
	c.stopReason(sid, text("write"))
	c.permission()
	if fileExists(t, filepath.Join(m.cwd, "out.txt")) {
		t.Error("in mode ask the refused file was written")
	}
}
