package transport

import (
	"context"
	"io"
	"sync"
	"time"
)

// DefaultStderrTail is how many trailing bytes of stderr an agent keeps (64 KiB).
const DefaultStderrTail = 64 << 10

// DefaultGrace is how long each step of the teardown ladder waits for the agent to go.
const DefaultGrace = 2 * time.Second

// Ladder is how patient a teardown is.
type Ladder struct {
	// StdinWait is how long the agent may take to leave by itself after its stdin is closed,
	// before it is signalled. 0 signals at once, as real clients do.
	StdinWait time.Duration
	// Grace is how long SIGTERM may take before SIGKILL, and bounds the clean-up of what
	// outlives the agent; DefaultGrace when 0.
	Grace time.Duration
	// AfterStdin, when set, is called once the stdin step is over and before any signal: the
	// agent has left on its stdin EOF (left is true), or StdinWait has passed without it. The
	// caller may look at what is still running then (Sweep). It is not called when the agent
	// had ended before the teardown began.
	AfterStdin func(left bool)
}

// Patient is the ladder that gives the agent grace to leave after stdin closes, and grace
// again after SIGTERM.
func Patient(grace time.Duration) Ladder { return Ladder{StdinWait: grace, Grace: grace} }

func (l Ladder) withDefaults() Ladder {
	if l.StdinWait < 0 {
		l.StdinWait = 0
	}
	if l.Grace <= 0 {
		l.Grace = DefaultGrace
	}
	return l
}

// Launcher starts an agent.
type Launcher interface {
	// Launch starts the agent. ctx bounds the start only, not the agent's life. stderr, when
	// not nil, receives every chunk of the agent's stderr as it arrives (besides the tail the
	// Agent keeps).
	Launch(ctx context.Context, stderr io.Writer) (Agent, error)
	// CommandLine describes what is launched, for reports.
	CommandLine() []string
}

// Agent is a running agent: its stdin, its stdout, and its end.
type Agent interface {
	// Stdin is the agent's input; closing it is the first step of a graceful stop.
	Stdin() io.WriteCloser
	// Stdout is the agent's output.
	Stdout() io.Reader
	// Exited is closed when the agent has ended; Exit tells how.
	Exited() <-chan struct{}
	// StderrTail returns the last bytes of stderr (at most the configured tail size).
	StderrTail() []byte
	// StderrBytes is the total number of stderr bytes the agent wrote.
	StderrBytes() int64
	// Shutdown runs the teardown ladder and returns how the agent ended. It is idempotent and
	// always returns with nothing left running, whatever ctx says; ctx only shortens waits.
	Shutdown(ctx context.Context, l Ladder) Exit
	// Exit is how the agent ended; zero until Exited is closed.
	Exit() Exit
	// PID is the agent's process id (and process group id); 0 for an in-memory agent.
	PID() int
	// Scope names the agent's other processes, for Sweep and Kill at any moment; the zero
	// Scope (none) for an in-memory agent.
	Scope() Scope
}

// Exit records how an agent ended.
type Exit struct {
	Code   *int   `json:"code"`   // exit status when it exited by itself; nil when killed by a signal
	Signal string `json:"signal"` // the signal that ended it ("SIGTERM", "SIGKILL", …); "" otherwise
	// AfterStdinCloseMs is the time from closing stdin to exit when the agent left on its own
	// within the grace; nil when it had already exited before or needed a signal.
	AfterStdinCloseMs *float64 `json:"afterStdinCloseMs"`
	// By says what ended it: "self" (before teardown started), "stdin" (left after stdin was
	// closed), "sigterm", "sigkill".
	By string `json:"by"`
	// GroupKilled is true when processes of the agent's group outlived the agent and had to be
	// signalled.
	GroupKilled bool `json:"groupKilled,omitempty"`
	// Survivors are the processes of the agent (its marker, group or session) found alive after
	// the ladder, all of which were then killed.
	Survivors []Survivor `json:"survivors,omitempty"`
}

// Survivor is a process of an agent found alive when it should not be.
type Survivor struct {
	PID int `json:"pid"`
	// Command is the kernel's name for the program (at most 15 bytes).
	Command string `json:"command"`
	// Argv is the start of its command line: at most 8 arguments of at most 256 bytes.
	Argv []string `json:"argv,omitempty"`
	// LeftGroup is true when it had left the agent's process group (a setsid or setpgid escape).
	LeftGroup bool `json:"leftGroup"`
	// Found is when it was found.
	Found Moment `json:"found"`
	// Killed is true when it was seen gone after SIGKILL, within the bound.
	Killed bool `json:"killed"`
}

// Moment names when a sweep ran.
type Moment string

// The moments of a teardown at which the agent's other processes are looked for.
const (
	// AfterSessionClose: session/close was answered (a sweep of the caller's; nothing is
	// signalled).
	AfterSessionClose Moment = "after-session-close"
	// AfterStdin: the stdin step of the ladder is over (Ladder.AfterStdin; nothing is
	// signalled).
	AfterStdin Moment = "after-stdin"
	// AfterLadder is the sweep Shutdown runs once the agent has ended: what it finds is
	// killed (Exit.Survivors).
	AfterLadder Moment = "after-ladder"
)

// SurvivorSettle is how long the sweep after the ladder lets the agent's other processes (in
// its group or escaped from it) end by themselves before it signals them and reports them as
// survivors.
const SurvivorSettle = 250 * time.Millisecond

// Ended reports whether the exit has been recorded.
func (e Exit) Ended() bool { return e.By != "" }

// TailBuffer keeps the last N bytes written to it and counts everything. It is safe for
// concurrent use.
type TailBuffer struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

// NewTailBuffer keeps the last max bytes.
func NewTailBuffer(max int) *TailBuffer { return &TailBuffer{max: max} }

// Write appends p, dropping the oldest bytes beyond the limit. It never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	if over := len(t.buf) + len(p) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
	return len(p), nil
}

// Bytes returns a copy of the kept tail.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}

// Total is the number of bytes ever written.
func (t *TailBuffer) Total() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

func msSince(t time.Time) *float64 {
	ms := float64(time.Since(t).Microseconds()) / 1000
	return &ms
}
