//go:build linux

package transport_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/transport"
)

// The second hostile round: agents that know how acpprobe finds their processes (the run
// marker, the group, the session), that its host is their subreaper, that it has a watchdog,
// and that the host runs as their user.

// noCgroupEnv runs this test binary with the agents' cgroups turned off (the degraded path:
// a plain user without a delegated cgroup).
const noCgroupEnv = "TRANSPORT_TEST_NOCGROUP"

// hiders are daemons an agent leaves behind so that the marker, group and session sweep of
// the first round misses them: each double-forks (it is orphaned to the host, a subreaper),
// leaves the agent's session, and scrubs its environment (env -i: no run marker) or forges the
// marker, changes its command line, or enters new user and pid namespaces. Each prints the pid
// to watch; the last one's process is unshare, whose child runs in the namespaces.
var hiders = []struct {
	name, script, comm string
}{
	{"env -i", `(setsid env -i /bin/sh -c 'echo $$; exec sleep 300' &)`, "sleep"},
	{"forged marker", `(setsid env -i ` + transport.MarkerVar + `=0123456789abcdef.0123456789abcdef /bin/sh -c 'echo $$; exec sleep 300' &)`, "sleep"},
	{"argv changed", `(setsid env -i bash -c 'echo $$; exec -a innocent sleep 300' &)`, "sleep"},
	{"user and pid namespaces", `(setsid /bin/sh -c 'echo $$; exec env -i unshare --user --map-root-user --pid --fork sleep 300' &)`, "unshare"},
}

// Processes that survive the first round's sweep: each hider is found after the ladder,
// killed and reported (before, each outlived the probe, reported "none survived"). With
// cgroups the agent's cgroup holds them; without (TestHidingDaemonsWithoutCgroups) the
// process tree does: an orphan of the agent's is a child of the host that transport did not
// start.
func TestHidingDaemons(t *testing.T) {
	if on, why := transport.CgroupsAvailable(); !on {
		t.Logf("cgroups: none (%s): the process tree holds the agent's processes", why)
	}
	for _, h := range hiders {
		t.Run(h.name, func(t *testing.T) {
			if h.comm == "unshare" && exec.Command("unshare", "--user", "--map-root-user", "--pid", "--fork", "true").Run() != nil {
				t.Skip("no unprivileged user and pid namespaces here")
			}
			a := launch(t, sh(h.script+`; exec cat`))
			pid := readPID(t, bufio.NewReader(a.Stdout()))
			settled(t, pid, h.comm, os.Getpid()) // orphaned to this process, a subreaper
			fds := []int{pidfd(t, pid)}
			if h.comm == "unshare" {
				child := childOf(t, pid)
				fds = append(fds, pidfd(t, child))
			}
			x := a.Shutdown(context.Background(), transport.Patient(grace))
			found := false
			for _, s := range x.Survivors {
				found = found || s.PID == pid && s.Killed && s.LeftGroup
			}
			if !found {
				t.Errorf("the daemon %d is not among the survivors %+v", pid, x.Survivors)
			}
			if !ended(fds, 5*time.Second) {
				t.Errorf("the daemon %d (or its namespace's process) outlived the teardown", pid)
			}
			if x.Containment == nil {
				t.Error("the exit does not say what contained the agent")
			}
		})
	}
}

// The same hiders on the degraded path, in a test binary whose agents get no cgroup.
func TestHidingDaemonsWithoutCgroups(t *testing.T) {
	if os.Getenv(noCgroupEnv) != "" {
		t.Skip("this is the run without cgroups")
	}
	cmd := self(t, "")
	cmd.Args = append(cmd.Args, "-test.run", "^TestHidingDaemons$", "-test.count=1", "-test.v")
	cmd.Env = append(cmd.Env, noCgroupEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestHidingDaemons") || !strings.Contains(string(out), "cgroups: none") {
		t.Fatalf("without cgroups: %v\n%s", err, out)
	}
}

// childOf waits for pid's first child and returns it.
func childOf(t *testing.T, pid int) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
		if f := strings.Fields(string(b)); len(f) > 0 {
			child, _ := strconv.Atoi(f[0])
			return child
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d has no child", pid)
		}
		time.Sleep(time.Millisecond) // no event tells when a process has forked
	}
}

// hostRole is this test binary started in a role, with its stdout read line by line.
type hostRole struct {
	cmd   *exec.Cmd
	lines *bufio.Reader
	stdin io.WriteCloser
}

func startHost(t *testing.T, cmd *exec.Cmd) *hostRole {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return &hostRole{cmd: cmd, lines: bufio.NewReader(stdout), stdin: stdin}
}

// line reads the host's next line, failing past bound.
func (h *hostRole) line(t *testing.T, bound time.Duration) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() {
		l, _ := h.lines.ReadString('\n')
		ch <- strings.TrimSpace(l)
	}()
	select {
	case l := <-ch:
		return l
	case <-time.After(bound):
		_ = h.cmd.Process.Kill()
		t.Fatalf("the host said nothing within %s", bound)
	}
	return ""
}

// watchdogKiller is a host whose agent kills its watchdog, then leaves two daemons without
// the marker. It prints "watchdog PID" (its watchdog before the agent), then "pids A B".
func watchdogKiller() int {
	if err := transport.StartWatchdog(); err != nil {
		fmt.Println("watchdog:", err)
		return 1
	}
	fmt.Println("watchdog", watchdogPIDs(os.Getpid())[0])
	a, err := transport.Command{Argv: []string{"/bin/sh", "-c", `pkill -KILL -f -x -P $PPID acpprobe-watchdog
for i in 1 2; do (setsid env -i /bin/sh -c 'echo $$; exec sleep 300' &); done
exec cat`}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	out := bufio.NewReader(a.Stdout())
	first, _ := out.ReadString('\n')
	second, _ := out.ReadString('\n')
	fmt.Printf("pids %s %s\n", strings.TrimSpace(first), strings.TrimSpace(second))
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	return 0
}

// watchdogPIDs lists the children of pid that run as a watchdog.
func watchdogPIDs(pid int) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || string(cmdline) != "acpprobe-watchdog\x00" {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			n, _ := strconv.Atoi(e.Name())
			pids = append(pids, n)
		}
	}
	return pids
}

// The agent kills the watchdog, then the host is SIGKILLed: the host had started another
// watchdog at once, told what the first knew (the run's cgroup), which kills the daemons the
// agent left without the marker (before, both survived). Without cgroups, the watchdog finds
// what carries the marker only: the test needs them.
func TestWatchdogKilledByTheAgent(t *testing.T) {
	if on, why := transport.CgroupsAvailable(); !on {
		t.Skip("no cgroups here (" + why + "): the watchdog then finds the agent's processes by their marker only")
	}
	h := startHost(t, self(t, "watchdog-killer"))
	first, _ := strconv.Atoi(strings.TrimPrefix(h.line(t, 10*time.Second), "watchdog "))
	var a, b int
	if _, err := fmt.Sscanf(h.line(t, 10*time.Second), "pids %d %d", &a, &b); err != nil || first == 0 {
		t.Fatalf("the host said %v, watchdog %d", err, first)
	}
	fds := []int{pidfd(t, a), pidfd(t, b)}
	// The first watchdog is gone and another runs (no event says when a process has started).
	deadline := time.Now().Add(10 * time.Second)
	for w := watchdogPIDs(h.cmd.Process.Pid); len(w) != 1 || w[0] == first; w = watchdogPIDs(h.cmd.Process.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("watchdogs of the host: %v (the first was %d)", w, first)
		}
		time.Sleep(time.Millisecond)
	}
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	if !ended(fds, 5*time.Second) {
		t.Fatal("the agent's daemons outlived the SIGKILLed host whose watchdog the agent had killed")
	}
}

// stoppedHost is a host whose agent stops it (SIGSTOP: it runs as the same user) at once; its
// run has a deadline of a second. It prints "ended" once it has torn the agent down.
func stoppedHost() int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a, err := transport.Command{Argv: []string{"/bin/sh", "-c", "kill -STOP $PPID; exec cat"}}.Launch(ctx, nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	go io.Copy(io.Discard, a.Stdout())
	<-ctx.Done()
	x := a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	fmt.Println("ended", x.By)
	return 0
}

// The agent stops its host: the run still ends, shortly after its deadline, because the
// watchdog kills the launch of a host stopped past its deadline and continues the host
// (before, the host stayed stopped for ever).
func TestStoppedHostStillEnds(t *testing.T) {
	h := startHost(t, self(t, "stopped-host"))
	if l := h.line(t, 20*time.Second); !strings.HasPrefix(l, "ended") {
		t.Fatalf("the host said %q", l)
	}
}

// dirHolder is a host holding two directories it made, A and B (under the directory
// given), and an agent that replaces B with a link to a directory of the user's (given too). It
// prints "ready" and waits to be killed.
func dirHolder() int {
	parent, victim := os.Getenv("TRANSPORT_TEST_PARENT"), os.Getenv("TRANSPORT_TEST_VICTIM")
	for _, name := range []string{"acpprobe-sandbox-a", "acpprobe-shims-b"} {
		dir := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(dir, "home", "deep"), 0o700); err != nil {
			fmt.Println(err)
			return 1
		}
		_ = os.WriteFile(filepath.Join(dir, "home", "deep", "file"), nil, 0o600)
		transport.RemoveIfKilled(dir)
	}
	b := filepath.Join(parent, "acpprobe-shims-b")
	a, err := transport.Command{Argv: []string{"/bin/sh", "-c", `mv "$1" "$1.moved" && ln -s "$2" "$1" && echo planted; exec cat`, "sh", b, victim}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	l, _ := bufio.NewReader(a.Stdout()).ReadString('\n')
	fmt.Println("ready", strings.TrimSpace(l))
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// overHost is a host whose run is over: it makes a directory for its watchdog to remove,
// launches an agent and tears it down, says its run is over (RunOver), prints "over" and
// waits to be killed.
func overHost() int {
	dir := filepath.Join(os.Getenv("TRANSPORT_TEST_PARENT"), "acpprobe-sandbox-over")
	if err := os.MkdirAll(filepath.Join(dir, "home"), 0o700); err != nil {
		fmt.Println(err)
		return 1
	}
	transport.RemoveIfKilled(dir)
	a, err := transport.Command{Argv: []string{"cat"}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	go io.Copy(io.Discard, a.Stdout())
	a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	transport.RunOver()
	fmt.Println("over")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// startingHost makes directories for its watchdog to remove while that watchdog is being
// started on another goroutine (the exec holds no lock: what is told meanwhile is kept and
// told once it runs), prints "ready" once the start is over and waits to be killed.
func startingHost() int {
	parent := os.Getenv("TRANSPORT_TEST_PARENT")
	started := make(chan error, 1)
	go func() { started <- transport.StartWatchdog() }()
	for i := range 8 {
		dir := filepath.Join(parent, fmt.Sprintf("acpprobe-shims-%d", i))
		if err := os.MkdirAll(filepath.Join(dir, "deep"), 0o700); err != nil {
			fmt.Println(err)
			return 1
		}
		transport.RemoveIfKilled(dir)
	}
	if err := <-started; err != nil {
		fmt.Println("watchdog:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// Directories a host makes while its watchdog is starting are removed by that watchdog when
// the host is killed, whichever side of the exec they were told on.
func TestWatchdogLearnsWhatWasToldDuringItsStart(t *testing.T) {
	parent := t.TempDir()
	h := hostSaying(t, "starting-host", "ready", "TRANSPORT_TEST_PARENT="+parent)
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	for i := range 8 {
		waitRemoved(t, filepath.Join(parent, fmt.Sprintf("acpprobe-shims-%d", i)))
	}
}

// A host whose run was over (RunOver: its watchdog skips the sweep of every process) and
// that is then killed still has its directory removed by the watchdog, and its watchdog ends.
func TestWatchdogAfterRunOver(t *testing.T) {
	parent := t.TempDir()
	h := hostSaying(t, "over-host", "over", "TRANSPORT_TEST_PARENT="+parent)
	host := h.cmd.Process.Pid
	if n := watchdogsOf(host); n != 1 {
		t.Fatalf("the host has %d watchdogs, want 1", n)
	}
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	waitRemoved(t, filepath.Join(parent, "acpprobe-sandbox-over"))
}

// hostSaying starts this test binary as a host in role, with env added to its environment,
// and fails unless its first line is want (within 10 s).
func hostSaying(t *testing.T, role, want string, env ...string) *hostRole {
	t.Helper()
	cmd := self(t, role)
	cmd.Env = append(cmd.Env, env...)
	h := startHost(t, cmd)
	if l := h.line(t, 10*time.Second); l != want {
		t.Fatalf("the host said %q", l)
	}
	return h
}

// waitRemoved waits for the watchdog of a killed host to remove dir (it works after the
// host's death: no event tells the test when it is done), and fails after 10 s.
func waitRemoved(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Lstat(dir); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed host's directory %s is still there", dir)
		}
		time.Sleep(time.Millisecond)
	}
}

// kill -9 of the host: its watchdog removes the directories the host made (before, the
// sandbox and the shims' directory were left behind), but only while the path is still the
// directory the host made: the one the agent replaced with a link to the user's directory is
// left, and the user's directory is untouched.
func TestWatchdogRemovesTheHostsDirectories(t *testing.T) {
	parent, victim := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(victim, "precious"), []byte("user data"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := hostSaying(t, "dir-holder", "ready planted", "TRANSPORT_TEST_PARENT="+parent, "TRANSPORT_TEST_VICTIM="+victim)
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	waitRemoved(t, filepath.Join(parent, "acpprobe-sandbox-a"))
	if b, err := os.ReadFile(filepath.Join(victim, "precious")); err != nil || string(b) != "user data" {
		t.Errorf("the user's file: %q %v", b, err)
	}
	if entries, _ := os.ReadDir(victim); len(entries) != 1 {
		t.Errorf("the user's directory holds %d entries", len(entries))
	}
}

// secretHost is a host whose environment holds a secret (as acpprobe's does when the
// sandbox keeps the user's credentials from the agent) and whose agent reads the host's
// /proc environ and command line; it prints what the agent read, then "end".
func secretHost() int {
	a, err := transport.Command{Argv: []string{"/bin/sh", "-c", `cat /proc/$PPID/environ 2>&1 | tr '\0' '\n'; echo end`},
		Environ: []string{"PATH=" + os.Getenv("PATH")}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	_, _ = io.Copy(os.Stdout, a.Stdout())
	a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	return 0
}

// An agent running as the host's user cannot read the host's environment through /proc: the
// host is not dumpable (before, it read every credential the sandbox had dropped). Root reads
// it anyway (CAP_SYS_PTRACE), so as root the host and its agent run as uid 65534.
func TestAgentCannotReadTheHostEnvironment(t *testing.T) {
	const secret = "AKIAHOSTSECRETVALUE0"
	cmd := asUser(t, "secret-host")
	cmd.Env = append(cmd.Env, "HOST_SECRET="+secret)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "end") {
		t.Fatalf("host: %v\n%s", err, out)
	}
	if strings.Contains(string(out), secret) {
		t.Errorf("the agent read the host's environment:\n%s", out)
	}
	if !strings.Contains(string(out), "Permission denied") {
		t.Errorf("the agent's read did not fail as it should:\n%s", out)
	}
}

// asUser runs this test binary in role as it is, or as uid 65534 when the suite runs as root
// (a copy of the binary, in a directory that user may read).
func asUser(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	cmd := self(t, role)
	if os.Getuid() != 0 {
		return cmd
	}
	dir, err := os.MkdirTemp("", "acpprobe-transport-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "transport.test")
	data, err := os.ReadFile(cmd.Path)
	if err == nil {
		err = os.WriteFile(bin, data, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd.Path, cmd.Args[0], cmd.Dir = bin, bin, dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	return cmd
}
