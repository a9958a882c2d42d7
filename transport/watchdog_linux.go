package transport

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/internal/safefs"
)

// The watchdog is this executable run again with argv exactly [watchdogName] and
// watchdogEnv=<run>:<since> in its environment (see the package doc).
const (
	watchdogName = "acpprobe-watchdog"
	watchdogEnv  = "ACPPROBE_WATCHDOG"
	// watchdogBound bounds the watchdog's killing once the host has gone.
	watchdogBound = 5 * time.Second
	// stopCheck is how often the watchdog looks at a host whose run is past its deadline,
	// for a host stopped (SIGSTOP) while its agent runs.
	stopCheck = 100 * time.Millisecond
)

func init() {
	if len(os.Args) == 1 && os.Args[0] == watchdogName {
		if arg, ok := os.LookupEnv(watchdogEnv); ok {
			os.Exit(watch(arg))
		}
	}
}

// The host tells its watchdog what to clean up by lines on the pipe the watchdog waits on
// (each shorter than PIPE_BUF, so written whole):
//
//	cgroup DIR                 the run's cgroup: killed (cgroup.kill) and removed when the host dies
//	dir DEV INO PATH           a directory of the host's to remove when it dies (if still that one)
//	undir PATH                 it was removed
//	launch MARKER NS [DIR]     a launch, its deadline (Unix ns; 0 for none) and its cgroup
//	end MARKER                 the launch has been torn down
//	over                       the run is over: every launch torn down, none to come (RunOver)
//
// A host that is stopped (SIGSTOP, by its own agent: they run as the same user) past a
// launch's deadline cannot end the run: the watchdog then kills that launch (its cgroup, its
// marker) and continues the host (SIGCONT), which goes on to its teardown and its report.
var watchdog struct {
	mu      sync.Mutex
	running bool
	err     error    // why it could not start; sticky, so a broken setup is not retried per launch
	hostEnd *os.File // write end of the pipe the watchdog waits on; open while the host lives
	// mustSweep: a line could not be written whole (a watchdog that stopped reading: what it
	// knows may be short of a launch), or a launch's teardown left a process it could not
	// kill; the watchdog is then never told the run is over, and sweeps when the host ends.
	mustSweep bool
	prepared  bool // the run's cgroup and the first launch's are made (or being made)
	// starting is closed when the start under way (nil: none) is over; mu is not held
	// meanwhile.
	starting chan struct{}
	// state is what a watchdog started again (the agent killed the first) is told at once.
	cgroup   string
	dirs     map[string]string // path -> its dir line
	launches map[Marker]string // -> its launch line
}

// StartWatchdog starts the watchdog of this host process unless it runs already, and
// returns once it is armed (it will act on the host's end from now on), or why it could not
// start. Command.Launch calls it before it starts the agent, so the first launch waits for
// the watchdog's exec (about half a millisecond) unless it was started earlier: a program
// that will launch agents calls it on a goroutine of its own as soon as it knows (acpprobe's
// CLI does, before it parses its flags), so that the exec and the watchdog's start-up overlap
// the program's own preparations instead of the agent's start. A watchdog that dies before
// the host (killed by an agent) is started again at once, and told what the first knew.
func StartWatchdog() error {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	return startWatchdogLocked()
}

// startWatchdogLocked is called, and returns, with watchdog.mu held; it lets go of it while
// the watchdog is exec'd (and, the first time, while the run's cgroups are made), so that
// what is told meanwhile (RemoveIfKilled, a launch's end) is not held up by an exec: it is
// kept in the state, and told to the watchdog once it runs. A second caller waits for the
// start under way.
func startWatchdogLocked() error {
	for watchdog.starting != nil {
		started := watchdog.starting
		watchdog.mu.Unlock()
		<-started
		watchdog.mu.Lock()
	}
	if watchdog.running || watchdog.err != nil {
		return watchdog.err
	}
	started := make(chan struct{})
	watchdog.starting = started
	first := !watchdog.prepared
	watchdog.prepared = true
	watchdog.mu.Unlock()
	cmd, w, err := spawnWatchdog()
	var run cgroupRun
	if err == nil && first { // the first start, early: the run's and the first launch's cgroups are made here
		if run = makeRunCgroup(); run.dir != "" {
			prepareLaunchCgroup()
		}
	}
	watchdog.mu.Lock()
	watchdog.starting = nil
	close(started)
	if err != nil {
		watchdog.err = err
		return err
	}
	watchdog.running, watchdog.hostEnd = true, w
	_ = unix.SetNonblock(int(w.Fd()), true) // a watchdog that stopped reading never blocks the host
	if run.dir != "" {
		watchdog.cgroup = run.dir
	}
	if watchdog.cgroup != "" {
		tellLocked("cgroup " + watchdog.cgroup)
	}
	for _, line := range watchdog.dirs {
		tellLocked(line)
	}
	for _, line := range watchdog.launches {
		tellLocked(line)
	}
	addOwnChild(cmd.Process.Pid)
	go func() {
		_ = cmd.Wait() // the watchdog never ends before the host unless killed: start another
		removeOwnChild(cmd.Process.Pid)
		watchdog.mu.Lock()
		defer watchdog.mu.Unlock()
		watchdog.running = false
		w.Close()
		_ = startWatchdogLocked()
	}()
	return nil
}

// tell sends the watchdog one line, if it runs; a line that does not fit in the pipe (a
// watchdog that stopped reading) is dropped.
func tell(line string) {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	tellLocked(line)
}

func tellLocked(line string) {
	if watchdog.running {
		if n, err := unix.Write(int(watchdog.hostEnd.Fd()), []byte(line+"\n")); err != nil || n != len(line)+1 {
			watchdog.mustSweep = true
		}
	}
}

// RunOver tells the watchdog that this host has torn down every agent it launched and will
// launch no other (acpprobe's CLI calls it as it exits): when the host then ends, the watchdog
// kills and removes the run's cgroup and removes its directories, but does not sweep every
// process of the machine for the run's marker, which the teardown of each launch has done
// already (that sweep costs a /proc walk, a millisecond or more, after every command). It says
// nothing when a launch is still running, a teardown left a process alive, or a line to the
// watchdog was lost (it may not know every launch): the watchdog then sweeps, as it does
// when the host is killed.
func RunOver() {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if len(watchdog.launches) == 0 && !watchdog.mustSweep {
		tellLocked("over")
	}
}

// leftAlive notes that a launch's teardown could not kill everything of it: the watchdog
// will look for it again when the host ends (RunOver says nothing).
func leftAlive() {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	watchdog.mustSweep = true
}

// watchLaunch tells the watchdog of a launch: its marker, the run's deadline (zero: none)
// and its cgroup (""). The returned function says the launch is over.
func watchLaunch(m Marker, deadline time.Time, cgroup string) (done func()) {
	ns := int64(0)
	if !deadline.IsZero() {
		ns = deadline.UnixNano()
	}
	line := fmt.Sprintf("launch %s %d %s", m, ns, cgroup)
	watchdog.mu.Lock()
	if watchdog.launches == nil {
		watchdog.launches = map[Marker]string{}
	}
	watchdog.launches[m] = line
	tellLocked(line)
	watchdog.mu.Unlock()
	return func() {
		watchdog.mu.Lock()
		defer watchdog.mu.Unlock()
		delete(watchdog.launches, m)
		tellLocked("end " + string(m))
	}
}

// RemoveIfKilled has the watchdog remove dir, a directory this process made (a sandbox, the
// browser shims'), if this process dies before calling the returned function, which it does
// once dir is removed. The watchdog removes it as safely as the host would: only if the path
// still names that very directory, never through a link nor across a mount point
// (internal/safefs). Off Linux, and without a watchdog, it does nothing.
func RemoveIfKilled(dir string) (forget func()) {
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil || strings.ContainsAny(dir, "\n") {
		return func() {}
	}
	line := fmt.Sprintf("dir %d %d %s", st.Dev, st.Ino, dir)
	watchdog.mu.Lock()
	if watchdog.dirs == nil {
		watchdog.dirs = map[string]string{}
	}
	watchdog.dirs[dir] = line
	tellLocked(line)
	watchdog.mu.Unlock()
	return func() {
		watchdog.mu.Lock()
		defer watchdog.mu.Unlock()
		delete(watchdog.dirs, dir)
		tellLocked("undir " + dir)
	}
}

// spawnWatchdog starts a watchdog; it acts when w is closed.
func spawnWatchdog() (cmd *exec.Cmd, w *os.File, err error) {
	r, w, err := os.Pipe() // O_CLOEXEC: no agent inherits an end
	if err != nil {
		return nil, nil, err
	}
	var sc scanner
	self, _ := sc.stat(os.Getpid())
	// Not the markers the host may carry (when it is itself an agent's descendant, as a tap
	// under a probe): the watchdog ends with its host by design, and is not a process of the
	// outer agent for the outer host's sweep to report.
	// GOMAXPROCS=1: the watchdog waits on one pipe; with it set, its runtime neither reads
	// the cgroup's CPU limit at start nor starts a thread per CPU, while the agent starts.
	env := []string{watchdogEnv + "=" + runToken() + ":" + strconv.FormatUint(self.start, 10),
		"GORACE=atexit_sleep_ms=0", "GOMAXPROCS=1"}
	cmd = &exec.Cmd{
		Path: "/proc/self/exe", // the running image, even if its file was replaced or removed
		Args: []string{watchdogName},
		Env:  env,
		Dir:  "/",
		// Stdout and stderr are /dev/null: the watchdog must not hold the host's pipes (an
		// editor waiting for a tap's output to end, go test for a test binary's).
		Stdin: r,
		// Its own session: no terminal signal and no signal to the host's group reaches it,
		// and when the host is itself an agent (a tap under a probe) the watchdog is not in
		// that agent's session, so the outer host's sweep does not list it while it finishes.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start() // returns once the exec has succeeded: the watchdog holds r from here
	r.Close()
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return cmd, w, nil
}

// watched is what a watchdog knows of its host's run.
type watched struct {
	mu       sync.Mutex
	cgroup   string
	dirs     map[string][2]uint64 // path -> dev, ino
	launches map[string]launchWatch
	over     bool // the host said its run is over (RunOver), with no launch since
}

type launchWatch struct {
	deadline time.Time // zero: none
	cgroup   string
	killed   bool // the watchdog killed it (its host was stopped past the deadline)
}

// apply takes one line of the host's.
func (w *watched) apply(line string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	verb, rest, _ := strings.Cut(line, " ")
	switch verb {
	case "cgroup":
		w.cgroup = rest
	case "dir":
		f := strings.SplitN(rest, " ", 3)
		if len(f) == 3 {
			dev, _ := strconv.ParseUint(f[0], 10, 64)
			ino, _ := strconv.ParseUint(f[1], 10, 64)
			w.dirs[f[2]] = [2]uint64{dev, ino}
		}
	case "undir":
		delete(w.dirs, rest)
	case "launch":
		f := strings.SplitN(rest, " ", 3)
		if len(f) >= 2 {
			l := launchWatch{}
			if ns, _ := strconv.ParseInt(f[1], 10, 64); ns > 0 {
				l.deadline = time.Unix(0, ns)
			}
			if len(f) == 3 {
				l.cgroup = f[2]
			}
			w.launches[f[0]] = l
			w.over = false
		}
	case "end":
		delete(w.launches, rest)
	case "over":
		w.over = true
	}
}

// watch is the watchdog's life: it follows what the host tells it until the host's end (EOF
// on stdin), enforcing the run's deadlines on a stopped host meanwhile, then kills every
// process of the host's run and removes its directories.
func watch(arg string) int {
	run, since, ok := strings.Cut(arg, ":")
	floor, err := strconv.ParseUint(since, 10, 64)
	if !ok || err != nil || len(run) != 16 || strings.Trim(run, "0123456789abcdef") != "" {
		return 2
	}
	// Exec'd as /proc/self/exe, the kernel names it "exe": give ps and top a better name
	// (before it stops being dumpable, which gives its /proc files to root).
	_ = os.WriteFile("/proc/self/comm", []byte(watchdogName), 0)
	// Not dumpable: a same-user agent cannot read its memory or environment, nor trace it.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	host := os.Getppid()
	hostFD, _ := unix.PidfdOpen(host, 0)
	w := &watched{dirs: map[string][2]uint64{}, launches: map[string]launchWatch{}}
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(os.Stdin)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	tick := time.NewTimer(time.Hour)
	for open := true; open; {
		tick.Reset(w.nextCheck())
		select {
		case line, ok := <-lines:
			if !ok {
				open = false
				break
			}
			w.apply(line)
		case <-tick.C:
			w.enforce(host, hostFD, run, floor)
		}
	}
	return w.cleanUp(run, floor)
}

// nextCheck is how long until a launch's deadline passes (stopCheck once one has).
func (w *watched) nextCheck() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := time.Hour
	for _, l := range w.launches {
		if !l.deadline.IsZero() && !l.killed {
			next = min(next, max(time.Until(l.deadline), stopCheck))
		}
	}
	return next
}

// enforce kills the launches past their deadline while the host is stopped, and continues
// the host.
func (w *watched) enforce(host, hostFD int, run string, floor uint64) {
	var sc scanner
	st, ok := sc.stat(host)
	if !ok || (st.state != 'T' && st.state != 't') {
		return
	}
	w.mu.Lock()
	var late []string
	for m, l := range w.launches {
		if !l.deadline.IsZero() && !l.killed && time.Now().After(l.deadline) {
			late = append(late, m)
			l.killed = true
			w.launches[m] = l
			if l.cgroup != "" {
				_ = killCgroup(l.cgroup)
			}
		}
	}
	w.mu.Unlock()
	for _, m := range late {
		k := killer{match: matcher{marker: []byte(m), since: floor}}
		if n, _ := k.find(); n > 0 {
			_ = k.killAll()
		}
		k.close()
	}
	if len(late) > 0 {
		if hostFD >= 0 {
			_ = unix.PidfdSendSignal(hostFD, unix.SIGCONT, nil, 0)
		} else {
			_ = unix.Kill(host, unix.SIGCONT)
		}
	}
}

// cleanUp is the watchdog's work once the host has gone: it kills the run's cgroup and
// every process carrying the run's marker (sweeping until a pass finds none; not when the
// host said its run was over and no launch was left), removes the cgroups, and removes the
// host's directories.
func (w *watched) cleanUp(run string, floor uint64) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	deadline := time.Now().Add(watchdogBound)
	if w.cgroup != "" {
		_ = killCgroup(w.cgroup)
	}
	k := killer{match: runMatcher(run, floor)}
	defer k.close()
	code := 0
	// Once the host said its run was over, every launch was torn down, its own sweeps
	// included: nothing of the run is left to look for.
	if over := w.over && len(w.launches) == 0; !over {
		if n, _ := k.find(); n > 0 {
			_ = k.killAll()
			if !k.waitGone(context.Background(), deadline, nil) {
				code = 1
			}
		}
	}
	if w.cgroup != "" && removeCgroup(w.cgroup, deadline) != nil {
		code = 1
	}
	for dir, id := range w.dirs {
		if removeDir(dir, id) != nil {
			code = 1
		}
	}
	return code
}

// removeDir removes the directory at path if it is still the one with that device and inode.
func removeDir(path string, id [2]uint64) error {
	d, err := safefs.OpenDir(filepath.Clean(path))
	if err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstat(d.Fd(), &st); err != nil || uint64(st.Dev) != id[0] || uint64(st.Ino) != id[1] {
		d.Close()
		return fmt.Errorf("%s is no longer the directory the host made", path)
	}
	return d.Remove()
}
