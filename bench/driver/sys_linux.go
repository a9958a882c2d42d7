package main

import "syscall"

// becomeSubreaper makes the driver inherit the orphans of its descendants (PR_SET_CHILD_SUBREAPER),
// so that it can reap the agents bench/agentshim leaves unreaped.
func becomeSubreaper() error {
	const prSetChildSubreaper = 36
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// maxrssKB converts ru_maxrss to KiB (Linux reports KiB).
func maxrssKB(v int64) int64 { return v }
