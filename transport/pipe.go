package transport

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// ServeFunc is an in-memory agent: it reads the client's lines from stdin and writes its own
// to stdout until stdin ends or ctx is cancelled. Returning an error that has an ExitCode()
// int method sets the exit code (any other error is exit code 1).
type ServeFunc func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error

// Pipe launches an in-memory agent connected by io.Pipe pairs: the same Agent surface as a
// Command, without a process, for tests and examples.
type Pipe struct {
	Name  string
	Serve ServeFunc
}

// CommandLine names the in-memory agent.
func (p Pipe) CommandLine() []string { return []string{"pipe:" + p.Name} }

// Launch starts Serve on its own goroutine.
func (p Pipe) Launch(ctx context.Context, stderr io.Writer) (Agent, error) {
	if p.Serve == nil {
		return nil, errors.New("pipe: no Serve function")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	serveCtx, cancel := context.WithCancel(context.Background())
	a := &pipeAgent{lifecycle: newLifecycle(), stdin: inW, stdinR: inR, stdout: outR, cancel: cancel, tail: record.NewTailBuffer(record.DefaultStderrTail)}
	var errw io.Writer = a.tail
	if stderr != nil {
		errw = io.MultiWriter(a.tail, stderr)
	}
	go func() {
		err := p.Serve(serveCtx, inR, outW, errw)
		outW.Close()
		inR.Close()
		code := 0
		var coder interface{ ExitCode() int }
		switch {
		case errors.As(err, &coder):
			code = coder.ExitCode()
		case err != nil:
			code = 1
		}
		a.finish(&code, "")
	}()
	return a, nil
}

// pipeAgent is a running in-memory agent. Its "signals" are what a goroutine allows:
// SIGTERM cancels its context, SIGKILL breaks its pipes (it can no longer read or write),
// and an agent that ignores both is given up on after a grace and recorded as killed.
type pipeAgent struct {
	lifecycle
	stdin  *io.PipeWriter
	stdinR *io.PipeReader
	stdout *io.PipeReader
	cancel context.CancelFunc
	tail   *record.TailBuffer
}

func (a *pipeAgent) Stdin() io.WriteCloser { return a.stdin }
func (a *pipeAgent) Stdout() io.Reader     { return a.stdout }
func (a *pipeAgent) StderrTail() []byte    { return a.tail.Bytes() }
func (a *pipeAgent) StderrBytes() int64    { return a.tail.Total() }
func (a *pipeAgent) PID() int              { return 0 }
func (a *pipeAgent) Scope() Scope          { return Scope{} }

// Shutdown runs the ladder; see pipeAgent for what its signals are.
func (a *pipeAgent) Shutdown(ctx context.Context, l Ladder) record.ExitInfo {
	a.shutdownOnce.Do(func() { a.ladder(ctx, l.withDefaults(), pipeStopper{a}) })
	a.cancel()
	return a.Exit()
}

type pipeStopper struct{ a *pipeAgent }

func (s pipeStopper) closeStdin() { s.a.stdin.Close() }
func (s pipeStopper) terminate()  { s.a.cancel() }

func (s pipeStopper) endedNow() bool {
	select {
	case <-s.a.exited:
		return true
	default:
		return false
	}
}

func (s pipeStopper) kill(grace time.Duration) {
	s.a.stdinR.CloseWithError(errKilled)
	s.a.stdout.CloseWithError(errKilled)
	if !waitOrDone(context.Background(), s.a.exited, grace) {
		s.a.finish(nil, "SIGKILL")
	}
}

var errKilled = errors.New("agent killed")
