package acpprobe_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// tapLog records a tap session written as lines: "> " the editor, "< " the agent, "2 " stderr,
// "! kind payload" an event.
func tapLog(lines []string) []jsonrpc.Frame {
	log := jsonrpc.NewLog()
	for _, line := range lines {
		tag, rest, _ := strings.Cut(line, " ")
		switch tag {
		case ">":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: []byte(rest)})
		case "<":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(rest)})
		case "2":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirStderr, Raw: []byte(rest)})
		case "!":
			kind, payload, _ := strings.Cut(rest, " ")
			log.Event(kind, []byte(payload))
		}
	}
	return log.Frames()
}

// hostileTap is a tap session with a departure of most kinds the tap's checks find, spread so
// that windows cut between a request and its answer, a first answer and a second one, and
// across a run of stderr that only in total is a lot.
func hostileTap() []string {
	lines := []string{
		`! spawn {"argv":["agent"],"tap":true}`,
		`! started {"pid":42}`,
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[{"id":"t","name":"T","type":"terminal"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`< this is not JSON`,
		`< {"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"ACP Session request is missing sessionAdmissionV2 metadata"}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"sessionId":"s"}}`,
		`< {"jsonrpc":"2.0","id":"p1","method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t1"},"options":[]}}`,
		`< {"jsonrpc":"1.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
		`> {"jsonrpc":"2.0","method":"editor/focus","params":{}}`,
		`< {"jsonrpc":"2.0","id":99,"result":{}}`,
		`< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"},"_meta":{"codebuddy.ai/notInTheCatalogue":1}}}}`,
	}
	for i := range 40 { // 40 x 2 KiB of stderr: a lot only in total
		lines = append(lines, fmt.Sprintf("2 line %d %s\n", i, strings.Repeat("x", 2048)))
		lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d"}}}}`, i))
	}
	return append(lines,
		`> {"jsonrpc":"2.0","id":"p1","result":{"outcome":{"outcome":"cancelled"}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"sessionId":"s"}}`,
		`< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"content":{"type":"text","text":"no kind"}}}}`,
		`! editor-eof`,
		`! teardown {"step":"ladder","stdinWaitMs":1000}`,
		`! eof`,
		`! exit {"code":null,"signal":"SIGKILL","by":"sigkill"}`,
		`! done`,
	)
}

// where is a finding's place: check, line, pointer.
func where(f report.Finding) string { return fmt.Sprintf("%s@%d%s", f.ID, f.Seq, f.Pointer) }

// TestLiveJudgesAsAnalyze (issue 11, F8): judged live, window by window — each frame once, the
// context carried over — a tap session gives the findings the whole record gives, wherever
// the windows cut it: a request and its answer, a first answer and a second, a run of stderr.
func TestLiveJudgesAsAnalyze(t *testing.T) {
	frames := tapLog(hostileTap())
	whole, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range whole.Findings {
		want = append(want, where(f))
	}
	slices.Sort(want)
	for _, id := range []string{"framing.stdout-non-json", "extensions.zero-meta-contract", "envelope.duplicate-response",
		"envelope.unknown-id", "envelope.jsonrpc-version", "protocol.stderr-volume", "protocol.agent-info",
		"protocol.terminal-auth", "protocol.stdin-exit", "client.unknown-method", "extensions.unknown-key", "schema.invalid"} {
		if !slices.ContainsFunc(whole.Findings, func(f report.Finding) bool { return f.ID == id }) {
			t.Errorf("the whole record has no %s: the test session does not show what it should (%v)", id, want)
		}
	}
	for _, every := range []int{1, 2, 3, 7, 16, len(frames)} {
		live := acpprobe.NewLive(acpprobe.AnalyzeOptions{})
		var got []string
		for i, f := range frames {
			live.Add(f)
			if (i+1)%every == 0 || i == len(frames)-1 {
				found, err := live.Judge(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range found {
					got = append(got, where(f))
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("judged every %d frames:\n got %v\nwant %v", every, got, want)
		}
		if o := live.Omitted(); len(o) != 0 {
			t.Errorf("judged every %d frames: omitted %v", every, o)
		}
	}
}

// TestLiveLinear (issue 11, F8): judging a session live costs about what judging its record
// once does, however many windows it comes in (before: the whole session again every 250 ms,
// 59.6 s of CPU for a 31 s session of 100k frames), and a flood of repeated departures prints
// each once, the rest counted.
func TestLiveLinear(t *testing.T) {
	n := 5_000
	if raceDetector {
		n = 1_000
	}
	lines := hostileTap()
	tail := slices.Clone(lines[len(lines)-8:]) // the end of the session
	lines = lines[:len(lines)-8]
	for i := range n {
		lines = append(lines, fmt.Sprintf(`< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d"}}}}`, i))
		if i%100 == 0 {
			lines = append(lines, `< not JSON either`)
		}
	}
	frames := tapLog(append(lines, tail...))
	if _, err := acpprobe.Analyze(context.Background(), tapLog(hostileTap()), acpprobe.AnalyzeOptions{}); err != nil {
		t.Fatal(err) // and the schemas are compiled
	}

	start := time.Now()
	if _, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{}); err != nil {
		t.Fatal(err)
	}
	once := time.Since(start)

	const windows = 100
	live := acpprobe.NewLive(acpprobe.AnalyzeOptions{})
	nonJSON := 0
	start = time.Now()
	for i, f := range frames {
		live.Add(f)
		if (i+1)%(len(frames)/windows) == 0 || i == len(frames)-1 {
			found, err := live.Judge(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range found {
				if f.ID == "framing.stdout-non-json" {
					nonJSON++
				}
			}
		}
	}
	took := time.Since(start)
	t.Logf("%d frames: analysed once %v, live in %d windows %v", len(frames), once, windows, took)
	if took > 3*once {
		t.Errorf("judging live in %d windows took %v, the record judged once %v: want at most 3 times as long", windows, took, once)
	}
	// "this is not JSON" and "not JSON either" (every line of it alike): each shown once.
	if omitted := live.Omitted()["framing.stdout-non-json"]; nonJSON != 2 || omitted != n/100-1 {
		t.Errorf("non-JSON lines: %d shown, %d omitted; want 2 shown and %d omitted", nonJSON, omitted, n/100-1)
	}
}

// TestLiveClose: Close releases an Add that waits for room (the recording of a session whose
// judge has stopped), and Live keeps nothing after it.
func TestLiveClose(t *testing.T) {
	live := acpprobe.NewLive(acpprobe.AnalyzeOptions{})
	big := jsonrpc.Frame{Seq: 1, Dir: jsonrpc.DirAgent, Raw: []byte(`"` + strings.Repeat("x", 1<<20) + `"`)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 16 { // 16 MiB of frames: more than Live queues
			big.Seq = int64(i + 1)
			live.Add(big)
		}
	}()
	live.Close()
	<-done
	if found, err := live.Judge(context.Background()); err != nil || len(found) != 0 {
		t.Errorf("after Close: %v, %v", found, err)
	}
}
