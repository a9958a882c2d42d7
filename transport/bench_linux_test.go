package transport

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/record"
)

// cpuMs is the CPU time (user+sys) of this process, or of its reaped children, in ms.
func cpuMs(who int) float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(who, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// BenchmarkLaunchShutdown is one agent's life as the host sees it: Launch of cat, then
// Shutdown (it leaves on stdin EOF), marker, sweep and reaping included. host-cpu-ms/op is
// the host's own CPU (cat's is not in it).
func BenchmarkLaunchShutdown(b *testing.B) {
	if err := StartWatchdog(); err != nil { // once per host: not part of an agent's life
		b.Fatal(err)
	}
	var launch time.Duration
	cpu := cpuMs(syscall.RUSAGE_SELF)
	for b.Loop() {
		start := time.Now()
		a, err := Command{Argv: []string{"cat"}}.Launch(context.Background(), nil)
		if err != nil {
			b.Fatal(err)
		}
		launch += time.Since(start)
		go io.Copy(io.Discard, a.Stdout()) // Shutdown waits for the output to be drained
		if x := a.Shutdown(context.Background(), Patient(5*time.Second)); x.By != record.ExitStdin {
			b.Fatalf("exit %+v", x)
		}
	}
	b.ReportMetric(float64(launch.Microseconds())/1000/float64(b.N), "launch-ms/op")
	b.ReportMetric((cpuMs(syscall.RUSAGE_SELF)-cpu)/float64(b.N), "host-cpu-ms/op")
}

// BenchmarkSweep is one sweep of /proc: for an agent's scope (only processes started after
// the agent have their environment read), and for a scope with no start-time floor (every
// process's environment is read: the worst case).
func BenchmarkSweep(b *testing.B) {
	a, err := Command{Argv: []string{"cat"}}.Launch(context.Background(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Shutdown(context.Background(), Ladder{})
	for _, bc := range []struct {
		name  string
		scope Scope
	}{
		{"agent", a.(*Process).Scope()},
		{"no-floor", Scope{Marker: newMarker()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var sc scanner
			for b.Loop() {
				if _, err := sc.scan(bc.scope.matcher()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatchdogLife is one watchdog's life: started (exec of this binary, up to the
// init function that recognises it), armed, told the host has gone, its empty sweep, its
// exit. child-cpu-ms/op is the watchdog's own CPU.
func BenchmarkWatchdogLife(b *testing.B) {
	var armed time.Duration
	cpu := cpuMs(syscall.RUSAGE_CHILDREN)
	for b.Loop() {
		start := time.Now()
		cmd, w, err := spawnWatchdog()
		if err != nil {
			b.Fatal(err)
		}
		armed += time.Since(start)
		w.Close()
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(armed.Microseconds())/1000/float64(b.N), "armed-ms/op")
	b.ReportMetric((cpuMs(syscall.RUSAGE_CHILDREN)-cpu)/float64(b.N), "child-cpu-ms/op")
}

// BenchmarkCgroupLife is what a launch's cgroup costs the host, the agent aside: its mkdir
// and the descriptor clone3 puts the agent in with, the kill of what is left in it
// (cgroup.kill, as the teardown writes it once the agent has gone) and its removal. Skipped
// where this process gets no cgroups. BenchmarkLaunchShutdown with and without them
// (TRANSPORT_TEST_NOCGROUP=1) gives the whole difference, clone3 included.
func BenchmarkCgroupLife(b *testing.B) {
	if on, why := CgroupsAvailable(); !on { // the watchdog removes the run's cgroup at exit
		b.Skip("no cgroups here: " + why)
	}
	for b.Loop() {
		dir, fd := makeLaunchCgroup()
		if dir == "" {
			b.Fatal("no launch cgroup")
		}
		unix.Close(fd)
		if err := killCgroup(dir); err != nil {
			b.Fatal(err)
		}
		if err := removeCgroup(dir, time.Now().Add(time.Second)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCgroupProcs is the cgroup's share of a sweep: listing its processes.
func BenchmarkCgroupProcs(b *testing.B) {
	if on, why := CgroupsAvailable(); !on { // the watchdog removes the run's cgroup at exit
		b.Skip("no cgroups here: " + why)
	}
	dir, fd := makeLaunchCgroup()
	unix.Close(fd)
	defer removeCgroup(dir, time.Now())
	var buf []byte
	for b.Loop() {
		cgroupProcs(dir, &buf)
	}
}
