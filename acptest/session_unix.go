//go:build unix

package acptest

import (
	"os/exec"
	"syscall"
)

// leaveSession makes cmd start in a session (and process group) of its own.
func leaveSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
