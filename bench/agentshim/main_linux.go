// Command agentshim stands between a benchmarked client and the agent, so that the driver can
// tell the client's own CPU time and peak RSS from the agent's.
//
//	agentshim REPORT -- agent [args...]
//
// It starts the agent on its own stdin, stdout and stderr (inherited: no copying), appends
// "agent PID" to REPORT, waits for the agent to end without reaping it (waitid WNOWAIT),
// appends "shim PID UTIME_US STIME_US MAXRSS_KB LIFE_US" (its agent's pid, its own usage, and the time from its
// start to the agent's end: the agent's life as the client sees it) and exits the way the
// agent did. A client that starts the agent more than once in a run (check's fork-probe and
// --deep connections) runs a shim per agent process: each appends its own pair of lines (same status, or the same signal). The agent's zombie is then re-parented to the driver,
// a child subreaper, which reaps it and so gets the agent's usage; the client reaps only the
// shim, so its usage (wait4) holds the client and the shim, never the agent. SIGTERM, SIGINT
// and SIGHUP sent to the process group reach the agent; the shim outlives them.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	start := time.Now()
	if len(os.Args) < 4 || os.Args[2] != "--" {
		fmt.Fprintln(os.Stderr, "usage: agentshim REPORT -- agent [args...]")
		os.Exit(2)
	}
	report, argv := os.Args[1], os.Args[3:]
	fail := func(err error) { fmt.Fprintln(os.Stderr, "agentshim:", err); os.Exit(127) }
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fail(err)
	}
	signal.Notify(make(chan os.Signal, 16), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	p, err := os.StartProcess(path, argv, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fail(err)
	}
	f, err := os.OpenFile(report, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		fail(err)
	}
	fmt.Fprintf(f, "agent %d\n", p.Pid) // one write each: appends of shims running at once do not mix
	// Our copies of the pipes must not keep the client from seeing the agent's EOF.
	os.Stdin.Close()
	os.Stdout.Close()

	var info [128]byte // siginfo_t
	const pPID, wEXITED, wNOWAIT = 1, 4, 0x1000000
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(p.Pid), uintptr(unsafe.Pointer(&info[0])), wEXITED|wNOWAIT, 0, 0)
		if errno == 0 {
			break
		}
		if errno != syscall.EINTR {
			fail(errno)
		}
	}
	life := time.Since(start)
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Fprintf(f, "shim %d %d %d %d %d\n", p.Pid, ru.Utime.Nano()/1000, ru.Stime.Nano()/1000, ru.Maxrss, life.Microseconds())
	f.Close()

	// siginfo_t: si_code at 8; the union (si_pid, si_uid, si_status) starts after three ints,
	// aligned to a pointer.
	union := 12
	if unsafe.Sizeof(uintptr(0)) == 8 {
		union = 16
	}
	code := *(*int32)(unsafe.Pointer(&info[8]))
	status := int(*(*int32)(unsafe.Pointer(&info[union+8])))
	const cldExited = 1
	if code == cldExited {
		os.Exit(status)
	}
	sig := syscall.Signal(status)
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	os.Exit(128 + status)
}
