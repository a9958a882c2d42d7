package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

const grace = 300 * time.Millisecond

func launch(t *testing.T, c transport.Command) transport.Agent {
	t.Helper()
	a, err := c.Launch(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Shutdown(context.Background(), transport.Patient(grace)) })
	return a
}

// readAll drains the agent's stdout on a goroutine and returns a channel with everything read.
func readAll(a transport.Agent) <-chan string {
	ch := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(a.Stdout())
		ch <- string(b)
	}()
	return ch
}

func sh(script string) transport.Command {
	return transport.Command{Argv: []string{"/bin/sh", "-c", script}}
}

func TestExitsWhenStdinCloses(t *testing.T) {
	a := launch(t, transport.Command{Argv: []string{"cat"}})
	out := readAll(a)
	if _, err := a.Stdin().Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	x := a.Shutdown(context.Background(), transport.Patient(5*time.Second))
	if x.By != "stdin" || x.Code == nil || *x.Code != 0 || x.AfterStdinCloseMs == nil || x.GroupKilled {
		t.Fatalf("exit = %+v", x)
	}
	if got := <-out; got != "hello\n" {
		t.Errorf("stdout = %q", got)
	}
	if transport.GroupAlive(a.PID()) {
		t.Error("group alive")
	}
}

func TestSigtermWhenStdinIgnored(t *testing.T) {
	a := launch(t, transport.Command{Argv: []string{"sleep", "30"}})
	x := a.Shutdown(context.Background(), transport.Patient(grace))
	if x.By != "sigterm" || x.Signal != "SIGTERM" || x.Code != nil || x.AfterStdinCloseMs != nil {
		t.Fatalf("exit = %+v", x)
	}
}

func TestSigkillWhenSigtermIgnored(t *testing.T) {
	// The trap makes SIGTERM ignored in the shell and in what it starts.
	a := launch(t, sh(`trap "" TERM; echo ready; while :; do sleep 1; done`))
	buf := make([]byte, 6)
	if _, err := io.ReadFull(a.Stdout(), buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("read %q %v", buf, err)
	}
	x := a.Shutdown(context.Background(), transport.Patient(grace))
	if x.By != "sigkill" || x.Signal != "SIGKILL" {
		t.Fatalf("exit = %+v", x)
	}
	if transport.GroupAlive(a.PID()) {
		t.Error("group alive after SIGKILL")
	}
}

// A child that ends a moment after the agent, on the SIGTERM the group got, is no survivor:
// what is reported is what was still running SurvivorSettle after that SIGTERM (claude-agent-acp
// 0.101.0's Claude CLI, when it ends on it, ends within 40 ms; the child here 100 ms after).
func TestChildEndingWithItsParentIsNoSurvivor(t *testing.T) {
	a := launch(t, sh(`(trap 'sleep 0.1; exit 0' TERM; echo ready; while :; do sleep 0.01; done) & read -r _; wait`))
	buf := make([]byte, 6)
	if _, err := io.ReadFull(a.Stdout(), buf); err != nil || string(buf) != "ready\n" {
		t.Fatalf("read %q %v", buf, err)
	}
	x := a.Shutdown(context.Background(), transport.Ladder{Grace: grace})
	if x.GroupKilled || len(x.Survivors) != 0 {
		t.Errorf("exit = %+v, want no survivor: the child ended 100 ms after its parent, on the group's SIGTERM", x)
	}
	if transport.GroupAlive(a.PID()) {
		t.Error("group alive after the teardown")
	}
}

// A child that ignores SIGTERM outlives its agent: it is a survivor, reported and killed after
// the settle window, and gets none of the agent's grace, whether the ladder signalled the group
// (the agent left on SIGTERM, as claude-agent-acp 0.101.0 does while its Claude CLI stays) or
// not (the agent left when its stdin closed). Before, the teardown gave it the whole grace
// again: 2 s on every probe of claude-agent-acp, 20 s here.
func TestSurvivorGetsNoGrace(t *testing.T) {
	const long = 20 * time.Second
	const child = `(trap "" TERM; echo ready; while :; do sleep 1; done) & `
	for _, tc := range []struct {
		name   string
		agent  string // what the agent does after starting its child
		ladder transport.Ladder
		by     record.ExitCause
	}{
		// Deaf to its stdin's end, so that it leaves on the SIGTERM whatever the load (one
		// that left on EOF raced the ladder's SIGTERM, which comes right after).
		{"agent left on SIGTERM", `trap 'exit 0' TERM; while :; do sleep 0.05; done`, transport.Ladder{Grace: long}, record.ExitSigterm},
		{"agent left on stdin close", `read -r _; exit 0`, transport.Patient(long), record.ExitStdin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := launch(t, sh(child+tc.agent))
			buf := make([]byte, 6)
			if _, err := io.ReadFull(a.Stdout(), buf); err != nil || string(buf) != "ready\n" {
				t.Fatalf("read %q %v", buf, err)
			}
			readAll(a) // a reader, as the probe has: the drain then ends at the pipe's EOF
			start := time.Now()
			x := a.Shutdown(context.Background(), tc.ladder)
			took := time.Since(start)
			if x.By != tc.by || !x.GroupKilled || len(x.Survivors) == 0 || !x.Survivors[0].Killed {
				t.Errorf("exit = %+v, want by %s, the child a killed survivor", x, tc.by)
			}
			if took >= long/4 {
				t.Errorf("teardown took %v with a grace of %v: the survivor was given the grace", took, long)
			}
			if transport.GroupAlive(a.PID()) {
				t.Error("group alive after the teardown")
			}
		})
	}
}

func TestGrandchildKeepingStdoutOpen(t *testing.T) {
	a := launch(t, sh(`sleep 30 & echo started; exit 0`))
	out := readAll(a)
	<-a.Exited()
	if x := a.Exit(); x.By != "self" || x.Code == nil || *x.Code != 0 {
		t.Fatalf("exit before teardown = %+v", x)
	}
	if !transport.GroupAlive(a.PID()) {
		t.Fatal("the grandchild should still be alive before teardown")
	}
	x := a.Shutdown(context.Background(), transport.Patient(grace))
	// The grandchild may not have exec'd sleep yet: its command is not asserted.
	if !x.GroupKilled || len(x.Survivors) != 1 || x.Survivors[0].LeftGroup || !x.Survivors[0].Killed {
		t.Errorf("exit = %+v, want groupKilled and the grandchild listed", x)
	}
	if transport.GroupAlive(a.PID()) {
		t.Error("grandchild survived teardown")
	}
	if got := <-out; got != "started\n" {
		t.Errorf("stdout = %q", got)
	}
}

// A process that leaves the group (setsid) cannot be signalled through it: it is found by its
// marker, killed, and does not keep the probe waiting on the stdout it holds.
func TestEscapedProcessDoesNotBlockTeardown(t *testing.T) {
	dir := t.TempDir()
	c := sh(`setsid sh -c 'echo $$ > pid.tmp; mv pid.tmp pid; exec sleep 30' & while [ ! -f pid ]; do :; done; exit 0`)
	c.Dir = dir
	a := launch(t, c)
	out := readAll(a)
	<-a.Exited()
	pidText, err := os.ReadFile(dir + "/pid")
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err != nil {
		t.Fatalf("escaped pid: %q", pidText)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	x := a.Shutdown(context.Background(), transport.Patient(grace))
	if x.By != "self" || len(x.Survivors) != 1 || x.Survivors[0].PID != pid || !x.Survivors[0].LeftGroup || !x.Survivors[0].Killed {
		t.Errorf("exit = %+v, want the escaped %d killed", x, pid)
	}
	select {
	case <-out:
	case <-time.After(10 * time.Second):
		t.Fatal("stdout reader still blocked after Shutdown")
	}
}

func TestStderrTailKeepsTheEnd(t *testing.T) {
	a := launch(t, sh(`head -c 200000 /dev/zero | tr '\0' a >&2; echo END >&2`))
	<-a.Exited()
	a.Shutdown(context.Background(), transport.Patient(grace))
	tail := a.StderrTail()
	if len(tail) != record.DefaultStderrTail || !bytes.HasSuffix(tail, []byte("aaaEND\n")) {
		t.Errorf("tail: %d bytes, ends %q", len(tail), tail[max(0, len(tail)-10):])
	}
	if a.StderrBytes() != 200004 {
		t.Errorf("stderr bytes = %d", a.StderrBytes())
	}
}

func TestEnvMergedAndDir(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("ACPPROBE_INHERITED", "inherited")
	t.Setenv("ACPPROBE_REPLACED", "old")
	c := sh(`echo "$ACPPROBE_INHERITED $ACPPROBE_REPLACED $ACPPROBE_ADDED $(pwd)"`)
	c.Env = []string{"ACPPROBE_REPLACED=new", "ACPPROBE_ADDED=added"}
	c.Dir = dir
	a := launch(t, c)
	out := readAll(a)
	a.Shutdown(context.Background(), transport.Patient(5*time.Second))
	if got, want := <-out, "inherited new added "+dir+"\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Environ replaces this process's environment as the base (a sandbox's reduced one): nothing
// of ours leaks through, Env still merges over it, the run marker is added; Prepare sees the
// finished command and may change it before it starts.
func TestEnvironAndPrepare(t *testing.T) {
	t.Setenv("ACPPROBE_LEAK", "from-host")
	c := sh(`echo "[$ACPPROBE_LEAK] $ACPPROBE_BASE $ACPPROBE_ADDED $ACPPROBE_PREPARED ${ACPPROBE_RUN:+marked}"`)
	c.Environ = []string{"PATH=" + os.Getenv("PATH"), "ACPPROBE_BASE=base"}
	c.Env = []string{"ACPPROBE_ADDED=added"}
	var seen []string
	c.Prepare = func(cmd *exec.Cmd) error {
		seen = slices.Clone(cmd.Env)
		cmd.Env = append(cmd.Env, "ACPPROBE_PREPARED=prepared")
		return nil
	}
	a := launch(t, c)
	out := readAll(a)
	a.Shutdown(context.Background(), transport.Patient(5*time.Second))
	if got, want := <-out, "[] base added prepared marked\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !slices.Contains(seen, "ACPPROBE_BASE=base") || slices.ContainsFunc(seen, func(kv string) bool { return strings.HasPrefix(kv, "ACPPROBE_LEAK=") }) {
		t.Errorf("Prepare saw %q", seen)
	}
	c.Prepare = func(*exec.Cmd) error { return errors.New("no namespaces here") }
	if _, err := c.Launch(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "no namespaces here") {
		t.Errorf("a failing Prepare: %v", err)
	}
}

func TestLaunchErrors(t *testing.T) {
	if _, err := (transport.Command{}).Launch(context.Background(), nil); err == nil {
		t.Error("empty command launched")
	}
	_, err := transport.Command{Argv: []string{"/nonexistent/agent"}}.Launch(context.Background(), nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "/nonexistent/agent") {
		t.Errorf("err = %v", err)
	}
	_, err = transport.Command{Argv: []string{"cat"}, Dir: "/nonexistent/dir"}.Launch(context.Background(), nil)
	if err == nil {
		t.Error("bad dir accepted")
	}
}

func TestMergeEnv(t *testing.T) {
	got := transport.MergeEnv([]string{"A=1", "B=2", "C=3=4"}, []string{"B=x", "D="})
	want := []string{"A=1", "C=3=4", "B=x", "D="}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v want %v", got, want)
	}
}

func TestPipeAgent(t *testing.T) {
	echo := transport.Pipe{Name: "echo", Serve: func(ctx context.Context, in io.Reader, out, errw io.Writer) error {
		io.WriteString(errw, "serving\n")
		_, err := io.Copy(out, in)
		return err
	}}
	a, err := echo.Launch(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := readAll(a)
	a.Stdin().Write([]byte("ping\n"))
	x := a.Shutdown(context.Background(), transport.Patient(time.Second))
	if x.By != "stdin" || x.Code == nil || *x.Code != 0 {
		t.Errorf("exit = %+v", x)
	}
	if got := <-out; got != "ping\n" {
		t.Errorf("out = %q", got)
	}
	if string(a.StderrTail()) != "serving\n" || a.PID() != 0 || a.Scope() != (transport.Scope{}) {
		t.Errorf("stderr %q pid %d", a.StderrTail(), a.PID())
	}
	if got := echo.CommandLine(); len(got) != 1 || got[0] != "pipe:echo" {
		t.Errorf("command line %v", got)
	}
}

type exitCode int

func (e exitCode) Error() string { return "exit" }
func (e exitCode) ExitCode() int { return int(e) }

func TestPipeAgentLadder(t *testing.T) {
	// Honours its context: ends at the "sigterm" step with the code it returns.
	ctxAware := transport.Pipe{Serve: func(ctx context.Context, in io.Reader, out, errw io.Writer) error {
		<-ctx.Done()
		return exitCode(143)
	}}
	a, _ := ctxAware.Launch(context.Background(), nil)
	if x := a.Shutdown(context.Background(), transport.Patient(50*time.Millisecond)); x.By != "sigterm" || *x.Code != 143 {
		t.Errorf("ctx-aware exit = %+v", x)
	}
	// Ignores everything but its pipes: ends at the "sigkill" step when they break.
	block := make(chan struct{})
	defer close(block)
	stubborn := transport.Pipe{Serve: func(ctx context.Context, in io.Reader, out, errw io.Writer) error {
		_, err := in.Read(make([]byte, 1)) // fails once the pipe is broken
		<-block
		return err
	}}
	a, _ = stubborn.Launch(context.Background(), nil)
	if x := a.Shutdown(context.Background(), transport.Patient(50*time.Millisecond)); x.By != "sigkill" || x.Signal != "SIGKILL" {
		t.Errorf("stubborn exit = %+v", x)
	}
}
