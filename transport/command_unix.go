//go:build unix

package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"golang.org/x/sys/unix"
)

// Command launches an agent as a child process in a session of its own (see the package doc).
type Command struct {
	Argv []string // program and arguments; the program is looked up on PATH
	Dir  string   // working directory; the caller's when empty
	// Env holds KEY=VALUE pairs merged over the base environment (a key given here replaces
	// the inherited value).
	Env []string
	// Environ, when not nil, is the whole base environment instead of this process's own (a
	// sandbox's reduced one); Env is merged over it, and the run marker is always added.
	Environ []string
	// Prepare, when set, adjusts the command after its environment, directory and process
	// attributes are set and before it starts (a sandbox's network level re-executes it
	// in new namespaces there).
	Prepare func(*exec.Cmd) error
	// StderrTail is how many trailing stderr bytes to keep (record.DefaultStderrTail when 0).
	StderrTail int
}

// CommandLine returns the argv.
func (c Command) CommandLine() []string { return append([]string(nil), c.Argv...) }

// Launch starts the process. The error wraps the exec error (program not found, not
// executable, bad working directory).
func (c Command) Launch(ctx context.Context, stderr io.Writer) (Agent, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, errors.New("empty command")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	marker := newMarker()
	// The markers this host inherited come from its own environment, whatever the agent's
	// is made of (a sandbox filters it); ours comes last: exec.Cmd keeps the last value of a
	// key given twice, so transport owns the variable.
	base := c.Environ
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(MergeEnv(base, c.Env), markerEntry(os.Environ(), marker))
	cmd.SysProcAttr = newProcAttr()
	cgroup, containment, release := contain(cmd)
	defer release()
	fail := func(err error) (Agent, error) {
		if cgroup != "" {
			_ = removeCgroup(cgroup, time.Now())
		}
		return nil, err
	}
	if c.Prepare != nil {
		if err := c.Prepare(cmd); err != nil {
			return fail(fmt.Errorf("prepare %s: %w", c.Argv[0], err))
		}
	}

	var parentEnds, childEnds []*os.File
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		return r, w, err
	}
	stdinR, stdinW, err := pipe()
	if err != nil {
		return fail(err)
	}
	stdoutR, stdoutW, err := pipe()
	if err != nil {
		closeAll([]*os.File{stdinR, stdinW})
		return fail(err)
	}
	stderrR, stderrW, err := pipe()
	if err != nil {
		closeAll([]*os.File{stdinR, stdinW, stdoutR, stdoutW})
		return fail(err)
	}
	parentEnds = []*os.File{stdinW, stdoutR, stderrR}
	childEnds = []*os.File{stdinR, stdoutW, stderrW}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW

	forks := beforeLaunch()
	// The watchdog knows the launch before the agent exists: an agent that stops the host at
	// once is held to the run's end (ctx's deadline) all the same.
	deadline, _ := ctx.Deadline()
	unwatch := watchLaunch(marker, deadline, cgroup)
	if err := cmd.Start(); err != nil {
		unwatch()
		closeAll(parentEnds)
		closeAll(childEnds)
		return fail(fmt.Errorf("start %s: %w", c.Argv[0], err))
	}
	closeAll(childEnds)
	pid := cmd.Process.Pid
	addOwnChild(pid)

	tailSize := c.StderrTail
	if tailSize <= 0 {
		tailSize = record.DefaultStderrTail
	}
	p := &Process{
		lifecycle: newLifecycle(),
		cmd:       cmd,
		pid:       pid,
		scope:     Scope{Marker: marker, Leader: pid, since: afterLaunch(pid), forks: forks, cgroup: cgroup},
		unwatch:   unwatch,
		stdin:     stdinW,
		stdout:    &eofReader{f: stdoutR, eof: make(chan struct{})},
		stderrR:   stderrR,
		tail:      record.NewTailBuffer(tailSize),
		stderrEOF: make(chan struct{}),
	}
	p.exit.Containment = &containment
	var sink io.Writer = p.tail
	if stderr != nil {
		sink = io.MultiWriter(p.tail, stderr)
	}
	go func() {
		_, _ = io.Copy(sink, stderrR)
		close(p.stderrEOF)
	}()
	go p.wait()
	return p, nil
}

// MergeEnv returns base with each KEY=VALUE of overlay replacing or adding its key.
func MergeEnv(base, overlay []string) []string {
	keys := map[string]bool{}
	for _, kv := range overlay {
		k, _, _ := strings.Cut(kv, "=")
		keys[k] = true
	}
	out := make([]string, 0, len(base)+len(overlay))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !keys[k] {
			out = append(out, kv)
		}
	}
	return append(out, overlay...)
}

// Process is an agent running as a child process.
type Process struct {
	lifecycle
	cmd       *exec.Cmd
	pid       int
	scope     Scope
	stdin     *os.File
	stdout    *eofReader
	stderrR   *os.File
	tail      *record.TailBuffer
	stderrEOF chan struct{}
	unwatch   func() // tells the watchdog the launch is over
}

func (p *Process) wait() {
	_ = p.cmd.Wait()
	removeOwnChild(p.pid)
	state := p.cmd.ProcessState
	if state == nil { // the wait failed: someone else reaped the child (a wait(-1) elsewhere)
		code := -1
		p.finish(&code, "")
		return
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		p.finish(nil, signalName(ws.Signal()))
		return
	}
	code := state.ExitCode()
	p.finish(&code, "")
}

// Stdin is the agent's input.
func (p *Process) Stdin() io.WriteCloser { return p.stdin }

// Stdout is the agent's output.
func (p *Process) Stdout() io.Reader { return p.stdout }

// StderrTail returns the last bytes of stderr.
func (p *Process) StderrTail() []byte { return p.tail.Bytes() }

// StderrBytes is the total number of stderr bytes written.
func (p *Process) StderrBytes() int64 { return p.tail.Total() }

// PID is the process id, which is also the id of its process group and of its session.
func (p *Process) PID() int { return p.pid }

// Scope names the agent's other processes, for Sweep and Kill: those carrying its marker,
// and those in its group or session.
func (p *Process) Scope() Scope { return p.scope }

// Shutdown runs the teardown ladder (see Ladder) on the process group. Then everything of
// the agent still alive (its scope) SurvivorSettle after it is a survivor: what is left of its
// group gets SIGTERM (unless the ladder signalled it already) and one more settle window,
// never the grace, then everything in scope, setsid escapes included, gets SIGKILL;
// Exit.Survivors lists them. Finally the output pipes are closed once drained, or after the
// grace if a process that could not be killed still holds them.
func (p *Process) Shutdown(ctx context.Context, l Ladder) record.ExitInfo {
	p.shutdownOnce.Do(func() { p.shutdown(ctx, l.withDefaults()) })
	return p.Exit()
}

func (p *Process) shutdown(ctx context.Context, l Ladder) {
	p.ladder(ctx, l, processStopper{p})
	p.stdin.Close()
	p.cleanUp(ctx, l.Grace)
	if p.scope.cgroup != "" {
		dropLaunchCgroup(p.scope.cgroup, l.Grace)
	}
	p.unwatch()
	// Let the readers drain what the agent wrote before it went, then cut the pipes.
	drained := make(chan struct{})
	go func() {
		<-p.stdout.eof
		<-p.stderrEOF
		close(drained)
	}()
	waitOrDone(ctx, drained, l.Grace)
	p.stdout.f.Close()
	p.stderrR.Close()
}

// processStopper signals the agent's process group. While the agent is not reaped, its
// pid cannot be reused, so the group id names its group.
type processStopper struct{ p *Process }

func (s processStopper) closeStdin()    { s.p.stdin.Close() }
func (s processStopper) endedNow() bool { return exitedNow(s.p.pid) }
func (s processStopper) terminate()     { _ = syscall.Kill(-s.p.pid, syscall.SIGTERM) }
func (s processStopper) kill(time.Duration) {
	_ = syscall.Kill(-s.p.pid, syscall.SIGKILL) // the kernel ends it: exec.Cmd.Wait returns
}

// eofReader marks when its file reached the end (or failed).
type eofReader struct {
	f    *os.File
	eof  chan struct{}
	once sync.Once
}

func (r *eofReader) Read(b []byte) (int, error) {
	n, err := r.f.Read(b)
	if err != nil {
		r.once.Do(func() { close(r.eof) })
	}
	return n, err
}

// signalName is the conventional name of a signal ("SIGTERM", "SIGUSR1"), or "signal N" for
// one the system does not name.
func signalName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(s))
}
