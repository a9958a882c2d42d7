package transport

import (
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/record"
)

func newProcAttr() *syscall.SysProcAttr {
	// Setsid: a session of its own, so no controlling terminal (see the package doc); the
	// session is also the process group. Pdeathsig: if the host dies, the kernel kills the
	// agent instead of orphaning it (the watchdog takes care of its descendants).
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// GroupAlive reports whether any live (non-zombie) process belongs to process group pgid.
// Zombies do not count: they run nothing and are reaped by whoever inherited them.
func GroupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	alive := false
	var sc scanner
	err := sc.each(0, 0, func(st procStat) bool {
		alive = st.PGID == pgid
		return !alive
	})
	return alive || err != nil
}

var subreaper sync.Once

// beforeLaunch makes the host a child subreaper, once: descendants the agent orphans are
// re-parented to the host, where the sweep finds them (they are children of the host that
// transport did not start) and can reap what it kills. It makes the host not dumpable: an
// agent running as the same user can then neither read the host's environment (the
// credentials a sandbox kept from it) or memory through /proc, nor trace it (root still
// can). It arms the watchdog before the agent exists (at once when it runs already), so that
// no moment of the agent's life is uncovered, and returns the kernel's fork count, which
// bounds the agent's sweeps (see scanner.window).
func beforeLaunch() (forks uint64) {
	subreaper.Do(func() {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	})
	_ = StartWatchdog() // which also makes the run's cgroup, and tells the watchdog
	var sc scanner
	return sc.forks()
}

// ownChildren are the children of this process that transport started (the agents, the
// watchdog): the sweeps' orphans are the host's other children.
var ownChildren struct {
	sync.Mutex
	pids map[int]bool
}

func addOwnChild(pid int) {
	ownChildren.Lock()
	defer ownChildren.Unlock()
	if ownChildren.pids == nil {
		ownChildren.pids = map[int]bool{}
	}
	ownChildren.pids[pid] = true
}

func removeOwnChild(pid int) {
	ownChildren.Lock()
	defer ownChildren.Unlock()
	delete(ownChildren.pids, pid)
}

func ownChild(pid int) bool {
	ownChildren.Lock()
	defer ownChildren.Unlock()
	return ownChildren.pids[pid]
}

// contain puts the agent cmd will start into a cgroup of its own (see cgroupRun) and says
// what its processes are held by; release closes what contain opened once cmd has started.
func contain(cmd *exec.Cmd) (cgroup string, c record.Containment, release func()) {
	// The run's cgroup is made by the watchdog's first start: a launch that comes before the
	// start the CLI began on a goroutine has finished waits for it here (before, such a launch
	// ran without a cgroup, one run in three here).
	_ = StartWatchdog()
	dir, fd := newLaunchCgroup()
	if dir == "" {
		c.Note = "no cgroup: " + runCgroup().why + "; the sweeps rest on the run marker, the process group and session and the process tree (this host is a subreaper), which a process that scrubs its environment, leaves the session and is orphaned escapes once this host is gone (its watchdog finds it by the marker only)"
		return "", c, func() {}
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	c.Cgroup = true
	return dir, c, func() { unix.Close(fd) }
}

// afterLaunch returns the agent's start time (the floor of its scope's sweeps).
func afterLaunch(pid int) uint64 {
	var sc scanner
	st, _ := sc.stat(pid)
	return st.start
}

// exitedNow reports whether the child pid has exited, without reaping it (exec.Cmd.Wait
// does that).
func exitedNow(pid int) bool {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		switch err {
		case unix.EINTR:
			continue
		case unix.ECHILD:
			return true // reaped already
		case nil:
			// With WNOHANG and no exited child, the kernel leaves the siginfo zeroed.
			return info.Signo == int32(unix.SIGCHLD)
		}
		return false
	}
}
