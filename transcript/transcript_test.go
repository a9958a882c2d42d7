package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// sample is a log with every kind of frame a transcript must carry.
func sample() []jsonrpc.Frame {
	log := jsonrpc.NewLog()
	log.Event("spawn", []byte(`{"argv":["agent"],"cwd":"/w"}`))
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)})
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte("not json \xff\x00 \xef\xbb\xbf")})
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","method":"x"`), Size: 90 << 20, Oversize: true})
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirStderr, Raw: []byte("warn: \u00e9t\u00e9\n")})
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`), Unterminated: true})
	log.Event("eof", nil)
	log.Event("exit", []byte(`{"code":0,"signal":"","afterStdinCloseMs":null,"by":"self"}`))
	return log.Frames()
}

func TestRoundTrip(t *testing.T) {
	frames := sample()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Version: "test", Tool: "probe", Command: "agent", Cwd: "/w", Start: "2026-01-01T00:00:00Z", Redacted: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range frames {
		w.Frame(f)
	}
	if w.Err() != nil {
		t.Fatal(w.Err())
	}
	h, got, err := Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if h.Format != FormatVersion || h.Tool != "probe" || !h.Redacted || h.Argv == nil {
		t.Errorf("header = %+v", h)
	}
	if len(got) != len(frames) {
		t.Fatalf("%d frames back, wrote %d", len(got), len(frames))
	}
	for i := range frames {
		a, b := frames[i], got[i]
		if a.Seq != b.Seq || a.Dir != b.Dir || !bytes.Equal(a.Raw, b.Raw) || a.Size != b.Size || a.Oversize != b.Oversize ||
			a.Unterminated != b.Unterminated || a.Kind != b.Kind || a.At != b.At {
			t.Errorf("frame %d changed:\n wrote %+v\n  read %+v", i, a, b)
		}
		if (a.Msg == nil) != (b.Msg == nil) {
			t.Errorf("frame %d: decoded %v, read back decoded %v", i, a.Msg != nil, b.Msg != nil)
		}
	}
	// The invalid UTF-8 line went out as base64, every line is valid against the schema.
	if !bytes.Contains(buf.Bytes(), []byte(`"rawBase64"`)) {
		t.Error("invalid UTF-8 not carried as rawBase64")
	}
	validateLines(t, buf.Bytes())
}

func validateLines(t *testing.T, data []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("t.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("t.json")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(line))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("line %d does not match transcript.schema.json: %v\n%s", i+1, err, line)
		}
	}
}

func TestReadCrashedAndBroken(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, Header{Tool: "probe", Start: "2026-01-01T00:00:00Z"})
	for _, f := range sample()[:3] {
		w.Frame(f)
	}
	whole := buf.String()
	// A recorder killed mid-line leaves a partial last line: everything before it is read.
	_, frames, err := Read(strings.NewReader(whole + `{"seq":4,"t":1.5,"dir":"ag`))
	if err != nil || len(frames) != 3 {
		t.Errorf("truncated transcript: %d frames, %v", len(frames), err)
	}
	// A bad line in the middle is an error naming the line.
	_, _, err = Read(strings.NewReader(whole + "garbage\n" + `{"seq":5,"t":1,"dir":"agent","raw":"x"}` + "\n"))
	if err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Errorf("bad line: %v", err)
	}
	_, _, err = Read(strings.NewReader(whole + `{"seq":5,"t":1,"dir":"sideways","raw":"x"}` + "\n"))
	if err == nil || !strings.Contains(err.Error(), `unknown dir "sideways"`) {
		t.Errorf("bad dir: %v", err)
	}
	for _, notOurs := range []string{"", `{"jsonrpc":"2.0"}` + "\n", "hello\n"} {
		if _, _, err := Read(strings.NewReader(notOurs)); !errors.Is(err, ErrNotTranscript) {
			t.Errorf("Read(%q) = %v, want ErrNotTranscript", notOurs, err)
		}
	}
	if _, _, err := Read(strings.NewReader(`{"acpprobeTranscript":9}` + "\n")); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("future format: %v", err)
	}
}

func TestEventTimes(t *testing.T) {
	e := EventOf(jsonrpc.Frame{Seq: 3, Dir: jsonrpc.DirEvent, Kind: "done", At: 1500 * time.Microsecond})
	if e.T != 1.5 || e.Raw != nil || e.Data != nil || e.Kind != "done" {
		t.Errorf("event = %+v", e)
	}
	b, _ := json.Marshal(e)
	if string(b) != `{"seq":3,"t":1.5,"dir":"event","kind":"done"}` {
		t.Errorf("event line = %s", b)
	}
}

// TestReadBounded (issue 11, F15): a transcript a user hands us cannot make reading it cost
// more than its budget. A line over the limit is an error naming its line, never read into
// memory whole (before: a 200 MB line cost 2.7 GB); past the record's budget, events are
// folded as a live record's are, so notifications past it keep no more frames whole
// (before: 1.8 GB).
func TestReadBounded(t *testing.T) {
	header := `{"acpprobeTranscript":1,"acpprobeVersion":"t","tool":"probe","command":"a","argv":["a"],"cwd":"/","start":"2026-11-30T00:00:00Z","redacted":true}` + "\n"
	huge := header + `{"seq":1,"t":0,"dir":"agent","raw":"` + strings.Repeat("x", 4<<20) + `"}` + "\n"
	_, _, err := ReadWith(strings.NewReader(huge), ReadOptions{MaxLine: 1 << 20})
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a 4 MiB line under a 1 MiB limit: %v, want an error naming line 2", err)
	}

	const n = 50_000
	var b strings.Builder
	b.WriteString(header)
	note := `{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"sessionId\":\"s\",\"update\":{\"sessionUpdate\":\"agent_message_chunk\"}}}`
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"seq":%d,"t":%d,"dir":"agent","raw":"%s"}`+"\n", i, i, note)
	}
	budget := int64(1 << 20)
	_, frames, err := ReadWith(strings.NewReader(b.String()), ReadOptions{Budget: record.Budget(budget)})
	if err != nil {
		t.Fatal(err)
	}
	var whole, folded int64
	for _, f := range frames {
		if f.Dir == jsonrpc.DirFolded {
			folded += f.Folded.Frames
		} else {
			whole++
		}
	}
	if whole+folded != n || folded == 0 {
		t.Errorf("%d frames whole and %d folded, want %d in all, most of them folded", whole, folded, n)
	}
	if perFrame := int64(len(note)); whole*perFrame > 2*budget {
		t.Errorf("%d frames of %d bytes kept whole: over twice the %d-byte budget", whole, perFrame, budget)
	}
}
