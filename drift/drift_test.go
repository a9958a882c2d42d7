package drift

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/report"
)

func result(t *testing.T, js string) *report.Result {
	t.Helper()
	var r report.Result
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

const base = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":12,"pid":7},
 "protocolVersion":1,"agentInfo":{"name":"a","version":"1.0"},
 "capabilities":{"loadSession":true,"sessionCapabilities":{"close":true,"list":false}},
 "authMethods":[{"id":"chatgpt","name":"ChatGPT"},{"id":"key","name":"Key","type":"env_var"}],
 "modes":[{"id":"default"},{"id":"plan"}],
 "configOptions":[{"id":"model","name":"Model","type":"select","currentValue":"m1","options":[{"value":"m1"},{"value":"m2"}]}],
 "methods":{"session/load":{"support":"supported","code":-32002,"ms":1.5}},
 "timings":{"totalMs":10},"findings":[{"id":"protocol.stdin-exit","tier":"ADVISORY","title":"t","message":"m","seq":40}],
 "raw":{"initialize":{"sessionId":"s1"}}}`

func TestNoDriftIgnoresVolatile(t *testing.T) {
	a := result(t, base)
	b := result(t, strings.NewReplacer(`"durationMs":12`, `"durationMs":99`, `"pid":7`, `"pid":8`, `"ms":1.5`, `"ms":3`, `"totalMs":10`, `"totalMs":11`,
		`"seq":40`, `"seq":41`, `"s1"`, `"s2"`, `"2026-01-01T00:00:00Z"`, `"2026-02-02T00:00:00Z"`).Replace(base))
	changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil)
	if err != nil || len(changes) != 0 {
		t.Errorf("changes = %+v, %v", changes, err)
	}
}

func TestDrift(t *testing.T) {
	a := result(t, base)
	b := result(t, strings.NewReplacer(
		`"version":"1.0"`, `"version":"1.1"`,
		`"list":false`, `"list":true`,
		`{"id":"key","name":"Key","type":"env_var"}`, `{"id":"apikey","name":"API key"}`,
		`{"id":"plan"}`, `{"id":"plan"},{"id":"yolo"}`,
		`{"value":"m2"}`, `{"value":"m3"}`,
		`"support":"supported","code":-32002`, `"support":"unsupported","code":-32601`,
		`"protocol.stdin-exit"`, `"framing.stdout-non-json"`,
	).Replace(base))
	got := changeTexts(t, a, b)
	want := []string{
		`agentInfo.version: "1.0" → "1.1"`,
		`authMethods[apikey]: added apikey`,
		`authMethods[key]: removed key`,
		`capabilities.sessionCapabilities.list: false → true`,
		`configOptions[model].options[m2]: removed m2`,
		`configOptions[model].options[m3]: added m3`,
		`findings[framing.stdout-non-json]: added framing.stdout-non-json`,
		`findings[protocol.stdin-exit]: removed protocol.stdin-exit`,
		`methods[session/load].code: -32002 → -32601`,
		`methods[session/load].support: "supported" → "unsupported"`,
		`modes[yolo]: added yolo`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// --ignore drops a path and what is under it.
	changes, _ := Compare(Doc{Result: a}, Doc{Result: b}, []string{"agentInfo", "methods[*]", "findings", "configOptions[model].options"})
	if len(changes) != 4 {
		t.Errorf("with ignores: %+v", changes)
	}
}

func TestMatricesAndLoad(t *testing.T) {
	dir := t.TempDir()
	a := &matrix.Matrix{Schema: matrix.Schema, Rows: []matrix.Row{{ID: "one", Result: result(t, base)}, {ID: "gone", Problem: "x"}}}
	b := &matrix.Matrix{Schema: matrix.Schema, Rows: []matrix.Row{{ID: "one", Result: result(t, strings.Replace(base, `"loadSession":true`, `"loadSession":false`, 1))}, {ID: "new", Problem: "y"}}}
	for name, v := range map[string]any{"a.json": a, "b.json": b, "r.json": result(t, base)} {
		data, _ := json.Marshal(v)
		os.WriteFile(filepath.Join(dir, name), data, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"schema":"other"}`), 0o644)
	da, err := Load(filepath.Join(dir, "a.json"))
	if err != nil || da.Matrix == nil {
		t.Fatalf("load matrix: %v", err)
	}
	db, _ := Load(filepath.Join(dir, "b.json"))
	changes, err := Compare(da, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Text)
	}
	if strings.Join(got, "; ") != "one: capabilities.loadSession: true → false; new: new agent in the matrix; gone: no longer in the matrix" {
		t.Errorf("matrix changes: %q", got)
	}
	dr, _ := Load(filepath.Join(dir, "r.json"))
	if _, err := Compare(da, dr, nil); err == nil {
		t.Error("compared a matrix with a result")
	}
	if _, err := Load(filepath.Join(dir, "bad.json")); err == nil || !strings.Contains(err.Error(), `schema "other"`) {
		t.Errorf("bad file: %v", err)
	}
}

// Turns compare scenario by scenario: a changed outcome or fact is drift; the times and
// lines of the turn's prompts are not.
func TestTurnDrift(t *testing.T) {
	const turns = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "turns":[{"scenario":"completion","outcome":"passed","runs":[{"seq":20,"ms":812.5,"textIn":["agent_message_chunk"],"thoughtChunks":0,"usage":true,"firstChunkMs":500,"updatesAfter":0,"modelRequests":1}]},
  {"scenario":"prompt-shapes","outcome":"passed","runs":[],"shapes":[{"type":"audio","seq":30,"advertised":false,"accepted":true,"reached":false}]},
  {"scenario":"cancel","outcome":"passed","runs":[],"cancel":{"sent":true,"seq":40,"stopReason":"cancelled","withinMs":12,"updatesAfter":0,"nextText":true,"nextModelRequests":1}}]}`
	a := result(t, turns)
	b := result(t, strings.NewReplacer(`"ms":812.5`, `"ms":901`, `"firstChunkMs":500`, `"firstChunkMs":640`, `"seq":30`, `"seq":31`,
		`"withinMs":12`, `"withinMs":30`, `"seq":40`, `"seq":42`).Replace(turns))
	if changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil); err != nil || len(changes) != 0 {
		t.Errorf("times and lines only: changes %+v, %v", changes, err)
	}
	c := result(t, strings.NewReplacer(`"outcome":"passed","runs":[],"cancel"`, `"outcome":"failed","runs":[],"cancel"`,
		`"stopReason":"cancelled"`, `"stopReason":"end_turn"`, `"reached":false`, `"reached":true`).Replace(turns))
	got := changeTexts(t, a, c)
	want := []string{
		`turns[cancel].cancel.stopReason: "cancelled" → "end_turn"`,
		`turns[cancel].outcome: "passed" → "failed"`,
		`turns[prompt-shapes].shapes[audio].reached: false → true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The permission runs (one per mode, keyed by its name) compare by what they showed, not by
// the lines of their prompts and requests.
func TestPermissionRunsDrift(t *testing.T) {
	const doc = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "turns":[{"scenario":"permission","outcome":"passed","runs":[],"permission":[{"mode":"default","name":"Manual","asks":true,"default":false,"answer":"reject","seq":177,"askedSeq":187,"asked":true,"toolCall":true,"fileWritten":false,"offered":true},
  {"mode":"auto","name":"Auto","asks":false,"default":true,"answer":"reject","seq":230,"asked":false,"toolCall":true,"fileWritten":true,"offered":true}]}]}`
	a := result(t, doc)
	b := result(t, strings.NewReplacer(`"seq":177`, `"seq":178`, `"askedSeq":187`, `"askedSeq":188`, `"seq":230`, `"seq":231`).Replace(doc))
	if changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil); err != nil || len(changes) != 0 {
		t.Errorf("lines only: changes %+v, %v", changes, err)
	}
	c := result(t, strings.Replace(doc, `"asked":true,"toolCall":true,"fileWritten":false`, `"asked":false,"toolCall":true,"fileWritten":true`, 1))
	got := changeTexts(t, a, c)
	want := []string{`turns[permission].permission[Manual].asked: true → false`, `turns[permission].permission[Manual].fileWritten: false → true`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The route's emulator address (a fresh loopback port each run) is not drift; its kind, profile
// and the variables it set are.
func TestRouteDrift(t *testing.T) {
	const doc = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "route":{"kind":"profile","profile":"codex-acp","env":[{"name":"OPENAI_BASE_URL","value":"http://127.0.0.1:41001/v1"}],"gateway":"http://127.0.0.1:41001","verified":true,"dialects":["openai-responses"]}}`
	a := result(t, doc)
	b := result(t, strings.ReplaceAll(doc, "41001", "39217"))
	if changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil); err != nil || len(changes) != 0 {
		t.Errorf("ports only: changes %+v, %v", changes, err)
	}
	c := result(t, strings.NewReplacer(`"kind":"profile"`, `"kind":"gateway"`, `OPENAI_BASE_URL`, `CODEX_BASE_URL`).Replace(doc))
	got := changeTexts(t, a, c)
	for _, want := range []string{`route.kind: "profile" → "gateway"`, "route.env[CODEX_BASE_URL]: added", "route.env[OPENAI_BASE_URL]: removed"} {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, want) }) {
			t.Errorf("changes %q, want one starting %q", got, want)
		}
	}
}

// The sessions part compares what each part showed; its session ids, sandbox paths and lines
// are not drift.
func TestSessionsDrift(t *testing.T) {
	const doc = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "turns":[{"scenario":"sessions","outcome":"passed","runs":[],"sessions":{"sessionId":"s-1","cwd":"/tmp/box-1/w",
  "live":{"userText":false,"agentText":true,"toolCalls":[{"id":"t1","kind":"edit","status":"failed"}],"updates":3},
  "advertised":["load","list","close"],"list":{"seq":3,"answerSeq":4,"listed":true,"cwd":"/tmp/box-1/w"},
  "load":{"seq":6,"answerSeq":11,"replay":{"userText":true,"agentText":true,"toolCalls":[{"id":"t1","kind":"edit","status":"failed"}],"updates":4},"updatesAfter":0,"missing":[]},
  "fork":null,"close":{"cycles":5,"before":0,"processes":[1,1,1,1,1],"grew":false,"close":{"seq":12,"answerSeq":13},"prompt":{"seq":40,"answerSeq":41,"code":-32002,"message":"gone"},"modelRequests":0},
  "resume":null}}]}`
	a := result(t, doc)
	b := result(t, strings.NewReplacer(`s-1`, `s-2`, `/tmp/box-1/w`, `/tmp/box-2/w`, `"seq":6,"answerSeq":11`, `"seq":7,"answerSeq":15`,
		`"seq":40,"answerSeq":41`, `"seq":44,"answerSeq":45`).Replace(doc))
	if changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil); err != nil || len(changes) != 0 {
		t.Errorf("ids, paths and lines only: changes %+v, %v", changes, err)
	}
	c := result(t, strings.NewReplacer(`"processes":[1,1,1,1,1],"grew":false`, `"processes":[1,2,3,4,5],"grew":true`,
		`"updates":4},"updatesAfter":0,"missing":[]`, `"updates":2},"updatesAfter":0,"missing":["tool call t1 (edit, failed)"]`).Replace(doc))
	got := changeTexts(t, a, c)
	for _, want := range []string{"turns[sessions].sessions.close.grew: false → true", "turns[sessions].sessions.load.missing: added"} {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, want) }) {
			t.Errorf("changes %q, want one starting %q", got, want)
		}
	}
}

// TestProseNotDrift (issue 25 item 10): a note or a title worded anew is not drift; the facts
// beside them are.
func TestProseNotDrift(t *testing.T) {
	const doc = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "findings":[{"id":"protocol.stdin-exit","tier":"ADVISORY","title":"Agent did not exit","message":"m","knownReason":"tracked in #1","known":true}],
 "sideEffects":{"isolation":{"level":"none","credentials":[],"note":"not isolated: the agent ran with your HOME"},
  "files":null,"browser":{"shimmed":true,"launches":[]},"processes":{"afterSessionClose":null,"afterStdinEOF":null,"afterTeardown":[],"escaped":[]},
  "network":{"observed":false,"lookups":[],"connects":[],"note":"not observed: the agent had the network"}},
 "coverage":{"foldedFrames":3,"foldedBytes":99,"note":"3 frames beyond the budget"}}`
	a := result(t, doc)
	reworded := result(t, strings.NewReplacer(`not isolated: the agent ran with your HOME`, `no sandbox: your HOME, your environment`,
		`not observed: the agent had the network`, `not observed (only --isolate=net cuts it)`, `3 frames beyond the budget`, `3 frames were counted, not kept`,
		`Agent did not exit`, `Agent stays after its stdin closes`, `tracked in #1`, `see #1`).Replace(doc))
	if changes, err := Compare(Doc{Result: a}, Doc{Result: reworded}, nil); err != nil || len(changes) != 0 {
		t.Errorf("notes and titles reworded: changes %+v, %v", changes, err)
	}
	facts := result(t, strings.NewReplacer(`"level":"none"`, `"level":"env+home"`, `"observed":false`, `"observed":true`,
		`"foldedFrames":3`, `"foldedFrames":4`).Replace(doc))
	changes, err := Compare(Doc{Result: a}, Doc{Result: facts}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Path)
	}
	if want := "coverage.foldedFrames sideEffects.isolation.level sideEffects.network.observed"; strings.Join(got, " ") != want {
		t.Errorf("facts changed beside the notes: %q, want %q", got, want)
	}
}

// The vendors a session used and the MCP transports a turn offered are keyed by vendor and
// transport: one more vendor is that vendor added, not every later entry changed.
func TestVendorsAndTransportsKeyed(t *testing.T) {
	const doc = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "extensions":{"vendors":[{"vendor":"gemini","keysCatalogued":2,"keysSeen":1},{"vendor":"jetbrains","keysCatalogued":5,"keysSeen":2}]},
 "turns":[{"scenario":"mcp","outcome":"passed","runs":[],"mcp":[{"transport":"stdio","advertised":true,"delivered":true},{"transport":"http","advertised":true,"delivered":true}]}]}`
	a := result(t, doc)
	b := result(t, strings.NewReplacer(`"vendors":[`, `"vendors":[{"vendor":"auth","keysCatalogued":0,"keysSeen":0},`,
		`"mcp":[`, `"mcp":[{"transport":"sse","advertised":false,"delivered":false},`).Replace(doc))
	changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range changes {
		got = append(got, ch.Path+" "+string(ch.Kind))
	}
	want := []string{"extensions.vendors[auth] added", "turns[mcp].mcp[sse] added"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The zero-_meta steps compare by method and outcome: a step answered a line later is the same
// step, one left unanswered is drift.
func TestZeroMetaStepsDrift(t *testing.T) {
	const doc = `{"schema":"acpprobe.result/v1","agent":{"id":"x","command":"x","argv":["x"],"cwd":"/a","probedAt":"2026-01-01T00:00:00Z","durationMs":1},
 "zeroMeta":{"outcome":"held","steps":[{"method":"initialize","seq":4,"answerSeq":5,"outcome":"ok"},{"method":"session/prompt","seq":116,"answerSeq":121,"outcome":"ok"}]}}`
	a := result(t, doc)
	b := result(t, strings.ReplaceAll(doc, `"answerSeq":121`, `"answerSeq":120`))
	if changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil); err != nil || len(changes) != 0 {
		t.Errorf("lines only: changes %+v, %v", changes, err)
	}
	c := result(t, strings.ReplaceAll(doc, `"seq":4,"answerSeq":5,"outcome":"ok"`, `"seq":4,"outcome":"unanswered"`))
	changes, err := Compare(Doc{Result: a}, Doc{Result: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ch := range changes {
		got = append(got, ch.Path+" "+string(ch.Kind)+" "+string(ch.New)+string(ch.Old))
	}
	want := []string{`zeroMeta.steps removed {"method":"initialize","outcome":"ok"}`, `zeroMeta.steps added {"method":"initialize","outcome":"unanswered"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// changeTexts are the lines Compare says of the drift from a to b.
func changeTexts(t *testing.T, a, b *report.Result) []string {
	t.Helper()
	changes, err := Compare(Doc{Result: a}, Doc{Result: b}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range changes {
		got = append(got, c.Text)
	}
	return got
}
