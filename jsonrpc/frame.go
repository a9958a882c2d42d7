// Package jsonrpc is acpprobe's raw-first JSON-RPC 2.0 layer for newline-delimited JSON
// (the ACP stdio transport).
//
// Every line that crosses the wire is kept as bytes, with its direction and a monotonic
// timestamp, before anything tries to decode it (see Log and Frame). Decoding is lenient
// (Decode): a line that is not JSON, not an object, or not a valid envelope is still a Frame,
// so that the conformance checks can report it; nothing is silently dropped and no byte
// sequence makes the package panic. Conn matches responses to requests by a canonical form of
// the id, so out-of-order answers and `"id"` as the last key both work.
package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// Dir says who wrote a frame.
type Dir string

// Frame directions. The names match the transcript vocabulary ("client", "agent", "stderr",
// "event").
const (
	DirClient Dir = "client" // written by the client on the agent's stdin
	DirAgent  Dir = "agent"  // written by the agent on its stdout
	DirStderr Dir = "stderr" // a chunk of the agent's stderr
	DirEvent  Dir = "event"  // something that happened to the process (spawn, exit, teardown step)
)

// DefaultMaxLineSize is the largest line kept whole (64 MiB). Longer lines are recorded as
// oversize with a prefix only, then skipped.
const DefaultMaxLineSize = 64 << 20

// OversizePrefix is how many bytes of an oversize line are kept.
const OversizePrefix = 4 << 10

// Frame is one line as it crossed the wire, or one event of the agent process.
type Frame struct {
	Seq int64         // 1-based position in the Log
	Dir Dir           // who wrote it
	At  time.Duration // time since the Log started (monotonic clock)
	// Raw is the line exactly as written, without its trailing newline. For an oversize line
	// it holds the first OversizePrefix bytes only.
	Raw          []byte
	Size         int64  // length of the whole line in bytes (without the newline)
	Oversize     bool   // the line was longer than the reader's maximum and was skipped
	Unterminated bool   // the stream ended before a newline closed this line
	Kind         string // for DirEvent: spawn, exit, timeout, teardown, …

	// Msg is the decoded message for client and agent lines that parsed as a JSON-RPC
	// envelope; nil otherwise (see DecodeErr).
	Msg *Message
	// DecodeErr says why Raw could not be decoded; nil when Msg is set or for stderr/events.
	DecodeErr error
}

// Log is the ordered record of a session: every frame in both directions, stderr chunks and
// process events, each stamped with a sequence number and a monotonic time. It is safe for
// concurrent use. Observers registered with Observe see each frame as it is appended, which
// is how transcripts are written incrementally.
type Log struct {
	start time.Time

	mu        sync.Mutex
	frames    []Frame
	observers []func(Frame)
	filter    func(Frame) Frame

	// Stderr chunks keep their bytes only for the most recent StderrRetained bytes; older
	// chunks keep their Size and lose their Raw (observers, such as a transcript, saw them
	// whole). A flood of stderr therefore costs no memory.
	stderrKept  []int // indices of stderr frames that still hold their bytes, oldest first
	stderrBytes int64
}

// StderrRetained is how many bytes of the most recent stderr a Log keeps in memory.
const StderrRetained = 1 << 20

// SetFilter makes every frame pass through fn before it is stored or observed (redaction).
// fn may change Raw; Msg is decoded afterwards from what fn returns.
func (l *Log) SetFilter(fn func(Frame) Frame) {
	l.mu.Lock()
	l.filter = fn
	l.mu.Unlock()
}

// NewLog starts an empty log whose clock starts now.
func NewLog() *Log { return &Log{start: time.Now()} }

// Start is the wall-clock time the log started.
func (l *Log) Start() time.Time { return l.start }

// Since returns the time elapsed since the log started, on the monotonic clock.
func (l *Log) Since() time.Duration { return time.Since(l.start) }

// Observe registers fn to be called, in order, with every frame appended from now on. fn runs
// while the log is locked, so it must not call back into the log.
func (l *Log) Observe(fn func(Frame)) {
	l.mu.Lock()
	l.observers = append(l.observers, fn)
	l.mu.Unlock()
}

// Append stamps f with the next sequence number and the current time, decodes client and agent
// lines, stores it, and returns the stored frame.
func (l *Log) Append(f Frame) Frame {
	l.mu.Lock()
	filter := l.filter
	l.mu.Unlock()
	if filter != nil {
		f = filter(f)
	}
	if (f.Dir == DirClient || f.Dir == DirAgent) && !f.Oversize && f.Msg == nil && f.DecodeErr == nil {
		f.Msg, f.DecodeErr = Decode(f.Raw)
	}
	if f.Size == 0 {
		f.Size = int64(len(f.Raw))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f.Seq = int64(len(l.frames)) + 1
	f.At = l.Since() // under the lock, so At never goes backwards along Seq
	l.frames = append(l.frames, f)
	for _, fn := range l.observers {
		fn(f)
	}
	if f.Dir == DirStderr {
		l.retainStderr(len(l.frames) - 1)
	}
	return f
}

// retainStderr drops the bytes of the oldest stderr chunks beyond StderrRetained.
func (l *Log) retainStderr(i int) {
	l.stderrKept = append(l.stderrKept, i)
	l.stderrBytes += int64(len(l.frames[i].Raw))
	for l.stderrBytes > StderrRetained && len(l.stderrKept) > 1 {
		old := l.stderrKept[0]
		l.stderrKept = l.stderrKept[1:]
		l.stderrBytes -= int64(len(l.frames[old].Raw))
		l.frames[old].Raw = nil
	}
}

// Event appends a process event of the given kind with an optional JSON payload.
func (l *Log) Event(kind string, payload []byte) Frame {
	return l.Append(Frame{Dir: DirEvent, Kind: kind, Raw: payload})
}

// Frames returns a copy of the frames recorded so far, in order.
func (l *Log) Frames() []Frame {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Frame(nil), l.frames...)
}

// Line is one line read by a LineReader.
type Line struct {
	Raw          []byte // the line without its newline; a prefix only when Oversize
	Size         int64  // full length of the line
	Oversize     bool
	Unterminated bool // the stream ended without a newline after this line
}

// LineReader splits a byte stream into newline-terminated lines, with a maximum line size. It
// never fails on content: an oversize line is returned as such (prefix and size) and the
// reader moves on to the next line.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader reads lines from r, keeping lines up to max bytes whole (max <= 0 means
// DefaultMaxLineSize).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLineSize
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line. At the end of the stream it returns io.EOF (after a final
// unterminated line, if any); a read error is returned with the partial line read before it.
func (lr *LineReader) Next() (Line, error) {
	var buf []byte
	var size int64
	oversize := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		terminated := err == nil
		if terminated {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		if !oversize {
			buf = append(buf, chunk...)
			if size > int64(lr.max) {
				oversize = true
				buf = append([]byte(nil), buf[:min(len(buf), OversizePrefix)]...)
			}
		}
		if terminated {
			return Line{Raw: buf, Size: size, Oversize: oversize}, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if size == 0 {
			return Line{}, err
		}
		line := Line{Raw: buf, Size: size, Oversize: oversize, Unterminated: true}
		if errors.Is(err, io.EOF) {
			return line, nil
		}
		return line, err
	}
}

// HasBOM reports whether raw starts with a UTF-8 byte order mark.
func HasBOM(raw []byte) bool { return bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")) }

// Feed reads lines from r on its own goroutine and delivers them on lines, until the stream
// ends: done then receives the error that ended it (io.EOF at a clean end). It stops early
// when ctx ends. Agents that serve stdio (the reference agent, the replayer) loop over it.
func Feed(ctx context.Context, r io.Reader, max int) (lines <-chan Line, done <-chan error) {
	out := make(chan Line)
	end := make(chan error, 1)
	go func() {
		lr := NewLineReader(r, max)
		for {
			line, err := lr.Next()
			if err == nil || line.Size > 0 {
				select {
				case out <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				end <- err
				return
			}
		}
	}()
	return out, end
}
