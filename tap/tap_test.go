package tap

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

func sh(script string) transport.Command {
	return transport.Command{Argv: []string{"/bin/sh", "-c", script}}
}

func frames(log *jsonrpc.Log, dir jsonrpc.Dir) []string {
	var out []string
	for _, f := range log.Frames() {
		if f.Dir == dir {
			s := string(f.Raw)
			if f.Unterminated {
				s += "(unterminated)"
			}
			out = append(out, s)
		}
	}
	return out
}

// Bytes pass through unchanged in both directions, invalid UTF-8, NUL and a missing final
// newline included, and each line is logged once.
func TestByteIdentity(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\"}\n\xff\xfe not json \x00\n\n{\"partial\":"
	var out, errw bytes.Buffer
	log := jsonrpc.NewLog()
	exit, err := Run(context.Background(), Options{Agent: transport.Command{Argv: []string{"cat"}}, Stdin: strings.NewReader(in), Stdout: &out, Stderr: &errw, Log: log, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != in {
		t.Errorf("agent output changed:\n got %q\nwant %q", out.String(), in)
	}
	if exit.Code == nil || *exit.Code != 0 {
		t.Errorf("exit = %+v", exit)
	}
	want := []string{`{"jsonrpc":"2.0","id":1,"method":"initialize"}`, "\xff\xfe not json \x00", "", `{"partial":(unterminated)`}
	for _, dir := range []jsonrpc.Dir{jsonrpc.DirClient, jsonrpc.DirAgent} {
		if got := frames(log, dir); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s frames = %q, want %q", dir, got, want)
		}
	}
}

func TestStderrAndExitCode(t *testing.T) {
	var out, errw bytes.Buffer
	log := jsonrpc.NewLog()
	exit, err := Run(context.Background(), Options{Agent: sh(`printf 'line\377\n' ; echo to-stderr >&2; exit 7`), Stdin: blockingReader{}, Stdout: &out, Stderr: &errw, Log: log, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if exit.Code == nil || *exit.Code != 7 || exit.By != "self" {
		t.Errorf("exit = %+v, want status 7 by itself", exit)
	}
	if out.String() != "line\xff\n" || errw.String() != "to-stderr\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errw.String())
	}
	if got := frames(log, jsonrpc.DirStderr); strings.Join(got, "") != "to-stderr\n" {
		t.Errorf("stderr frames %q", got)
	}
}

// blockingReader is an editor that never writes and never leaves.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

// When the editor goes away, the agent's group is torn down, even if it ignores EOF and
// SIGTERM.
func TestEditorGoneTearsDown(t *testing.T) {
	pr, pw := io.Pipe()
	log := jsonrpc.NewLog()
	log.Observe(func(f jsonrpc.Frame) {
		if f.Dir == jsonrpc.DirAgent && string(f.Raw) == "ready" {
			go pw.Close() // the editor goes away once the agent runs
		}
	})
	x, err := Run(context.Background(), Options{Agent: sh(`trap "" TERM; (sleep 60 &); echo ready; while :; do sleep 1; done`),
		Stdin: pr, Stdout: io.Discard, Stderr: io.Discard, Log: log, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if x.By != "sigkill" {
		t.Errorf("exit = %+v, want the ladder to reach SIGKILL", x)
	}
	var pid int
	for _, f := range log.Frames() {
		if f.Kind == "started" {
			var p struct{ PID int }
			json.Unmarshal(f.Raw, &p)
			pid = p.PID
		}
	}
	if pid == 0 || transport.GroupAlive(pid) {
		t.Errorf("the agent's group (%d) survived the editor", pid)
	}
}

func TestSignalForwarded(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	var out bytes.Buffer
	log := jsonrpc.NewLog()
	log.Observe(func(f jsonrpc.Frame) {
		if f.Dir == jsonrpc.DirAgent && string(f.Raw) == "ready" {
			sigs <- syscall.SIGTERM
		}
	})
	exit, err := Run(context.Background(), Options{Agent: sh(`trap 'echo got-term; exit 42' TERM; echo ready; while :; do sleep 0.05; done`),
		Stdin: blockingReader{}, Stdout: &out, Stderr: io.Discard, Log: log, Grace: time.Second, Signals: sigs})
	if err != nil {
		t.Fatal(err)
	}
	if exit.Code == nil || *exit.Code != 42 || !strings.Contains(out.String(), "got-term") {
		t.Errorf("exit %+v out %q", exit, out.String())
	}
}

// An editor that stops reading the agent's output is gone too.
func TestEditorStopsReading(t *testing.T) {
	x, err := Run(context.Background(), Options{Agent: sh(`trap "" TERM; while :; do echo x; sleep 0.01; done`), Stdin: blockingReader{},
		Stdout: failingWriter{}, Stderr: io.Discard, Grace: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if x.By != "sigkill" {
		t.Errorf("exit = %+v", x)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestSpawnFailure(t *testing.T) {
	log := jsonrpc.NewLog()
	_, err := Run(context.Background(), Options{Agent: transport.Command{Argv: []string{"/nonexistent/agent"}}, Stdin: strings.NewReader(""), Stdout: io.Discard, Log: log})
	if err == nil {
		t.Fatal("no error for a missing agent")
	}
	kinds := ""
	for _, f := range log.Frames() {
		kinds += f.Kind + " "
	}
	if !strings.Contains(kinds, "spawn-failed") {
		t.Errorf("events: %s", kinds)
	}
}

func TestSplitterOversize(t *testing.T) {
	log := jsonrpc.NewLog()
	s := newSplitter(log, jsonrpc.DirAgent, 10, true)
	s.write([]byte("0123456789ABCDEF"))
	s.write([]byte("GH\nshort\n"))
	fs := log.Frames()
	if len(fs) != 2 || !fs[0].Oversize || fs[0].Size != 18 || string(fs[0].Raw) != "0123456789ABCDEFGH"[:len(fs[0].Raw)] || string(fs[1].Raw) != "short" {
		t.Errorf("frames = %+v", fs)
	}
}

// stalledWriter takes nothing until released: an editor that stopped reading its stdout.
type stalledWriter struct{ release chan struct{} }

func (w stalledWriter) Write(b []byte) (int, error) {
	<-w.release
	return 0, errors.New("released")
}

// An editor that closes the agent's input but stops reading its output: the agent is torn
// down and the tap ends within the grace, with the stall recorded. It waited for the
// forwarding of the agent's last output forever before.
func TestEditorStalledAfterTeardown(t *testing.T) {
	w := stalledWriter{release: make(chan struct{})}
	defer close(w.release)
	pr, pw := io.Pipe()
	log := jsonrpc.NewLog()
	log.Observe(func(f jsonrpc.Frame) {
		if f.Dir == jsonrpc.DirAgent && string(f.Raw) == "ready" {
			go pw.Close() // the editor closes the agent's input once it runs
		}
	})
	ended := make(chan record.ExitInfo, 1)
	go func() {
		x, err := Run(context.Background(), Options{Agent: sh(`echo ready; while :; do echo more; sleep 0.01; done`),
			Stdin: pr, Stdout: w, Stderr: io.Discard, Log: log, Grace: 200 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		ended <- x
	}()
	select {
	case x := <-ended:
		if x.By == "" {
			t.Errorf("exit = %+v, want the ladder to have ended the agent", x)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the tap still runs 20 s after the editor left, holding the agent's output")
	}
	stalled := slices.ContainsFunc(log.Frames(), func(f jsonrpc.Frame) bool { return record.EditorStalled.Is(f) })
	if !stalled {
		t.Error("the record does not say the editor stopped taking the agent's output")
	}
}
