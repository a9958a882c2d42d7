package acptest_test

import (
	"slices"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
)

// toolTurn runs a turn with a Write call (allowed) on a first agent in m's HOME, stops that
// agent, and returns the session id and the live updates.
func toolTurn(t *testing.T, m *model, faults acptest.ModelFaults) (string, []update) {
	t.Helper()
	c := connect(t, acptest.Launcher(m.config(faults)), "allow")
	sid := c.newSession(m.cwd)
	if got := c.stopReason(sid, text("write the file")); got != "end_turn" {
		t.Fatalf("stopReason %q", got)
	}
	live := c.updates(sid, 0)
	c.stop()
	return sid, live
}

// brief is what the load check compares of an update.
func brief(u update) []string {
	o := u.obj
	return []string{u.kind, u.text(), o.String("toolCallId"), o.String("kind"), o.String("status")}
}

// A session of one agent process loads in a fresh one with the same HOME: the replay has
// the user message, the tool call with its id, kind and status, and the agent's text, as
// they went live; then the load answers, and the session goes on with its conversation.
func TestModelLoadInAnotherAgent(t *testing.T) {
	m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	sid, live := toolTurn(t, m, acptest.ModelFaults{})

	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	list := c.result(acp.MethodSessionList, map[string]any{})
	var found bool
	for _, s := range list.Array("sessions") {
		info := acp.ParseObject(s)
		if info.String("sessionId") == sid {
			found = info.String("cwd") == m.cwd && info.String("title") == "write the file" && info.String("updatedAt") != ""
		}
	}
	if !found {
		t.Fatalf("session/list %v has no %s in %s", list, sid, m.cwd)
	}
	if other := c.result(acp.MethodSessionList, map[string]any{"cwd": "/elsewhere"}); len(other.Array("sessions")) != 0 {
		t.Errorf("list in another cwd: %v", other)
	}
	res := c.result(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": m.cwd, "mcpServers": []any{}})
	if len(res.Array("configOptions")) != 3 { // mode, model, thought_level
		t.Errorf("load answered %v", res)
	}
	replay := c.updates(sid, 0)
	if answer := c.answerSeq(acp.MethodSessionLoad); len(replay) == 0 || replay[len(replay)-1].seq > answer {
		t.Fatal("the replay does not come before the load's answer")
	}
	if got, want := kinds(replay), []string{"user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"}; !slices.Equal(got, want) {
		t.Fatalf("replay %v, want %v", got, want)
	}
	if replay[0].text() != "write the file" {
		t.Errorf("user message %v", replay[0].obj)
	}
	// The live turn, without what is not history (the usage).
	var want [][]string
	for _, u := range live {
		if u.kind != "usage_update" {
			want = append(want, brief(u))
		}
	}
	for i, u := range replay[1:] {
		if !slices.Equal(brief(u), want[i]) {
			t.Errorf("replayed %v, live %v", brief(u), want[i])
		}
	}

	m.srv.SetScript(emulator.Text("and then"))
	before := len(c.updates(sid, 0))
	if got := c.stopReason(sid, text("go on")); got != "end_turn" {
		t.Fatalf("prompt after load: %q", got)
	}
	m.request(t)
	m.request(t) // the first agent's two
	r := m.request(t)
	if len(r.ToolResults) != 1 || r.ToolResults[0].Latest || r.LastUserText != "go on" {
		t.Errorf("the loaded conversation did not reach the model: %+v", r)
	}
	if after := c.updates(sid, 0)[before:]; !slices.Equal(kinds(after), []string{"agent_message_chunk", "usage_update"}) {
		t.Errorf("updates %v", kinds(after))
	}
}

func TestFaultLoadWithoutToolCalls(t *testing.T) {
	m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
	sid, _ := toolTurn(t, m, acptest.ModelFaults{})
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{LoadWithoutToolCalls: true})), "allow")
	c.result(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": m.cwd, "mcpServers": []any{}})
	if got := kinds(c.updates(sid, 0)); !slices.Equal(got, []string{"user_message_chunk", "agent_message_chunk"}) {
		t.Errorf("replay %v", got)
	}
}

// resume does not replay; fork has a new id and the history; close frees the session (a
// prompt on it is an error, a load brings it back), unless the CloseKeeps fault keeps it.
func TestModelResumeForkClose(t *testing.T) {
	for _, keep := range []bool{false, true} {
		name := map[bool]string{false: "passing", true: "CloseKeeps"}[keep]
		t.Run(name, func(t *testing.T) {
			m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
			sid, _ := toolTurn(t, m, acptest.ModelFaults{})
			c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{CloseKeeps: keep})), "allow")
			m.srv.SetScript(emulator.Text("ok"))

			c.result(acp.MethodSessionResume, map[string]any{"sessionId": sid, "cwd": m.cwd})
			if us := c.updates(sid, 0); len(us) != 0 {
				t.Errorf("resume replayed %v", kinds(us))
			}
			fork := c.result(acp.MethodSessionFork, map[string]any{"sessionId": sid, "cwd": m.cwd}).String("sessionId")
			if fork == "" || fork == sid {
				t.Fatalf("fork id %q", fork)
			}
			c.result(acp.MethodSessionLoad, map[string]any{"sessionId": fork, "cwd": m.cwd, "mcpServers": []any{}})
			if got := kinds(c.updates(fork, 0)); len(got) != 4 || got[1] != "tool_call" {
				t.Errorf("fork replay %v", got)
			}

			c.result(acp.MethodSessionClose, map[string]any{"sessionId": sid})
			m2 := c.prompt(sid, text("after close"))
			if keep {
				if e := m2.Err(); e != nil {
					t.Errorf("with CloseKeeps a prompt after close fails: %v", e)
				}
				return
			}
			if e := m2.Err(); e == nil || e.Code != -32002 {
				t.Errorf("prompt after close: %v", e)
			}
			if e := c.call(acp.MethodSessionClose, map[string]any{"sessionId": sid}).Err(); e == nil {
				t.Error("closing twice succeeds")
			}
			c.result(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": m.cwd, "mcpServers": []any{}})
			if got := c.stopReason(sid, text("after load")); got != "end_turn" {
				t.Errorf("prompt after a new load: %q", got)
			}
		})
	}
}
