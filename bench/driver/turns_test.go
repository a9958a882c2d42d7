package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestSplitTranscript: starts run from each connection's spawn to its initialize answered,
// turns from session/prompt to its answer on the same connection (ids restart on a fresh
// process), calls while any other request waits (overlapping ones once), teardowns from the
// ladder's start to the exit, a listen from a turn's or load's answer to the client's next
// message or step, at most afterWindow; the agent's own requests and notifications count
// for nothing, and what is never answered is counted apart.
func TestSplitTranscript(t *testing.T) {
	frame := func(tms float64, dir, msg string) string {
		raw, _ := json.Marshal(msg) // a frame's line holds the message as a JSON string
		return fmt.Sprintf(`{"seq":1,"t":%g,"dir":%q,"raw":%s}`, tms, dir, raw)
	}
	spawn := func(tms float64) string {
		return fmt.Sprintf(`{"seq":1,"t":%g,"dir":"event","kind":"spawn","data":{}}`, tms)
	}
	lines := []string{
		`{"acpprobeTranscript":1,"tool":"turn"}`,
		spawn(10),
		frame(12, "client", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		frame(110, "agent", `{"jsonrpc":"2.0","id":1,"result":{}}`),
		frame(150, "client", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`),
		frame(160, "client", `{"jsonrpc":"2.0","id":7,"method":"session/list","params":{}}`),
		frame(170, "agent", `{"jsonrpc":"2.0","id":7,"result":{}}`),
		frame(190.25, "agent", `{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}`),
		frame(200, "client", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}`),
		frame(300, "agent", `{"jsonrpc":"2.0","method":"session/update","params":{}}`),
		frame(350, "agent", `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{}}`),
		frame(360, "client", `{"jsonrpc":"2.0","id":0,"result":{}}`),
		frame(700, "agent", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
		frame(710, "client", `{"jsonrpc":"2.0","id":4,"method":"session/load","params":{}}`),
		frame(720, "agent", `{"jsonrpc":"2.0","id":4,"result":{}}`),
		`{"seq":1,"t":800,"dir":"event","kind":"teardown","data":{"step":"session/close"}}`,
		`{"seq":1,"t":810,"dir":"event","kind":"teardown","data":{"step":"ladder","stdinWaitMs":0}}`,
		`{"seq":1,"t":900,"dir":"event","kind":"exit","data":{"signal":"SIGTERM"}}`,
		`{"seq":1,"t":950,"dir":"event","kind":"done"}`,
		spawn(1000),
		frame(1001, "client", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
		frame(1050.5, "agent", `{"jsonrpc":"2.0","id":1,"result":{}}`),
		frame(1100, "client", `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}`),
		frame(1200, "agent", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`),
		frame(1900, "client", `{"jsonrpc":"2.0","id":4,"method":"session/prompt","params":{}}`),
		spawn(2000),
		frame(2001, "client", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`),
	}
	got, err := splitTranscript(strings.NewReader(strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := turnSplit{StartsMs: 100 + 50.5, TurnsMs: 500 + 100, Processes: 3, Prompts: 2, CallsMs: 50.25, TeardownsMs: 90, ListensMs: 10 + 80 + 500, Unanswered: 2}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if _, err := splitTranscript(strings.NewReader("{}\nnot json\n")); err == nil {
		t.Fatal("a broken frame line: no error")
	}
}
