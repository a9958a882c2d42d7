package transcript

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

func recording(lines ...string) []jsonrpc.Frame {
	log := jsonrpc.NewLog()
	for _, l := range lines {
		tag, rest, _ := strings.Cut(l, " ")
		switch tag {
		case ">":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: []byte(rest)})
		case "<":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(rest)})
		case "2":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirStderr, Raw: []byte(rest + "\n")})
		case "!":
			kind, payload, _ := strings.Cut(rest, " ")
			var raw []byte
			if payload != "" {
				raw = []byte(payload)
			}
			log.Event(kind, raw)
		}
	}
	return log.Frames()
}

// play feeds the client lines to a replayer and returns what it wrote and how it ended.
func play(t *testing.T, r *Replayer, input string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errw strings.Builder
	err = r.Serve(context.Background(), strings.NewReader(input), &out, &errw, false)
	return out.String(), errw.String(), err
}

func TestReplay(t *testing.T) {
	r := NewReplayer(recording(
		"< banner",
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		"2 starting",
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"m","params":{}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"m","params":{}}`,
		`< {"jsonrpc":"2.0","method":"note","params":{}}`,
		`< {"result":"second","id":3,"jsonrpc":"2.0"}`,
		`< {"jsonrpc":"2.0","id":2,"result":"first"}`,
		`> {"jsonrpc":"2.0","id":4,"method":"hang","params":{}}`,
		`! teardown {"step":"ladder"}`,
		`! eof`,
		`! exit {"code":0,"by":"stdin"}`,
	))
	in := `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{}}
{"jsonrpc":"2.0","id":10,"method":"m"}
{"jsonrpc":"2.0","id":11,"method":"m"}
{"jsonrpc":"2.0","id":12,"method":"m"}
{"jsonrpc":"2.0","id":13,"method":"hang"}
{"jsonrpc":"2.0","method":"notification"}
`
	out, errw, err := play(t, r, in)
	if err != nil {
		t.Fatal(err)
	}
	want := `banner
{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":10,"result":"first"}
{"jsonrpc":"2.0","method":"note","params":{}}
{"result":"second","id":11,"jsonrpc":"2.0"}
{"jsonrpc":"2.0","id":12,"error":{"code":-32601,"message":"Method not found (not in the recording)"}}
`
	if out != want {
		t.Errorf("replay wrote:\n%s\nwant:\n%s", out, want)
	}
	if errw != "starting\n" {
		t.Errorf("stderr %q", errw)
	}
}

func TestReplayCrash(t *testing.T) {
	r := NewReplayer(recording(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`,
		"2 panic: boom",
		`! eof`,
		`! teardown {"step":"ladder"}`,
		`! exit {"code":3,"by":"self"}`,
	))
	out, errw, err := play(t, r, `{"jsonrpc":"2.0","id":1,"method":"initialize"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"session/new"}`+"\n")
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Code != 3 {
		t.Fatalf("err = %v, want exit 3", err)
	}
	if out != `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n" || errw != "panic: boom\n" {
		t.Errorf("out %q err %q", out, errw)
	}
}

// An agent that needed a signal does not leave when its stdin closes.
func TestReplayIgnoresEOFLikeTheRecording(t *testing.T) {
	r := NewReplayer(recording(`! teardown {"step":"ladder"}`, `! eof`, `! exit {"code":null,"signal":"SIGTERM","by":"sigterm"}`))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx, strings.NewReader(""), io.Discard, io.Discard, false) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want it to run until cancelled", err)
	}
}

// An agent the teardown's SIGTERM ended says how: killed by it (no status), or exiting with a
// status from its handler (CodeBuddy Code 2.117.0: 0), which a replay stopped the same way
// ends with.
func TestStatusOnSignal(t *testing.T) {
	for _, c := range []struct {
		exit string
		code int
		ok   bool
	}{
		{`{"code":0,"signal":"","by":"sigterm"}`, 0, true},
		{`{"code":2,"signal":"","by":"sigterm"}`, 2, true},
		{`{"code":null,"signal":"SIGTERM","by":"sigterm"}`, 0, false},
		{`{"code":0,"signal":"","by":"stdin"}`, 0, false},
		{`{"code":null,"signal":"SIGKILL","by":"sigkill"}`, 0, false},
	} {
		r := NewReplayer(recording(`! teardown {"step":"ladder"}`, `! eof`, `! exit `+c.exit))
		if code, ok := r.StatusOnSignal(); code != c.code || ok != c.ok {
			t.Errorf("%s: StatusOnSignal() = %d, %v; want %d, %v", c.exit, code, ok, c.code, c.ok)
		}
	}
	if _, ok := NewReplayer(recording(`! eof`)).StatusOnSignal(); ok {
		t.Error("a recording without an exit gave a status")
	}
}

func TestWithID(t *testing.T) {
	cases := []struct{ raw, id, want string }{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, `"x"`, `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{`{"result":{"id":5},"id" : 7 }`, `12`, `{"result":{"id":5},"id" : 12 }`},
		{`{"jsonrpc":"2.0","result":{}}`, `3`, `{"jsonrpc":"2.0","result":{}}`},
		{`not json`, `3`, `not json`},
	}
	for _, tc := range cases {
		if got := string(WithID([]byte(tc.raw), json.RawMessage(tc.id))); got != tc.want {
			t.Errorf("WithID(%s, %s) = %s, want %s", tc.raw, tc.id, got, tc.want)
		}
	}
}

// With --timing the replay writes the same bytes (the delays are measured by benchmarks, not
// asserted here).
func TestReplayTimingSameOutput(t *testing.T) {
	frames := recording(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","method":"note","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	)
	in := `{"jsonrpc":"2.0","id":7,"method":"initialize"}` + "\n"
	var plain, timed strings.Builder
	if err := NewReplayer(frames).Serve(context.Background(), strings.NewReader(in), &plain, io.Discard, false); err != nil {
		t.Fatal(err)
	}
	if err := NewReplayer(frames).Serve(context.Background(), strings.NewReader(in), &timed, io.Discard, true); err != nil {
		t.Fatal(err)
	}
	if plain.String() != timed.String() || !strings.Contains(timed.String(), `"id":7`) {
		t.Errorf("timing changed the output:\n%s\n%s", plain.String(), timed.String())
	}
}
