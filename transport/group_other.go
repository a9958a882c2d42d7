//go:build unix && !linux

package transport

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

func newProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// GroupAlive reports whether any process belongs to process group pgid.
func GroupAlive(pgid int) bool { return syscall.Kill(-pgid, 0) == nil }

func beforeLaunch() uint64 { return 0 }
func addOwnChild(int)      {}
func removeOwnChild(int)   {}

// contain: no cgroups off Linux; only the group is signalled.
func contain(cmd *exec.Cmd) (string, record.Containment, func()) {
	return "", record.Containment{Note: "no cgroup, no sweep and no watchdog off Linux: only the agent's process group is signalled"}, func() {}
}

func watchLaunch(Marker, time.Time, string) func() { return func() {} }
func removeCgroup(string, time.Time) error         { return nil }
func dropLaunchCgroup(string, time.Duration)       {}

// RemoveIfKilled does nothing off Linux: there is no watchdog.
func RemoveIfKilled(dir string) func() { return func() {} }
func afterLaunch(pid int) uint64       { return 0 }
func exitedNow(pid int) bool           { return false }

// cleanUp signals what is left of the agent's group: SIGTERM, the settle window (a leftover
// gets no more of the grace, as on Linux), SIGKILL. Without /proc there is no sweep for
// processes that left the group.
func (p *Process) cleanUp(ctx context.Context, grace time.Duration) {
	if !GroupAlive(p.pid) {
		return
	}
	p.mu.Lock()
	p.exit.GroupKilled = true
	p.mu.Unlock()
	_ = syscall.Kill(-p.pid, syscall.SIGTERM)
	deadline := time.Now().Add(min(grace, SurvivorSettle))
	for GroupAlive(p.pid) && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
}
