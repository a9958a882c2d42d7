package transport

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
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
// re-parented to the host, where the sweep can still reap what it kills. It arms the
// watchdog before the agent exists (at once when it runs already), so that no moment of the
// agent's life is uncovered, and returns the kernel's fork count, which bounds the agent's
// sweeps (see scanner.window).
func beforeLaunch() (forks uint64) {
	subreaper.Do(func() { _ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
	_ = StartWatchdog()
	var sc scanner
	return sc.forks()
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
