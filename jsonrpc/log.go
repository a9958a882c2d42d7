package jsonrpc

import (
	"bytes"
	"maps"
	"slices"
	"sync"
	"time"
)

// Log is the ordered record of a session: every frame in both directions, stderr chunks and
// process events, each stamped with a sequence number and a monotonic time. It is safe for
// concurrent use. Observers registered with Observe see each frame as it is appended, which
// is how transcripts are written incrementally.
//
// What a Log keeps in memory is bounded: stderr keeps its bytes only for the most recent
// StderrRetained bytes, and with a Budget the frames beyond it are folded into counts
// (Frame.Folded), so that an agent flooding its output costs counters, not memory.
type Log struct {
	start time.Time

	mu        sync.Mutex
	frames    []Frame
	seq       int64 // the last seq given
	observers []*observer
	filter    func(Frame) Frame

	budget Budget
	kept   int64 // bytes of the frames kept whole (Budget accounting)
	folded int   // index in frames of the open folded run, or -1

	// Stderr chunks keep their bytes only for the most recent StderrRetained bytes; older
	// chunks keep their Size and lose their Raw (observers, such as a transcript, saw them
	// whole). A flood of stderr therefore costs no memory.
	stderrKept  []int // indices of stderr frames that still hold their bytes, oldest first
	stderrBytes int64
	// stderrMu serialises the stderr stream; stderrCarry holds its end, which may still be
	// the first half of a line or a secret (see AppendStderr).
	stderrMu    sync.Mutex
	stderrCarry []byte
}

// StderrRetained is how many bytes of the most recent stderr a Log keeps in memory.
const StderrRetained = 1 << 20

// Budget bounds the frames a Log keeps whole. Past Bytes, a frame that Keep does not ask for
// is folded: counted (by Label), its size added, its content dropped; consecutive folded
// frames share one Folded frame. Frames Keep asks for are kept whole up to twice Bytes, then
// folded too. Observers always see every frame whole.
type Budget struct {
	// Bytes is how many bytes of frames the log keeps whole; 0 means no bound, KeepNone that
	// no frame is kept (the log only counts: a session that only observers read, such as a
	// transcript streamed to disk or a live judge).
	Bytes int64
	// Keep reports the frames a report cannot do without (answers to the client's requests,
	// events); nil keeps none beyond Bytes.
	Keep func(Frame) bool
	// Label names what a folded frame counts as (nil: its direction and method).
	Label func(Frame) string
}

// KeepNone is the Budget.Bytes of a log that keeps no frame whole.
const KeepNone = -1

// frameOverhead is what a kept frame costs besides its bytes (the Frame, its decoded
// message), for the budget's accounting.
const frameOverhead = 256

// maxFoldedLabels bounds the distinct labels one folded run counts; the rest count as
// FoldedOther.
const maxFoldedLabels = 64

// FoldedOther is the label folded frames count under once a run has maxFoldedLabels labels.
const FoldedOther = "(other)"

// Folded summarises a run of frames a Log did not keep whole.
type Folded struct {
	LastSeq int64 `json:"lastSeq"`
	Frames  int64 `json:"frames"`
	Bytes   int64 `json:"bytes"`
	// Counts counts the frames by label (Budget.Label).
	Counts map[string]int64 `json:"counts"`
	// StderrBytes is how many stderr bytes the run held; StderrTail their last
	// StderrTailSize bytes.
	StderrBytes int64  `json:"stderrBytes,omitempty"`
	StderrTail  []byte `json:"-"`
}

// StderrTailSize is how many bytes of stderr a folded run keeps.
const StderrTailSize = 64 << 10

// SetFilter makes every frame pass through fn before it is stored or observed (redaction).
// fn may change Raw; Msg is decoded afterwards from what fn returns.
func (l *Log) SetFilter(fn func(Frame) Frame) {
	l.mu.Lock()
	l.filter = fn
	l.mu.Unlock()
}

// SetBudget bounds what the log keeps from now on.
func (l *Log) SetBudget(b Budget) {
	l.mu.Lock()
	l.budget = b
	l.mu.Unlock()
}

// NewLog starts an empty log whose clock starts now.
func NewLog() *Log { return &Log{start: time.Now(), folded: -1} }

// Start is the wall-clock time the log started.
func (l *Log) Start() time.Time { return l.start }

// Since returns the time elapsed since the log started, on the monotonic clock.
func (l *Log) Since() time.Duration { return time.Since(l.start) }

// Observe registers fn to be called, in order, with every frame appended from now on, until
// stop is called. fn runs while the log is locked, so it must not call back into the log.
func (l *Log) Observe(fn func(Frame)) (stop func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	o := &observer{fn: fn}
	l.observers = append(l.observers, o)
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.observers = slices.DeleteFunc(l.observers, func(x *observer) bool { return x == o })
	}
}

// observer is one Observe registration (a pointer, so that stop removes exactly it).
type observer struct{ fn func(Frame) }

// Append stamps f with the next sequence number and the current time, decodes client and agent
// lines, stores it (or folds it, over the budget), and returns the frame as observed. The log
// keeps f.Raw itself (the decoded message aliases it): the caller must not change it after.
func (l *Log) Append(f Frame) Frame {
	f, copied := l.prepare(f)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	f.Seq = l.seq
	f.At = l.Since() // under the lock, so At never goes backwards along Seq
	l.store(f, copied)
	return f
}

// AppendRecorded stores a frame read back from a recording, keeping its Seq and At (a
// transcript's). It is decoded and budgeted like a live one.
func (l *Log) AppendRecorded(f Frame) Frame {
	f, copied := l.prepare(f)
	l.mu.Lock()
	defer l.mu.Unlock()
	if f.Seq <= l.seq {
		f.Seq = l.seq + 1
	}
	l.seq = f.Seq
	l.store(f, copied)
	return f
}

// prepare filters and decodes f; copied is how many bytes its message holds besides Raw.
func (l *Log) prepare(f Frame) (_ Frame, copied int) {
	l.mu.Lock()
	filter := l.filter
	l.mu.Unlock()
	if filter != nil {
		f = filter(f)
	}
	if (f.Dir == DirClient || f.Dir == DirAgent) && !f.Oversize && f.Msg == nil && f.DecodeErr == nil {
		// The message's values alias Raw, which the log keeps: a kept frame costs its line
		// once, as the budget counts it.
		f.Msg, copied, f.DecodeErr = decode(f.Raw, true)
	}
	if f.Size == 0 {
		f.Size = int64(len(f.Raw))
	}
	return f, copied
}

// store keeps or folds f, whose message holds copied bytes besides Raw; the log is locked.
func (l *Log) store(f Frame, copied int) {
	for _, o := range l.observers {
		o.fn(f)
	}
	cost := int64(len(f.Raw)+copied) + frameOverhead
	b := l.budget
	over := b.Bytes < 0 || (b.Bytes > 0 && l.kept+cost > b.Bytes)
	if over && (b.Keep == nil || !b.Keep(f) || b.Bytes < 0 || l.kept+cost > 2*b.Bytes) {
		l.fold(f)
		return
	}
	l.kept += cost
	l.folded = -1
	l.frames = append(l.frames, f)
	if f.Dir == DirStderr {
		l.retainStderr(len(l.frames) - 1)
	}
}

// fold adds f to the open folded run, or starts one.
func (l *Log) fold(f Frame) {
	if l.folded < 0 {
		l.frames = append(l.frames, Frame{Seq: f.Seq, Dir: DirFolded, At: f.At, Folded: &Folded{Counts: map[string]int64{}}})
		l.folded = len(l.frames) - 1
	}
	run := l.frames[l.folded].Folded
	run.LastSeq = f.Seq
	run.Frames++
	run.Bytes += f.Size
	label := l.label(f)
	if _, ok := run.Counts[label]; !ok && len(run.Counts) >= maxFoldedLabels {
		label = FoldedOther
	}
	run.Counts[label]++
	if f.Dir == DirStderr {
		run.StderrBytes += int64(len(f.Raw))
		run.StderrTail = append(run.StderrTail, f.Raw...)
		if over := len(run.StderrTail) - StderrTailSize; over > 0 {
			run.StderrTail = append(run.StderrTail[:0], run.StderrTail[over:]...)
		}
	}
}

func (l *Log) label(f Frame) string {
	if l.budget.Label != nil {
		return l.budget.Label(f)
	}
	if f.Msg != nil && f.Msg.Method != "" {
		return string(f.Dir) + " " + f.Msg.Method
	}
	return string(f.Dir)
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

// Frames returns a copy of the frames recorded so far, in order (folded runs included).
func (l *Log) Frames() []Frame {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]Frame(nil), l.frames...)
	if l.folded >= 0 { // the open run may still grow: hand out a copy
		run := *out[l.folded].Folded
		run.Counts = maps.Clone(run.Counts)
		run.StderrTail = append([]byte(nil), run.StderrTail...)
		out[l.folded].Folded = &run
	}
	return out
}

// stderrCarryMax bounds the stderr bytes AppendStderr holds back waiting for the end of a
// line; stderrCarryHard is where it cuts a stream that never ends a line or a word.
const (
	stderrCarryMax  = 4 << 10
	stderrCarryHard = 64 << 10
)

// AppendStderr records a chunk of the agent's stderr as one stream: a chunk is cut after its
// last newline and the rest is held back until the next chunk (or FlushStderr), so that a
// line, and a secret in it, is never split across two frames where redaction could not see it
// whole. A line longer than 4 KiB is cut after its last space or quote; one without either
// at 64 KiB.
func (l *Log) AppendStderr(p []byte) {
	l.stderrMu.Lock()
	defer l.stderrMu.Unlock()
	buf := append(l.stderrCarry, p...)
	cut := bytes.LastIndexByte(buf, '\n') + 1
	if cut == 0 && len(buf) > stderrCarryMax {
		cut = bytes.LastIndexAny(buf, " \t\"'") + 1
		if cut == 0 && len(buf) > stderrCarryHard {
			cut = len(buf)
		}
	}
	chunk := append([]byte(nil), buf[:cut]...)
	l.stderrCarry = append([]byte(nil), buf[cut:]...)
	if len(chunk) > 0 {
		l.Append(Frame{Dir: DirStderr, Raw: chunk})
	}
}

// FlushStderr records what AppendStderr still holds back (at the end of the stream).
func (l *Log) FlushStderr() {
	l.stderrMu.Lock()
	defer l.stderrMu.Unlock()
	rest := l.stderrCarry
	l.stderrCarry = nil
	if len(rest) > 0 {
		l.Append(Frame{Dir: DirStderr, Raw: rest})
	}
}
