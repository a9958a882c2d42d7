//go:build unix && !linux

package transport

import "syscall"

func newProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// GroupAlive reports whether any process belongs to process group pgid.
func GroupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

func exitedNow(pid int) bool { return false }
