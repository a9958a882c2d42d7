package acpprobe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestCheckForkProbe: check forks a session that does not exist on a connection of its own,
// after the main one, only when the main connection found session/fork supported; an agent
// that answers with a new session is reported, and that connection, ended at once, leaves the
// main connection's judgement of how the agent leaves on EOF (protocol.stdin-exit) as it was.
func TestCheckForkProbe(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    acptest.Config
		fork   bool             // a fork-probe connection is expected
		answer string           // what the fork is answered: "error" or "session"
		exitBy record.ExitCause // how the main connection's agent ended
	}{
		{"refused", acptest.Config{Persona: "claude"}, true, "error", "stdin"},
		{"created", acptest.Config{Persona: "claude", Faults: acptest.Faults{ForkAnySession: true}}, true, "session", "stdin"},
		{"created, ignores EOF", acptest.Config{Persona: "claude", Faults: acptest.Faults{ForkAnySession: true, IgnoreStdinEOF: true}}, true, "session", "sigterm"},
		{"unsupported", acptest.Config{Persona: "codex", Faults: acptest.Faults{ForkAnySession: true}}, false, "", "stdin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := jsonrpc.NewLog()
			r, err := acpprobe.Run(context.Background(), acpprobe.Options{
				Probe: probe.Options{Launcher: acptest.Launcher(tc.cfg), Cwd: "/work", Log: log, Grace: 300 * time.Millisecond},
				Check: &acpprobe.Check{},
			})
			if err != nil {
				t.Fatal(err)
			}
			conns := record.Split(log.Frames())
			found := map[string][]report.Finding{}
			for _, f := range r.Findings {
				found[f.ID] = append(found[f.ID], f)
			}

			// The main connection: no fork in it, and its exit judged as it happened.
			main := record.New(conns.Main)
			for _, ex := range main.Calls(jsonrpc.DirClient) {
				if ex.Method() == "session/fork" && string(ex.Request.Msg.Params) != "{}" {
					t.Errorf("the main connection forked: %s", ex.Request.Raw)
				}
			}
			if r.Exit == nil || r.Exit.By != tc.exitBy {
				t.Fatalf("main connection exit %+v, want by %s", r.Exit, tc.exitBy)
			}
			if stdin := found["protocol.stdin-exit"]; (tc.exitBy == "stdin") != (len(stdin) == 0) {
				t.Errorf("protocol.stdin-exit %+v for an agent that left by %s", stdin, tc.exitBy)
			} else if len(stdin) > 0 && stdin[0].Seq != main.EventSeq(record.Exit.Kind) {
				t.Errorf("protocol.stdin-exit at seq %d, want the main connection's exit event %d", stdin[0].Seq, main.EventSeq(record.Exit.Kind))
			}

			frames := conns.Of(record.PurposeForkProbe)
			if !tc.fork {
				if frames != nil || len(conns.Extra) != 0 || len(found["protocol.fork-nonexistent-session"]) != 0 {
					t.Fatalf("session/fork is not supported, yet: %d extra connections, findings %v", len(conns.Extra), r.Findings)
				}
				return
			}
			if len(conns.Extra) != 1 || frames == nil {
				t.Fatalf("extra connections %+v, want one fork probe", conns.Extra)
			}
			fx := record.New(frames)
			if s := fx.Spawn(); s.Purpose != record.PurposeForkProbe || !s.InitializeOnly || s.Cwd != "/work" {
				t.Errorf("fork probe spawn %+v", s)
			}
			var methods []string
			for _, ex := range fx.Calls(jsonrpc.DirClient) {
				methods = append(methods, ex.Method())
			}
			if len(methods) != 2 || methods[0] != "initialize" || methods[1] != "session/fork" {
				t.Fatalf("fork probe sent %v, want initialize and session/fork", methods)
			}
			fork := fx.First("session/fork")
			var params struct {
				SessionID  string `json:"sessionId"`
				Cwd        string `json:"cwd"`
				McpServers []any  `json:"mcpServers"`
			}
			if err := json.Unmarshal(fork.Request.Msg.Params, &params); err != nil || params.SessionID != record.NonexistentSessionID ||
				params.Cwd != "/work" || params.McpServers == nil {
				t.Errorf("fork params %s", fork.Request.Msg.Params)
			}
			if fork.Answer == nil {
				t.Fatal("the fork got no answer")
			}
			// Ended at once: the ladder did not wait for the agent to leave on EOF.
			var waited *float64
			for _, f := range fx.Events(record.Teardown.Kind) {
				if p, ok := record.Teardown.Decode(f); ok && p.Step == record.TeardownLadder {
					waited = p.StdinWaitMs
				}
			}
			if waited == nil || *waited != 0 {
				t.Errorf("the fork probe's ladder waited (%v) for EOF, want 0 ms", fmtMs(waited))
			}

			got := found["protocol.fork-nonexistent-session"]
			switch tc.answer {
			case "error":
				if fork.Answer.Msg.Err() == nil || len(got) != 0 {
					t.Errorf("fork answered %s, findings %v", fork.Answer.Raw, got)
				}
			case "session":
				if len(got) != 1 || got[0].Seq != fork.Answer.Seq || got[0].Pointer != "/result/sessionId" {
					t.Fatalf("protocol.fork-nonexistent-session %+v, want one at the answer's seq %d (%s)", got, fork.Answer.Seq, fork.Answer.Raw)
				}
			}
		})
	}
}

func fmtMs(ms *float64) string {
	if ms == nil {
		return "not recorded"
	}
	return fmt.Sprintf("%g ms", *ms)
}
