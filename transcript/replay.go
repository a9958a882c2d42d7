package transcript

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// Replayer plays a recorded session back as the agent: it answers the n-th call of a method
// with the recorded answer to the n-th call of that method (its id rewritten to the caller's),
// first re-emitting what the agent wrote before that answer (notifications, its own requests,
// non-JSON lines, stderr). A method the recording never saw gets -32601; a recorded request
// that was never answered is never answered; an agent that crashed crashes at the same point.
type Replayer struct {
	preamble  []jsonrpc.Frame // agent output before the first client request
	exchanges map[string][]*exchange
	trailing  []jsonrpc.Frame // agent output after the last answer
	crash     *exchange       // the exchange during which the agent's output ended
	exit      exitRecord
	start     time.Duration // time of the first frame, for --timing of the preamble
}

type exchange struct {
	method string
	reqAt  time.Duration
	before []jsonrpc.Frame // what the agent wrote since the previous answer
	answer *jsonrpc.Frame
}

type exitRecord struct {
	Code      *int
	stdinEOF  bool // the recording shows the agent leaving when its stdin closed
	recorded  bool
	outputEnd bool // the agent's output ended before teardown began
	// statusOnSignal: the teardown's signal ended the agent, and it exited with Code (a
	// handler that exits, as CodeBuddy Code 2.117.0 does with status 0), not by the signal.
	statusOnSignal bool
}

// ExitError ends a replay with the recorded agent's exit status.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "replayed agent exit" }

// ExitCode is the recorded exit status.
func (e *ExitError) ExitCode() int { return e.Code }

// StatusOnSignal is the status the recorded agent exited with when the teardown signalled it,
// for a replay stopped the same way to end as it did; false when the signal killed it, or the
// recording says nothing.
func (r *Replayer) StatusOnSignal() (int, bool) {
	if !r.exit.statusOnSignal {
		return 0, false
	}
	return *r.exit.Code, true
}

// NewReplayer prepares frames (of a transcript) for replay.
func NewReplayer(frames []jsonrpc.Frame) *Replayer {
	r := &Replayer{exchanges: map[string][]*exchange{}}
	x := record.New(frames)
	byCall := map[*record.Exchange]*exchange{}
	var pending []jsonrpc.Frame
	seenRequest := false
	teardown := false
	if len(frames) > 0 {
		r.start = frames[0].At
	}
	for _, f := range frames {
		switch f.Dir {
		case jsonrpc.DirClient:
			call := x.Call(f.Seq)
			if call == nil {
				continue
			}
			if !seenRequest {
				r.preamble, pending = pending, nil
				seenRequest = true
			}
			ex := &exchange{method: f.Msg.Method, reqAt: f.At}
			r.exchanges[ex.method] = append(r.exchanges[ex.method], ex)
			byCall[call] = ex
		case jsonrpc.DirAgent:
			if reply := x.ReplyOf(f.Seq); reply.First && byCall[reply.Exchange] != nil {
				ex := byCall[reply.Exchange]
				delete(byCall, reply.Exchange)
				fc := f
				ex.answer, ex.before, pending = &fc, pending, nil
				continue
			}
			pending = append(pending, f)
		case jsonrpc.DirStderr:
			pending = append(pending, f)
		case jsonrpc.DirEvent:
			switch {
			case record.Teardown.Is(f):
				teardown = true
			case record.EOF.Is(f):
				if !teardown {
					r.exit.outputEnd = true
					r.crash = firstOpen(byCall)
					if r.crash != nil {
						r.crash.before, pending = pending, nil
					}
				}
			case record.Exit.Is(f):
				if x, ok := record.Exit.Decode(f); ok {
					r.exit = exitRecord{Code: x.Code, recorded: true, stdinEOF: x.By == record.ExitStdin, outputEnd: r.exit.outputEnd,
						statusOnSignal: x.Code != nil && x.Signal == "" && x.By == record.ExitSigterm}
				}
			}
		}
	}
	if !seenRequest {
		r.preamble, pending = pending, nil
	}
	r.trailing = pending
	return r
}

// firstOpen returns the unanswered exchange of the earliest request.
func firstOpen(open map[*record.Exchange]*exchange) *exchange {
	var first *exchange
	for _, ex := range open {
		if first == nil || ex.reqAt < first.reqAt {
			first = ex
		}
	}
	return first
}

// Serve replays on the given streams until stdin ends, the recorded agent's crash point is
// reached (an *ExitError), or ctx ends. With timing, frames are delayed as in the recording.
func (r *Replayer) Serve(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, timing bool) error {
	s := &replay{r: r, out: stdout, errw: stderr, timing: timing, ctx: ctx, next: map[string]int{}}
	if err := s.emit(r.preamble, time.Now(), r.start); err != nil {
		return err
	}
	lines, readErr := jsonrpc.Feed(ctx, stdin, 0)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				return err
			}
			return s.stdinClosed()
		case line := <-lines:
			if err := s.handle(line.Raw); err != nil {
				return err
			}
		}
	}
}

type replay struct {
	r      *Replayer
	out    io.Writer
	errw   io.Writer
	timing bool
	ctx    context.Context
	mu     sync.Mutex
	next   map[string]int
}

func (s *replay) handle(raw []byte) error {
	arrived := time.Now()
	msg, err := jsonrpc.Decode(raw)
	if err != nil || msg.Kind() != jsonrpc.Request {
		return nil // notifications and answers to replayed agent requests need nothing
	}
	n := s.next[msg.Method]
	s.next[msg.Method] = n + 1
	list := s.r.exchanges[msg.Method]
	if n >= len(list) {
		line, _ := jsonrpc.EncodeError(msg.ID, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found (not in the recording)"})
		return s.write(line, true)
	}
	ex := list[n]
	if err := s.emit(ex.before, arrived, ex.reqAt); err != nil {
		return err
	}
	if ex == s.r.crash {
		code := 1
		if s.r.exit.Code != nil {
			code = *s.r.exit.Code
		}
		return &ExitError{Code: code}
	}
	if ex.answer == nil {
		return nil // never answered in the recording
	}
	s.wait(arrived, ex.answer.At-ex.reqAt)
	return s.write(WithID(ex.answer.Raw, msg.ID), !ex.answer.Unterminated)
}

// stdinClosed ends the replay the way the recorded agent ended when its stdin closed: it
// writes what remained, then exits, or keeps running until stopped if it needed a signal.
func (s *replay) stdinClosed() error {
	if err := s.emit(s.r.trailing, time.Now(), 0); err != nil {
		return err
	}
	if s.r.exit.recorded && !s.r.exit.stdinEOF && !s.r.exit.outputEnd {
		<-s.ctx.Done()
		return s.ctx.Err()
	}
	if s.r.exit.Code != nil && *s.r.exit.Code != 0 {
		return &ExitError{Code: *s.r.exit.Code}
	}
	return nil
}

// emit writes recorded frames; with timing, each at its recorded offset from base.
func (s *replay) emit(frames []jsonrpc.Frame, arrived time.Time, base time.Duration) error {
	for _, f := range frames {
		if base != 0 {
			s.wait(arrived, f.At-base)
		}
		var err error
		if f.Dir == jsonrpc.DirStderr {
			_, err = s.errw.Write(f.Raw)
		} else {
			err = s.write(f.Raw, !f.Unterminated)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *replay) wait(arrived time.Time, offset time.Duration) {
	if !s.timing || offset <= 0 {
		return
	}
	d := time.Until(arrived.Add(offset))
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.ctx.Done():
	}
}

func (s *replay) write(line []byte, newline bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := append([]byte(nil), line...)
	if newline {
		buf = append(buf, '\n')
	}
	_, err := s.out.Write(buf)
	return err
}

// WithID returns a response line with its top-level "id" value replaced, every other byte
// kept. A line that is not an object with an id is returned unchanged.
func WithID(raw []byte, id json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return raw
	}
	for dec.More() {
		keyTok, err := dec.Token()
		if err != nil {
			return raw
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return raw
		}
		if key, _ := keyTok.(string); key == "id" {
			end := int(dec.InputOffset())
			start := end - len(value)
			out := make([]byte, 0, len(raw)-len(value)+len(id))
			out = append(append(append(out, raw[:start]...), id...), raw[end:]...)
			return out
		}
	}
	return raw
}
