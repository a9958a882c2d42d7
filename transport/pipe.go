package transport

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
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
	a := &pipeAgent{stdin: inW, stdinR: inR, stdout: outR, cancel: cancel, tail: NewTailBuffer(DefaultStderrTail), exited: make(chan struct{})}
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

type pipeAgent struct {
	stdin  *io.PipeWriter
	stdinR *io.PipeReader
	stdout *io.PipeReader
	cancel context.CancelFunc
	tail   *TailBuffer
	exited chan struct{}

	mu         sync.Mutex
	step       string
	stdinClose time.Time
	exit       Exit
	once       sync.Once
	finishOnce sync.Once
}

// finish records the end of the agent once: when Serve returns, or when a shutdown gives up
// on a Serve that ignores both its context and its broken pipes.
func (a *pipeAgent) finish(code *int, signal string) {
	a.finishOnce.Do(func() {
		a.mu.Lock()
		a.exit.Code, a.exit.Signal = code, signal
		a.exit.By = a.step
		if a.exit.By == "" {
			a.exit.By = "self"
		}
		if a.exit.By == "stdin" {
			a.exit.AfterStdinCloseMs = msSince(a.stdinClose)
		}
		a.mu.Unlock()
		close(a.exited)
	})
}

func (a *pipeAgent) Stdin() io.WriteCloser   { return a.stdin }
func (a *pipeAgent) Stdout() io.Reader       { return a.stdout }
func (a *pipeAgent) Exited() <-chan struct{} { return a.exited }
func (a *pipeAgent) StderrTail() []byte      { return a.tail.Bytes() }
func (a *pipeAgent) StderrBytes() int64      { return a.tail.Total() }
func (a *pipeAgent) PID() int                { return 0 }

func (a *pipeAgent) Exit() Exit {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.exit
}

func (a *pipeAgent) setStep(s string) {
	a.mu.Lock()
	a.step = s
	if s == "stdin" {
		a.stdinClose = time.Now()
	}
	a.mu.Unlock()
}

// Shutdown closes stdin, then cancels the agent's context ("sigterm"), then breaks its pipes
// ("sigkill"): a goroutine cannot be killed, but it can no longer read or write.
func (a *pipeAgent) Shutdown(ctx context.Context, grace time.Duration) Exit {
	a.once.Do(func() {
		if grace <= 0 {
			grace = DefaultGrace
		}
		select {
		case <-a.exited:
			return
		default:
		}
		a.setStep("stdin")
		a.stdin.Close()
		if waitOrDone(ctx, a.exited, grace) {
			return
		}
		a.setStep("sigterm")
		a.cancel()
		if waitOrDone(ctx, a.exited, grace) {
			return
		}
		a.setStep("sigkill")
		a.stdinR.CloseWithError(errKilled)
		a.stdout.CloseWithError(errKilled)
		if !waitOrDone(context.Background(), a.exited, grace) {
			a.finish(nil, "SIGKILL")
		}
	})
	a.cancel()
	return a.Exit()
}

var errKilled = errors.New("agent killed")
