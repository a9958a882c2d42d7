package transport

import (
	"context"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// stopper is what the ladder does to one kind of agent at each step.
type stopper interface {
	closeStdin()
	// endedNow reports whether the agent has already ended, even if its end is not recorded
	// yet (a process that exited but is not reaped): the ladder then sends no signal, so that
	// Exit.By does not blame one.
	endedNow() bool
	terminate() // the SIGTERM step
	// kill is the SIGKILL step. The agent's end must be recorded soon after it returns; it
	// may take grace to make sure of that.
	kill(grace time.Duration)
}

// lifecycle is the state an agent shares with its ladder: the current step, when stdin was
// closed, and how the agent ended.
type lifecycle struct {
	exited chan struct{} // closed by finish

	mu         sync.Mutex
	step       record.ExitCause // "" (running), then the step the ladder has reached
	stdinClose time.Time        // when the ladder closed stdin
	terminated time.Time        // when the ladder sent the group SIGTERM (zero: it sent none)
	exit       record.ExitInfo

	finishOnce   sync.Once
	shutdownOnce sync.Once
}

func newLifecycle() lifecycle { return lifecycle{exited: make(chan struct{})} }

// Exited is closed when the agent has ended.
func (l *lifecycle) Exited() <-chan struct{} { return l.exited }

// Exit is how the agent ended (zero value while it runs).
func (l *lifecycle) Exit() record.ExitInfo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.exit
}

// finish records the end of the agent once, blaming the step the ladder had reached.
func (l *lifecycle) finish(code *int, signal string) {
	l.finishOnce.Do(func() {
		l.mu.Lock()
		l.exit.Code, l.exit.Signal = code, signal
		l.exit.By = l.step
		if l.exit.By == "" {
			l.exit.By = record.ExitSelf
		}
		if l.exit.By == record.ExitStdin {
			l.exit.AfterStdinCloseMs = msSince(l.stdinClose)
		}
		l.mu.Unlock()
		close(l.exited)
	})
}

func (l *lifecycle) setStep(step record.ExitCause) {
	l.mu.Lock()
	l.step = step
	switch step {
	case record.ExitStdin:
		l.stdinClose = time.Now()
	case record.ExitSigterm:
		l.terminated = time.Now()
	}
	l.mu.Unlock()
}

// settleDeadline is when what outlived the agent stops being given time to end by itself:
// settle after the group's SIGTERM when the ladder sent one (signalled; its children got it
// with the agent), else after now (the agent's end), and never sooner than a third of settle
// from now, so that an agent slow to leave on the SIGTERM still leaves its children a moment.
func (l *lifecycle) settleDeadline(settle time.Duration) (deadline time.Time, signalled bool) {
	l.mu.Lock()
	from := l.terminated
	l.mu.Unlock()
	now := time.Now()
	if from.IsZero() {
		return now.Add(settle), false
	}
	return later(from.Add(settle), now.Add(settle/3)), true
}

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ladder runs the teardown ladder (see Ladder) until the agent has ended. The step is set
// before each action, so the end is blamed on the last action taken before it.
func (l *lifecycle) ladder(ctx context.Context, ld Ladder, s stopper) {
	select {
	case <-l.exited:
		return
	default:
	}
	l.setStep(record.ExitStdin)
	s.closeStdin()
	left := waitOrDone(ctx, l.exited, ld.StdinWait) || s.endedNow()
	if ld.AfterStdin != nil {
		ld.AfterStdin(left)
	}
	if left {
		<-l.exited
		return
	}
	l.setStep(record.ExitSigterm)
	s.terminate()
	if waitOrDone(ctx, l.exited, ld.Grace) || s.endedNow() {
		<-l.exited
		return
	}
	l.setStep(record.ExitSigkill)
	s.kill(ld.Grace)
	<-l.exited
}

// waitOrDone waits for ch for at most d; it gives up early when ctx ends.
func waitOrDone(ctx context.Context, ch <-chan struct{}, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ch:
			return true
		case <-t.C:
		case <-ctx.Done():
		}
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
