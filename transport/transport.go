package transport

import (
	"context"
	"io"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// DefaultGrace is how long each step of the teardown ladder waits for the agent to go.
const DefaultGrace = 2 * time.Second

// Ladder is how patient a teardown is.
type Ladder struct {
	// StdinWait is how long the agent may take to leave by itself after its stdin is closed,
	// before it is signalled. 0 signals at once, as real clients do.
	StdinWait time.Duration
	// Grace is how long the agent's SIGTERM may take before SIGKILL; DefaultGrace when 0. What
	// outlives the agent gets SurvivorSettle (or Grace, when shorter), never the whole Grace.
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
	Shutdown(ctx context.Context, l Ladder) record.ExitInfo
	// Exit is how the agent ended; zero until Exited is closed.
	Exit() record.ExitInfo
	// PID is the agent's process id (and process group id); 0 for an in-memory agent.
	PID() int
	// Scope names the agent's other processes, for Sweep and Kill at any moment; the zero
	// Scope (none) for an in-memory agent.
	Scope() Scope
}

// SurvivorSettle is how long the sweep after the ladder lets the agent's other processes (in
// its group or escaped from it) end by themselves before it signals them and reports them as
// survivors: counted from the group's SIGTERM when the ladder sent one (they got it with the
// agent), else from the agent's end. 150 ms: a child ending with its parent ends within
// 40 ms (claude-agent-acp 0.101.0's Claude CLI, half of its probes; the other half it stays
// 1.3 s, and 250 ms of waiting made its default probe 1.4x the floor), and the tests' children
// 100 ms after.
const SurvivorSettle = 150 * time.Millisecond

func msSince(t time.Time) *float64 {
	ms := float64(time.Since(t).Microseconds()) / 1000
	return &ms
}
