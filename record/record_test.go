package record_test

import (
	"os"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// TestKindsAreDocumented keeps docs/transcript.md and the record's event kinds together.
func TestKindsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../docs/transcript.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range record.Kinds() {
		if !strings.Contains(string(doc), "`"+string(k)+"`") {
			t.Errorf("event kind %q is not in docs/transcript.md", k)
		}
	}
}

func TestEventRoundTrip(t *testing.T) {
	log := jsonrpc.NewLog()
	code := 3
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"agent"}, ProtocolVersion: 1})
	record.Timeout.Emit(log, record.StageInfo{Stage: record.StageSessionNew})
	record.EOF.Emit(log, record.None{})
	record.Exit.Emit(log, transport.Exit{Code: &code, By: "self"})
	frames := log.Frames()
	if s, ok := record.Spawn.Decode(frames[0]); !ok || s.Argv[0] != "agent" || s.ProtocolVersion != 1 {
		t.Errorf("spawn = %+v %v", s, ok)
	}
	if _, ok := record.Timeout.Decode(frames[0]); ok {
		t.Error("a spawn frame decoded as a timeout")
	}
	if frames[2].Raw != nil {
		t.Errorf("an event without payload carries %q", frames[2].Raw)
	}
	if x, ok := record.Exit.Decode(frames[3]); !ok || *x.Code != 3 || x.By != "self" {
		t.Errorf("exit = %+v %v", x, ok)
	}
	bad := jsonrpc.Frame{Dir: jsonrpc.DirEvent, Kind: "exit", Raw: []byte(`{"code":"three"}`)}
	if _, ok := record.Exit.Decode(bad); ok {
		t.Error("an exit payload that does not parse decoded")
	}
	x := record.New(frames)
	if !x.AtStage(record.Timeout, record.StageSessionNew) || x.AtStage(record.Timeout, record.StageInitialize) {
		t.Error("AtStage does not find the timeout's stage")
	}
}

// line appends a wire line to log.
func line(log *jsonrpc.Log, dir jsonrpc.Dir, raw string) jsonrpc.Frame {
	return log.Append(jsonrpc.Frame{Dir: dir, Raw: []byte(raw)})
}

// TestPairing is the one pairing rule: a response answers the latest request with its id sent
// the other way before it; the first response is the answer, later ones are duplicates; an
// id nobody sent is unknown; the two directions never mix.
func TestPairing(t *testing.T) {
	log := jsonrpc.NewLog()
	r1 := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	a1 := line(log, jsonrpc.DirAgent, `{"id":1,"jsonrpc":"2.0","result":{}}`)
	dup := line(log, jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	unknown := line(log, jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":9,"result":{}}`)
	agentReq := line(log, jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":2,"method":"fs/read_text_file","params":{}}`)
	r2 := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`)
	clientAnswer := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`)
	a2 := line(log, jsonrpc.DirAgent, `{"jsonrpc":"2.0","id":"2","result":{}}`)
	x := record.New(log.Frames())

	if got, ok := x.AnswerTo(r1.Seq); !ok || got.Seq != a1.Seq {
		t.Errorf("answer to initialize = %d, want %d", got.Seq, a1.Seq)
	}
	if r := x.ReplyOf(dup.Seq); r.Exchange == nil || r.First || r.Exchange.Request.Seq != r1.Seq {
		t.Errorf("duplicate = %+v", r)
	}
	if r := x.ReplyOf(unknown.Seq); r.Exchange != nil {
		t.Errorf("unknown id paired with %+v", r.Exchange.Request)
	}
	if r := x.ReplyOf(clientAnswer.Seq); r.Exchange == nil || r.Exchange.Request.Seq != agentReq.Seq || !r.First {
		t.Errorf("the client's answer = %+v, want the agent's request", r)
	}
	// "2" and 2 are different ids in JSON-RPC: the string does not answer session/new.
	if _, ok := x.AnswerTo(r2.Seq); ok {
		t.Error("a string id answered a numeric request")
	}
	if r := x.ReplyOf(a2.Seq); r.Exchange != nil {
		t.Errorf("\"2\" paired with %+v", r.Exchange.Request)
	}
	if ex := x.First("session/new"); ex == nil || ex.Request.Seq != r2.Seq {
		t.Error("First(session/new) not found")
	}
	if n := len(x.Calls(jsonrpc.DirAgent)); n != 1 {
		t.Errorf("%d agent requests, want 1", n)
	}
}

func TestStepRangeAndSplit(t *testing.T) {
	log := jsonrpc.NewLog()
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}})
	record.Step.Emit(log, record.StepInfo{Name: "one"})
	in := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":1,"method":"x"}`)
	record.Step.Emit(log, record.StepInfo{Name: "two"})
	record.Teardown.Emit(log, record.TeardownInfo{Step: record.TeardownLadder})
	record.Done.Emit(log, record.None{})
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}, InitializeOnly: true})
	record.Done.Emit(log, record.None{})
	main, deep := record.Split(log.Frames())
	if len(main) != 6 || len(deep) != 2 {
		t.Fatalf("split %d + %d, want 6 + 2", len(main), len(deep))
	}
	x := record.New(main)
	if r := x.StepRange("one"); len(r) != 1 || r[0].Seq != in.Seq {
		t.Errorf("step one = %v", r)
	}
	if r := x.StepRange("two"); len(r) != 0 || r == nil {
		t.Errorf("step two = %v, want empty, not nil", r)
	}
	if x.StepRange("three") != nil {
		t.Error("a step that never began has frames")
	}
	if x.ActiveEnd() != 2 {
		t.Errorf("ActiveEnd = %d, want the first step's seq 2", x.ActiveEnd())
	}
	// A second connection that is not initialize-only is part of the main record.
	if _, deep := record.Split(append(main, main[0])); deep != nil {
		t.Error("a plain second spawn was split off")
	}
}
