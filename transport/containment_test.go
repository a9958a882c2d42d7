//go:build linux

package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// The test binary re-executes itself in the roles below when roleEnv says so.
const roleEnv = "TRANSPORT_TEST_ROLE"

func TestMain(m *testing.M) {
	if os.Getenv(noCgroupEnv) != "" {
		transport.DisableCgroups()
	}
	switch role := os.Getenv(roleEnv); role {
	case "":
		os.Exit(m.Run())
	case "attacker":
		os.Exit(attacker())
	case "tty-host":
		os.Exit(ttyHost())
	case "holder":
		os.Exit(holder())
	case "nested":
		os.Exit(nested())
	case "first-launch":
		os.Exit(firstLaunch())
	case "watchdog-killer":
		os.Exit(watchdogKiller())
	case "stopped-host":
		os.Exit(stoppedHost())
	case "dir-holder":
		os.Exit(dirHolder())
	case "over-host":
		os.Exit(overHost())
	case "starting-host":
		os.Exit(startingHost())
	case "secret-host":
		os.Exit(secretHost())
	default:
		fmt.Fprintln(os.Stderr, "unknown role", role)
		os.Exit(2)
	}
}

// self runs this test binary in a role.
func self(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"="+role, "GORACE=atexit_sleep_ms=0")
	return cmd
}

func errnoName(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// attacker is an agent that goes for the user's terminal: it opens /dev/tty, tries to make
// itself the terminal's foreground group (through /dev/tty, or else through the host's own
// terminal found by its fd path), reports, and says whether a Ctrl-C reached it.
func attacker() int {
	signal.Ignore(syscall.SIGTTOU) // a background tcsetpgrp would otherwise stop it
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	devtty := errnoName(err)
	if err != nil {
		tty, err = os.OpenFile(fmt.Sprintf("/proc/%d/fd/0", os.Getppid()), os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	if err == nil {
		err = unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, unix.Getpgrp())
	}
	fmt.Printf("attacker devtty=%s tiocspgrp=%s\n", devtty, errnoName(err))
	go func() {
		<-sigint
		fmt.Println("attacker got SIGINT")
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// ttyHost holds a terminal (the test's pty) and launches the attacker as its agent. It
// prints the attacker's report, then "ready", then who got the Ctrl-C the test types.
func ttyHost() int {
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	exe, _ := os.Executable()
	a, err := transport.Command{Argv: []string{exe}, Env: []string{roleEnv + "=attacker"}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("verdict: launch:", err)
		return 1
	}
	defer a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	lines := bufio.NewScanner(a.Stdout())
	if !lines.Scan() {
		fmt.Println("verdict: no report from the attacker")
		return 1
	}
	fmt.Println("report:", lines.Text())
	later := make(chan string, 1)
	go func() {
		if lines.Scan() {
			later <- lines.Text()
		}
	}()
	fmt.Println("ready")
	select {
	case <-sigint:
		fmt.Println("verdict: host got SIGINT")
	case l := <-later:
		fmt.Println("verdict:", l)
	case <-time.After(20 * time.Second):
		fmt.Println("verdict: nobody got SIGINT")
	}
	return 0
}

// F5: under a terminal, the agent cannot open /dev/tty, cannot become the foreground group,
// and the user's Ctrl-C reaches the host, not the agent.
func TestAgentCannotReachTheTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	host := self(t, "tty-host")
	host.Stdin, host.Stdout, host.Stderr = tty, tty, tty
	host.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	defer host.Wait()
	defer host.Process.Kill()

	lines := make(chan string)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(ptmx) // ends with EIO once the host is gone
		for s.Scan() {
			lines <- strings.TrimRight(s.Text(), "\r")
		}
	}()
	deadline := time.After(30 * time.Second)
	next := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the host ended before printing %q", prefix)
				}
				// The terminal echoes the Ctrl-C as "^C" ahead of the host's next line.
				if _, rest, ok := strings.Cut(l, prefix); ok {
					return rest
				}
			case <-deadline:
				t.Fatalf("no %q from the host", prefix)
			}
		}
	}
	report := next("report: ")
	next("ready")
	if _, err := ptmx.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	verdict := next("verdict: ")
	if !strings.Contains(report, "devtty=ENXIO") {
		t.Errorf("the agent opened /dev/tty, or failed otherwise: %s", report)
	}
	if strings.Contains(report, "tiocspgrp=ok") {
		t.Errorf("the agent made itself the terminal's foreground group: %s", report)
	}
	if verdict != "host got SIGINT" {
		t.Errorf("the user's Ctrl-C: %s", verdict)
	}
}

// pidfd holds a process found by the test, so that waiting for it can never hit another
// process that reused its pid.
func pidfd(t *testing.T, pid int) int {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	t.Cleanup(func() {
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		unix.Close(fd)
	})
	return fd
}

// ended waits until every pidfd's process has ended, or the bound; it then reaps those
// that ended as this process's children.
func ended(fds []int, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for _, fd := range fds {
		for {
			left := max(time.Until(deadline), 0)
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if n, err := unix.Poll(p, int(left/time.Millisecond)); err == nil && n == 1 {
				break
			} else if left == 0 && err == nil {
				return false
			}
		}
		var info unix.Siginfo
		_ = unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG, nil)
	}
	return true
}

// unreaped reports whether the pidfd's process is a zombie child of this process.
func unreaped(fd int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, fd, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// settled waits until pid runs comm and, when ppid is not 0, has ppid for parent: the shell
// that started it has exec'd the program and, for a daemon, its intermediate has exited.
func settled(t *testing.T, pid int, comm string, ppid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if strings.TrimSpace(string(c)) == comm && len(f) > 1 && (ppid == 0 || f[1] == strconv.Itoa(ppid)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: comm %q, stat %q; want %s with parent %d", pid, c, stat, comm, ppid)
		}
		runtime.Gosched()
	}
}

// sessionLeader waits until pid runs comm and leads its own session (setsid has run and
// exec'd): only then has it left the agent's group.
func sessionLeader(t *testing.T, pid int, comm string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if strings.TrimSpace(string(c)) == comm && len(f) > 3 && f[3] == strconv.Itoa(pid) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d: comm %q, stat %q; want %s leading its own session", pid, c, stat, comm)
		}
		runtime.Gosched()
	}
}

func readPID(t *testing.T, r *bufio.Reader) int {
	t.Helper()
	line, err := r.ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("read pid: %q %v", line, err)
	}
	return pid
}

// F9: a daemon that double-forked and left the session outlives the agent; Shutdown finds
// it by the marker, kills it, reaps it and reports it.
func TestSetsidDaemonIsKilledAndReported(t *testing.T) {
	a := launch(t, sh(`(setsid sleep 300 & echo $!); sleep 300 & echo $!; exec cat`))
	out := bufio.NewReader(a.Stdout())
	daemon, grandchild := readPID(t, out), readPID(t, out)
	fds := []int{pidfd(t, daemon), pidfd(t, grandchild)}
	// Orphaned by the subshell, the daemon is re-parented to this process, a subreaper.
	settled(t, daemon, "sleep", os.Getpid())
	settled(t, grandchild, "sleep", 0)
	x := a.Shutdown(context.Background(), transport.Patient(grace))
	if x.By != "stdin" || !x.GroupKilled {
		t.Errorf("exit = %+v", x)
	}
	got := map[int]record.Survivor{}
	for _, s := range x.Survivors {
		got[s.PID] = s
	}
	if s := got[daemon]; s.Command != "sleep" || !s.LeftGroup || !s.Killed || s.Found != record.AfterLadder || strings.Join(s.Argv, " ") != "sleep 300" {
		t.Errorf("daemon %d: %+v (survivors %+v)", daemon, s, x.Survivors)
	}
	if s := got[grandchild]; s.Command != "sleep" || s.LeftGroup || !s.Killed {
		t.Errorf("grandchild %d: %+v (survivors %+v)", grandchild, s, x.Survivors)
	}
	if len(x.Survivors) != 2 {
		t.Errorf("survivors = %+v, want the daemon and the grandchild", x.Survivors)
	}
	for _, fd := range fds {
		if unreaped(fd) {
			t.Error("a killed survivor was left a zombie")
		}
	}
	if !ended(fds, 0) {
		t.Error("a survivor is still alive after Shutdown")
	}
}

// A detached helper that ends by itself just after the agent (as a relaunched child does
// when its parent goes) is not a survivor; one still there after SurvivorSettle is.
func TestDetachedHelperThatEndsIsNoSurvivor(t *testing.T) {
	// The helper reads the agent's stdin and ends by itself 100 ms after it closes, after the
	// agent (cat) has gone.
	a := launch(t, sh(`(setsid sh -c 'read x; sleep 0.1' & echo $!) <&0; exec cat`))
	out := bufio.NewReader(a.Stdout())
	helper := readPID(t, out)
	sessionLeader(t, helper, "sh")
	x := a.Shutdown(context.Background(), transport.Patient(grace))
	for _, s := range x.Survivors {
		if s.PID == helper {
			t.Errorf("the helper that ended by itself is reported: %+v", s)
		}
	}
	if len(x.Survivors) != 0 {
		t.Errorf("survivors = %+v, want none", x.Survivors)
	}
}

// Sweep lists an agent's processes without touching them; Kill ends them.
func TestSweepThenKill(t *testing.T) {
	a := launch(t, sh(`sleep 300 & echo $!; (setsid sleep 300 & echo $!); exec cat`))
	out := bufio.NewReader(a.Stdout())
	child, daemon := readPID(t, out), readPID(t, out)
	fds := []int{pidfd(t, child), pidfd(t, daemon)}
	settled(t, child, "sleep", 0)
	settled(t, daemon, "sleep", os.Getpid())
	scope := a.Scope()
	procs, err := transport.Sweep(scope)
	if err != nil {
		t.Fatal(err)
	}
	pids := map[int]record.Proc{}
	for _, p := range procs {
		pids[p.PID] = p
	}
	if len(procs) != 2 || pids[child].PGID != a.PID() || pids[daemon].SID != daemon || pids[child].Comm != "sleep" {
		t.Fatalf("sweep = %+v, want %d in the group and %d in its own session", procs, child, daemon)
	}
	if ended(fds, 0) {
		t.Fatal("Sweep killed something")
	}
	killed, err := transport.Kill(scope, "test", 5*time.Second)
	if err != nil || len(killed) != 2 || !killed[0].Killed || !killed[1].Killed || killed[0].Found != "test" {
		t.Fatalf("kill = %+v, %v", killed, err)
	}
	if !ended(fds, 0) {
		t.Fatal("Kill left a process alive")
	}
	if x := a.Shutdown(context.Background(), transport.Patient(grace)); x.By != "stdin" || len(x.Survivors) != 0 || x.GroupKilled {
		t.Errorf("exit = %+v, want nothing left to kill", x)
	}
	if procs, err := transport.Sweep(transport.Scope{}); len(procs) != 0 || err != nil {
		t.Errorf("the zero scope selects %+v, %v", procs, err)
	}
}

func TestMarkerInEnvironment(t *testing.T) {
	t.Setenv(transport.MarkerVar, "0011223344556677.8899aabbccddeeff") // as if this host were an agent's descendant
	c := sh(`echo "$` + transport.MarkerVar + `"`)
	c.Env = []string{transport.MarkerVar + "=forged"} // transport owns the variable
	a := launch(t, c)
	out := readAll(a)
	a.Shutdown(context.Background(), transport.Patient(grace))
	list := strings.Split(strings.TrimSpace(<-out), ",")
	m := string(a.Scope().Marker)
	if len(list) != 2 || list[0] != "0011223344556677.8899aabbccddeeff" || list[1] != m || len(m) != 33 {
		t.Errorf("marker list %q, own marker %q", list, m)
	}
}

// holder is a host that is about to be SIGKILLed: it launches an agent with a grandchild
// in its group and a daemon in its own session, waits for its watchdog, prints their pids,
// and waits.
func holder() int {
	a, err := transport.Command{Argv: []string{"/bin/sh", "-c", `sleep 300 & echo $!; (setsid sleep 300 & echo $!); exec cat`}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	out := bufio.NewReader(a.Stdout())
	first, _ := out.ReadString('\n')
	second, _ := out.ReadString('\n')
	if err := transport.StartWatchdog(); err != nil {
		fmt.Println("watchdog:", err)
		return 1
	}
	if os.Getenv("TRANSPORT_TEST_RUN_OVER") != "" {
		transport.RunOver() // too early: its launch still runs
	}
	fmt.Printf("pids %s %s\n", strings.TrimSpace(first), strings.TrimSpace(second))
	_, _ = io.Copy(io.Discard, os.Stdin) // until killed
	return 0
}

// F9: when the host is SIGKILLed, Pdeathsig ends the agent and the watchdog ends the rest,
// the group's grandchild and the setsid daemon, within a second (a few milliseconds here),
// also when the host said its run was over while that launch still ran (RunOver then says
// nothing, and the watchdog sweeps: without cgroups, its sweep alone finds the daemon).
func TestWatchdogKillsTheRunWhenTheHostIsKilled(t *testing.T) {
	for _, cgroups := range []bool{true, false} {
		for _, over := range []bool{false, true} {
			t.Run(fmt.Sprintf("cgroups=%v/RunOver=%v", cgroups, over), func(t *testing.T) { watchdogKillsTheRun(t, cgroups, over) })
		}
	}
}

func watchdogKillsTheRun(t *testing.T, cgroups, runOver bool) {
	const bound = time.Second
	host := self(t, "holder")
	if !cgroups {
		host.Env = append(host.Env, noCgroupEnv+"=1")
	}
	if runOver {
		host.Env = append(host.Env, "TRANSPORT_TEST_RUN_OVER=1")
	}
	stdin, err := host.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var child, daemon int
	if _, serr := fmt.Sscanf(line, "pids %d %d", &child, &daemon); err != nil || serr != nil {
		host.Process.Kill()
		host.Wait()
		t.Fatalf("holder said %q, %v", line, err)
	}
	fds := []int{pidfd(t, child), pidfd(t, daemon)}
	if ended(fds, 0) {
		t.Fatal("the agent's processes ended before the host was killed")
	}
	host.Process.Kill()
	host.Wait()
	start := time.Now()
	if !ended(fds, bound) {
		t.Fatalf("the agent's grandchild or daemon outlived the SIGKILLed host by %s", bound)
	}
	t.Logf("both gone %s after the host's death", time.Since(start))
}

// firstLaunch is a host that never started its watchdog itself: it launches an agent and says
// at once whether a watchdog of its own runs.
func firstLaunch() int {
	a, err := transport.Command{Argv: []string{"cat"}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	fmt.Println("watchdogs:", watchdogsOf(os.Getpid()))
	own, _ := os.ReadFile("/proc/self/cgroup")
	agent, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", a.PID()))
	fmt.Println("own cgroup:", !bytes.Equal(own, agent) && len(agent) > 0)
	go io.Copy(io.Discard, a.Stdout())
	a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	return 0
}

// watchdogsOf counts the children of pid that run as a watchdog (argv exactly
// ["acpprobe-watchdog"], from the moment their exec succeeded).
func watchdogsOf(pid int) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || string(cmdline) != "acpprobe-watchdog\x00" {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		// pid (comm) state ppid …: the comm may hold spaces, not a ')'.
		if fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			n++
		}
	}
	return n
}

// The watchdog is armed before the first agent starts, not after it (an agent runs as the
// host's user: one that started a daemon and killed its host at once would otherwise leave
// the daemon behind): a host that never called StartWatchdog has one when Launch returns, and
// where cgroups are available that first agent is in a cgroup of its own (before, the launch
// chose its cgroup before it armed the watchdog, which makes the run's: it got none).
func TestWatchdogArmedBeforeTheFirstAgent(t *testing.T) {
	out, err := self(t, "first-launch").Output()
	want := "watchdogs: 1\nown cgroup: false"
	if ok, _ := transport.CgroupsAvailable(); ok {
		want = "watchdogs: 1\nown cgroup: true"
	}
	if got := strings.TrimSpace(string(out)); err != nil || got != want {
		t.Fatalf("the host said %q (%v), want %q: one watchdog armed by the first Launch, and its cgroup made for that agent", got, err, want)
	}
}

// nested is a host that is itself an agent (as a tap under a probe): it launches its own
// agent, makes sure its watchdog runs, says "ready", and when its stdin closes shuts its
// agent down and exits.
func nested() int {
	a, err := transport.Command{Argv: []string{"cat"}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("launch:", err)
		return 1
	}
	if err := transport.StartWatchdog(); err != nil {
		fmt.Println("watchdog:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
	go io.Copy(io.Discard, a.Stdout())
	a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	return 0
}

// A host inside another host's agent cleans up after itself; its watchdog, which outlives
// it by the moment of its final sweep, is in no session of the outer agent and carries no
// marker of it: the outer host finds no survivor.
func TestNestedHostLeavesNoSurvivor(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a := launch(t, transport.Command{Argv: []string{exe}, Env: []string{roleEnv + "=nested", "GORACE=atexit_sleep_ms=0"}})
	line, err := bufio.NewReader(a.Stdout()).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("nested host said %q, %v", line, err)
	}
	go io.Copy(io.Discard, a.Stdout())
	if x := a.Shutdown(context.Background(), transport.Patient(5*time.Second)); x.By != "stdin" || len(x.Survivors) != 0 {
		t.Errorf("exit = %+v, want the nested host gone on stdin EOF and no survivor", x)
	}
}
