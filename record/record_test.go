package record_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// TestKindsAreDocumented keeps docs/transcript.md, the transcript schema's list of event kinds
// and the record's event kinds together.
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
	b, err := os.ReadFile("../transcript/transcript.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Defs map[string]struct {
			Properties struct {
				Kind struct {
					Enum []record.Kind `json:"enum"`
				} `json:"kind"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	var enum []record.Kind
	for _, d := range schema.Defs {
		enum = append(enum, d.Properties.Kind.Enum...)
	}
	want := record.Kinds()
	slices.Sort(enum)
	slices.Sort(want)
	if !slices.Equal(enum, want) {
		t.Errorf("transcript.schema.json's event kinds %q, want the record's %q", enum, want)
	}
}

func TestEventRoundTrip(t *testing.T) {
	log := jsonrpc.NewLog()
	code := 3
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"agent"}, ProtocolVersion: 1})
	record.Timeout.Emit(log, record.StageInfo{Stage: record.StageSessionNew})
	record.EOF.Emit(log, record.None{})
	record.Exit.Emit(log, record.ExitInfo{Code: &code, By: "self"})
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

func TestStepRange(t *testing.T) {
	log := jsonrpc.NewLog()
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}})
	record.Step.Emit(log, record.StepInfo{Name: "one"})
	in := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":1,"method":"x"}`)
	record.Step.Emit(log, record.StepInfo{Name: "two"})
	record.Teardown.Emit(log, record.TeardownInfo{Step: record.TeardownLadder})
	record.Done.Emit(log, record.None{})
	x := record.New(log.Frames())
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
}

// TestSplit: a check record with both extra connections splits into the main one and each
// extra one by purpose, whatever their order; an initialize-only spawn without a purpose (a
// record written before purposes) is the --deep connection; a spawn that names no purpose, or
// one that does not follow a done, stays in the connection it is part of.
func TestSplit(t *testing.T) {
	log := jsonrpc.NewLog()
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}})
	main := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
	record.Done.Emit(log, record.None{})
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}, Purpose: record.PurposeForkProbe, InitializeOnly: true})
	fork := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":2,"method":"session/fork"}`)
	record.Done.Emit(log, record.None{})
	record.Spawn.Emit(log, record.SpawnInfo{Argv: []string{"a"}, Purpose: record.PurposeDeep, InitializeOnly: true})
	deep := line(log, jsonrpc.DirClient, `{"jsonrpc":"2.0","id":3,"method":"initialize"}`)
	record.Done.Emit(log, record.None{})
	all := log.Frames()

	c := record.Split(all)
	if len(c.Main) != 3 || c.Main[1].Seq != main.Seq || len(c.Extra) != 2 {
		t.Fatalf("split into %d main frames and %d extra connections, want 3 and 2", len(c.Main), len(c.Extra))
	}
	if c.Extra[0].Purpose != record.PurposeForkProbe || c.Extra[1].Purpose != record.PurposeDeep {
		t.Errorf("purposes %q, %q", c.Extra[0].Purpose, c.Extra[1].Purpose)
	}
	for _, tc := range []struct {
		purpose record.Purpose
		want    jsonrpc.Frame
	}{{record.PurposeForkProbe, fork}, {record.PurposeDeep, deep}} {
		got := c.Of(tc.purpose)
		if len(got) != 3 || !record.Spawn.Is(got[0]) || got[1].Seq != tc.want.Seq || !record.Done.Is(got[2]) {
			t.Errorf("%s connection = %v", tc.purpose, got)
		}
	}
	if c.Of("other") != nil {
		t.Error("a purpose the record does not have has frames")
	}

	// A recording made before purposes: its --deep connection says initializeOnly alone.
	old := jsonrpc.NewLog()
	for _, f := range c.Main {
		old.Append(f)
	}
	record.Spawn.Emit(old, record.SpawnInfo{Argv: []string{"a"}, InitializeOnly: true})
	record.Done.Emit(old, record.None{})
	if c := record.Split(old.Frames()); len(c.Main) != 3 || len(c.Of(record.PurposeDeep)) != 2 || len(c.Extra) != 1 {
		t.Errorf("old --deep record split into %d + %v", len(c.Main), c.Extra)
	}

	// A plain second spawn after a done, and a purposeful one not right after a done, are part
	// of the connection before them.
	plain := append(slices.Clone(c.Main), c.Main[0])
	if c := record.Split(plain); len(c.Main) != len(plain) || c.Extra != nil {
		t.Errorf("a plain second spawn was split off: %d + %v", len(c.Main), c.Extra)
	}
	inside := append(slices.Clone(c.Main[:2]), c.Extra[0].Frames[0], c.Main[2])
	if c := record.Split(inside); len(c.Main) != len(inside) || c.Extra != nil {
		t.Errorf("a spawn inside a connection was split off: %d + %v", len(c.Main), c.Extra)
	}
	if c := record.Split(nil); c.Main != nil || c.Extra != nil {
		t.Errorf("an empty record splits into %+v", c)
	}
}
