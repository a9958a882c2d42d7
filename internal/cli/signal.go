package cli

import (
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"golang.org/x/sys/unix"
)

// dieBySignal ends acpprobe with sig, the way the process it stands for ended (an agent
// stopped by SIGTERM, replayed or tapped), so that whoever waits for it sees the same thing a
// direct run would show: killed by that signal (a shell says 128+signal), not an exit status.
//
// The Go runtime keeps its own handler for some signals whatever os/signal is told: SIGSEGV,
// SIGABRT or SIGQUIT would make it print a goroutine dump and exit 2, and it ignores SIGUSR1.
// So the system's default action is restored underneath it (raise), with core files off: the
// crash was the agent's, and acpprobe must not leave a core of its own. Should the signal not
// end the process (one whose default action is to ignore or stop), acpprobe exits with
// 128+signal.
func dieBySignal(sig syscall.Signal) {
	signal.Reset(sig)
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	raise(sig)
	time.Sleep(100 * time.Millisecond) // a signal that ends the process does so before this returns
	os.Exit(128 + int(sig))
}

// agentEnd is how acpprobe ends when it stands for an agent that ended with x: with its exit
// status, or killed by its signal (status 128+signal); 1 when neither is known.
func agentEnd(x record.ExitInfo) *agentExit {
	if x.Code != nil {
		return &agentExit{status: *x.Code}
	}
	if sig, ok := signalNumber(x.Signal); ok {
		return &agentExit{status: 128 + int(sig), signal: sig}
	}
	return &agentExit{status: 1}
}

// signalNumber reads a signal name as record.ExitInfo records it: "SIGTERM", or "signal 10"
// for a signal the system does not name.
func signalNumber(name string) (syscall.Signal, bool) {
	if s := unix.SignalNum(name); s > 0 {
		return s, true
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(name, "signal ")); err == nil && n > 0 && n < 65 {
		return syscall.Signal(n), true
	}
	return 0, false
}
