// Package tap is a transparent proxy between an ACP client (an editor) and an agent: the editor
// launches acpprobe tap instead of the agent, every byte passes through unchanged in both
// directions as soon as it is read, and a copy of each line goes to a jsonrpc.Log for a
// transcript or live checks. The agent runs in its own process group, which is torn down
// when the editor goes away.
//
// The tap's memory does not grow with the session: without a Log it keeps nothing but its
// copy buffers; with one, what the log keeps is the log's budget (jsonrpc.KeepNone for a log
// that only its observers read), and a line is held whole only up to MaxLineSize.
package tap

import (
	"bytes"
	"context"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// Options configure a tap.
type Options struct {
	Agent transport.Launcher
	// AgentID, Command and Cwd name the agent in the record, as a probe's do: its id (when
	// it came from the registry or a config), the command line as the user gave it, and the
	// directory it runs in.
	AgentID, Command, Cwd string
	// Editor side: what the editor writes (to the agent), and where the agent's output goes.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Log receives a copy of every line (client and agent), stderr chunk and event. Without
	// one the tap records nothing: it only moves bytes.
	Log *jsonrpc.Log
	// MaxLineSize bounds a line kept whole in the log (forwarding is never limited).
	MaxLineSize int
	// Grace is each step of the teardown ladder.
	Grace time.Duration
	// Signals are forwarded to the agent's process group.
	Signals <-chan os.Signal
}

// Run proxies until the agent has exited and its output is drained, and returns how it ended.
// The error is non-nil only when the agent could not be started.
func Run(ctx context.Context, o Options) (record.ExitInfo, error) {
	recording := o.Log != nil
	if !recording { // the events cost one counted run
		o.Log = jsonrpc.NewLog()
		o.Log.SetBudget(jsonrpc.Budget{Bytes: jsonrpc.KeepNone})
	}
	record.Spawn.Emit(o.Log, record.SpawnInfo{AgentID: o.AgentID, Command: o.Command, Argv: o.Agent.CommandLine(), Cwd: o.Cwd,
		ProbedAt: time.Now().UTC().Format(time.RFC3339Nano), Tap: true})
	var stderr io.Writer = stderrTee{o.Stderr, o.Log}
	if !recording {
		stderr = o.Stderr
	}
	agent, err := o.Agent.Launch(ctx, stderr)
	if err != nil {
		record.SpawnFailed.Emit(o.Log, record.Message{Message: err.Error()})
		return record.ExitInfo{}, err
	}
	record.Started.Emit(o.Log, record.Process{PID: agent.PID()})

	editorGone := make(chan struct{})
	var goneOnce sync.Once
	leave := func() { goneOnce.Do(func() { close(editorGone) }) }

	// editor → agent
	go func() {
		s := newSplitter(o.Log, jsonrpc.DirClient, o.MaxLineSize, recording)
		pump(o.Stdin, agent.Stdin(), s)
		s.flush()
		record.EditorEOF.Emit(o.Log, record.None{})
		leave()
	}()
	// agent → editor
	drained := make(chan struct{})
	go func() {
		s := newSplitter(o.Log, jsonrpc.DirAgent, o.MaxLineSize, recording)
		if werr := pump(agent.Stdout(), o.Stdout, s); werr != nil {
			leave() // the editor stopped reading: it is gone
		}
		s.flush()
		record.EOF.Emit(o.Log, record.None{})
		close(drained)
	}()

	// Signals are forwarded until the agent is gone, teardown included.
	shutdown := make(chan record.ExitInfo, 1)
	stopping := false
	stop := func() {
		if stopping {
			return
		}
		stopping = true
		// The editor has closed the agent's input: the agent gets a grace to leave by itself,
		// as it would connected to the editor directly, and the record says so.
		ladder := transport.Patient(o.Grace)
		wait := float64(ladder.StdinWait.Microseconds()) / 1000
		record.Teardown.Emit(o.Log, record.TeardownInfo{Step: record.TeardownLadder, StdinWaitMs: &wait})
		go func() { shutdown <- agent.Shutdown(context.Background(), ladder) }()
	}
	var exit record.ExitInfo
	for done := false; !done; {
		select {
		case sig := <-o.Signals:
			if s, ok := sig.(syscall.Signal); ok && agent.PID() > 0 {
				record.Signal.Emit(o.Log, record.SignalInfo{Signal: s.String()})
				_ = syscall.Kill(-agent.PID(), s)
			}
		case <-editorGone:
			editorGone = nil
			stop()
		case <-agent.Exited():
			// The agent left on its own: collect its output, then clean up its group.
			t := time.NewTimer(o.Grace)
			select {
			case <-drained:
			case <-t.C:
			}
			t.Stop()
			stop()
		case exit = <-shutdown:
			done = true
		}
	}
	// What the agent wrote is forwarded before the tap ends, unless the editor stopped reading
	// it: a write it never takes would hold the tap forever after the agent is gone.
	t := time.NewTimer(o.Grace)
	select {
	case <-drained:
	case <-t.C:
		record.EditorStalled.Emit(o.Log, record.None{})
	}
	t.Stop()
	o.Log.FlushStderr()
	record.Exit.Emit(o.Log, exit)
	record.Done.Emit(o.Log, record.None{})
	return exit, nil
}

// pump copies src to dst chunk by chunk. Each chunk is logged before it is forwarded, so the
// log keeps cause before effect: a request is recorded before the agent can answer it. It
// returns the write error, if writing failed. A nil splitter logs nothing.
func pump(src io.Reader, dst io.Writer, s *splitter) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			s.write(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return nil
		}
	}
}

// splitter cuts a byte stream into lines for the log.
type splitter struct {
	log      *jsonrpc.Log
	dir      jsonrpc.Dir
	max      int
	line     []byte
	size     int64
	oversize bool
}

// newSplitter logs the lines of dir in log; nil (logging nothing) unless recording.
func newSplitter(log *jsonrpc.Log, dir jsonrpc.Dir, max int, recording bool) *splitter {
	if !recording {
		return nil
	}
	if max <= 0 {
		max = jsonrpc.DefaultMaxLineSize
	}
	return &splitter{log: log, dir: dir, max: max}
}

func (s *splitter) write(p []byte) {
	for s != nil && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		s.size += int64(len(chunk))
		if !s.oversize {
			s.line = append(s.line, chunk...)
			if s.size > int64(s.max) {
				s.oversize = true
				s.line = append([]byte(nil), s.line[:min(len(s.line), jsonrpc.OversizePrefix)]...)
			}
		}
		if i < 0 {
			return
		}
		s.emit(false)
		p = p[i+1:]
	}
}

func (s *splitter) emit(unterminated bool) {
	s.log.Append(jsonrpc.Frame{Dir: s.dir, Raw: s.line, Size: s.size, Oversize: s.oversize, Unterminated: unterminated})
	s.line, s.size, s.oversize = nil, 0, false
}

// flush logs a last line the stream left without a newline.
func (s *splitter) flush() {
	if s != nil && s.size > 0 {
		s.emit(true)
	}
}

// stderrTee passes the agent's stderr through to the editor and logs each chunk.
type stderrTee struct {
	w   io.Writer
	log *jsonrpc.Log
}

func (t stderrTee) Write(p []byte) (int, error) {
	t.log.AppendStderr(p)
	if t.w != nil {
		_, _ = t.w.Write(p)
	}
	return len(p), nil
}
