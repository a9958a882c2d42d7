package transport

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

func newProcAttr() *syscall.SysProcAttr {
	// Setsid: a session of its own, so no controlling terminal (see the package doc); the
	// session is also the process group. Pdeathsig: if the host dies, the kernel kills the
	// agent instead of orphaning it.
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}

// GroupAlive reports whether any live (non-zombie) process belongs to process group pgid.
// Zombies do not count: they run nothing and are reaped by whoever inherited them.
func GroupAlive(pgid int) bool {
	if syscall.Kill(-pgid, 0) != nil {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// Fields after the command name (which may hold spaces) start after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(stat[i+1:])
		if len(fields) < 3 {
			continue
		}
		state, pgrp := string(fields[0]), string(fields[2])
		if pgrp == strconv.Itoa(pgid) && state != "Z" && state != "X" {
			return true
		}
	}
	return false
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
