package sentinel

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/record"
)

func TestObserve(t *testing.T) {
	long := "a" + strings.Repeat("é", maxText) // 2 bytes a rune after one: clipping cuts one in two
	for _, c := range []struct {
		name, in string
		ok       bool
		want     []record.MCPEvent
	}{
		{"initialize", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"claude-code","title":"Claude","version":"2.1"}}}`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "initialize", ID: json.RawMessage(`0`), ProtocolVersion: "2025-06-18", ClientInfo: &record.MCPClient{Name: "claude-code", Title: "Claude", Version: "2.1"}}}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "notifications/initialized"}}},
		{"call", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"t","arguments":{"k":[1,2]}}}`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "tools/call", ID: json.RawMessage(`"a"`), Tool: "t", Arguments: json.RawMessage(`{"k":[1,2]}`)}}},
		{"big arguments", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":"` + strings.Repeat("x", maxArguments) + `"}}`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "tools/call", ID: json.RawMessage(`1`), Tool: "t", ArgumentsSize: maxArguments + 2}}},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, true,
			[]record.MCPEvent{{Kind: record.MCPResponse, ID: json.RawMessage(`7`)}}},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}`, true,
			[]record.MCPEvent{{Kind: record.MCPResponse, ID: json.RawMessage(`7`)}}},
		{"long method", `{"jsonrpc":"2.0","method":"` + long + `"}`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "a" + strings.Repeat("é", maxText/2-1)}}},
		{"huge id", `{"jsonrpc":"2.0","id":"` + strings.Repeat("9", maxID) + `","method":"ping"}`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "ping"}}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"n"}]`, true,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "tools/list", ID: json.RawMessage(`1`)}, {Kind: record.MCPMessage, Method: "n"}}},
		{"batch with garbage", `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},3]`, false,
			[]record.MCPEvent{{Kind: record.MCPMessage, Method: "tools/list", ID: json.RawMessage(`1`)}, {Kind: record.MCPInvalid, Size: 1, Error: "not a JSON-RPC message: json: cannot unmarshal number"}}},
		{"empty batch", `[]`, false, []record.MCPEvent{{Kind: record.MCPInvalid, Size: 2, Error: "empty batch"}}},
		{"not json", `hello`, false, []record.MCPEvent{{Kind: record.MCPInvalid, Size: 5, Error: "not a JSON-RPC message: invalid character 'h'"}}},
		{"no method", `{"jsonrpc":"2.0","id":1}`, false, []record.MCPEvent{{Kind: record.MCPInvalid, ID: json.RawMessage(`1`), Size: 24, Error: "neither method nor result nor error"}}},
		{"old jsonrpc", `{"jsonrpc":"1.0","id":1,"method":"initialize"}`, false,
			[]record.MCPEvent{{Kind: record.MCPInvalid, ID: json.RawMessage(`1`), Method: "initialize", Size: 46, Error: `jsonrpc is "1.0", not "2.0"`}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := observe([]byte(c.in))
			for i := range got { // errors from encoding/json are compared by their start
				if i < len(c.want) && c.want[i].Error != "" && strings.HasPrefix(got[i].Error, c.want[i].Error) {
					got[i].Error = c.want[i].Error
				}
			}
			if ok != c.ok {
				t.Errorf("ok = %v, want %v", ok, c.ok)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(c.want)
			if string(g) != string(w) {
				t.Errorf("events\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestObserveBatchBound(t *testing.T) {
	in := "[" + strings.TrimSuffix(strings.Repeat(`{"jsonrpc":"2.0","method":"n"},`, maxBatch+10), ",") + "]"
	got, ok := observe([]byte(in))
	if !ok || len(got) != maxBatch+1 || got[maxBatch].Kind != record.MCPInvalid || !strings.Contains(got[maxBatch].Error, "batch of 74 messages") {
		t.Fatalf("ok %v, %d events, last %+v", ok, len(got), got[len(got)-1])
	}
}

func TestClip(t *testing.T) {
	for _, in := range []string{"", "abc", strings.Repeat("x", 1000), strings.Repeat("€", 200), "a\xffb"} {
		out := clip(in)
		if len(out) > maxText || !utf8.ValidString(out) || (len(in) <= maxText && utf8.ValidString(in) && out != in) {
			t.Errorf("clip(%.20q…) = %.20q… (%d bytes)", in, out, len(out))
		}
	}
}

func TestReadLine(t *testing.T) {
	br := bufio.NewReaderSize(strings.NewReader("ab\n"+strings.Repeat("x", 40)+"\nlast\r\n"+"0123456789"), 16)
	want := []struct {
		line string
		size int
		err  error
	}{{"ab", 3, nil}, {"", 41, errLineTooLong}, {"last\r", 6, nil}, {"0123456789", 10, nil}, {"", 0, io.EOF}}
	for i, w := range want {
		line, size, err := readLine(br, 10)
		if string(line) != w.line || size != w.size || !errors.Is(err, w.err) {
			t.Errorf("line %d: %q %d %v, want %q %d %v", i, line, size, err, w.line, w.size, w.err)
		}
	}
	br = bufio.NewReaderSize(strings.NewReader("01234567890"), 16) // 11 bytes, no newline
	if _, size, err := readLine(br, 10); size != 11 || !errors.Is(err, errLineTooLong) {
		t.Errorf("last line over the limit: %d %v", size, err)
	}
}

// TestStdinFilter: only well-formed messages pass; every line is reported; the total is
// bounded.
func TestStdinFilter(t *testing.T) {
	var reported []record.MCPEvent
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		`garbage`,
		``,
		`{"jsonrpc":"2.0","method":"` + strings.Repeat("x", 100) + `"}`,
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"oops":1}]`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		strings.Repeat("y", 200),
	}, "\n") + "\n"
	f := &stdinFilter{br: bufio.NewReader(strings.NewReader(in)), maxLine: 100, maxTotal: 300,
		report: func(evs []record.MCPEvent) error { reported = append(reported, evs...); return nil }}
	out, err := io.ReadAll(f)
	if !errors.Is(err, errInputLimit) {
		t.Fatalf("err = %v, want the input limit", err)
	}
	if want := `{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n" + `{"jsonrpc":"2.0","id":3,"method":"tools/list"}` + "\n"; string(out) != want {
		t.Errorf("passed on %q, want %q", out, want)
	}
	var kinds []string
	for _, ev := range reported {
		kinds = append(kinds, string(ev.Kind)+":"+ev.Method)
	}
	if got, want := strings.Join(kinds, " "), "message:initialize invalid: oversize: message:ping invalid: message:tools/list invalid:"; got != want {
		t.Errorf("reported %s\n want %s", got, want)
	}
	if last := reported[len(reported)-1]; !strings.Contains(last.Error, "more than 300 bytes") {
		t.Errorf("last report %+v", last)
	}

	failing := &stdinFilter{br: bufio.NewReader(strings.NewReader("x\n")), maxLine: 10, maxTotal: 100,
		report: func([]record.MCPEvent) error { return io.ErrClosedPipe }}
	if _, err := failing.Read(make([]byte, 10)); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("a failing report channel gave %v", err)
	}
}

// TestEventLimit: past maxEvents one dropped event is reported, the rest only advance the
// milestones.
func TestEventLimit(t *testing.T) {
	var got []record.MCPEvent
	h := &Hub{opts: Options{OnEvent: func(ev record.MCPEvent) { got = append(got, ev) }}, nonce: "n",
		miles: map[record.MCPTransport]*record.MCPMilestones{record.MCPHTTP: {}}, changed: make(chan struct{})}
	for range maxEvents + 10 {
		h.record(record.MCPEvent{Transport: record.MCPHTTP, Kind: record.MCPMessage, Method: "ping"})
	}
	h.record(record.MCPEvent{Transport: record.MCPHTTP, Kind: record.MCPMessage, Method: "tools/call", Tool: h.Tool(record.MCPHTTP)})
	if len(got) != maxEvents+1 || got[maxEvents].Kind != record.MCPDropped || len(h.Events()) != maxEvents+1 {
		t.Fatalf("%d reported, %d kept, last %+v", len(got), len(h.Events()), got[len(got)-1])
	}
	if !h.Milestones(record.MCPHTTP).Has(record.MCPCalled) {
		t.Error("an event past the limit did not advance the milestones")
	}
}

// FuzzObserve: any input gives bounded events that marshal, and ok only for messages.
func FuzzObserve(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"x"}}}`,
		`[{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t","arguments":{}}}]`, `{"jsonrpc":"2.0","id":1,"result":null}`, "\xff[", `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		events, ok := observe(in)
		if len(events) == 0 || len(events) > maxBatch+1 {
			t.Fatalf("%d events", len(events))
		}
		for _, ev := range events {
			if ok && ev.Kind != record.MCPMessage && ev.Kind != record.MCPResponse {
				t.Fatalf("ok with a %s event", ev.Kind)
			}
			if len(ev.Method) > maxText || len(ev.Tool) > maxText || len(ev.Error) > maxText || len(ev.ID) > maxID || len(ev.Arguments) > maxArguments {
				t.Fatalf("unbounded event %+v", ev)
			}
			if _, err := json.Marshal(ev); err != nil {
				t.Fatalf("event does not marshal: %v", err)
			}
		}
	})
}
