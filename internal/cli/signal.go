package cli

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// dieBySignal ends acpprobe with sig, the way the process it stands for ended (an agent
// stopped by SIGTERM, replayed or tapped), so that whoever waits for it sees the same thing a
// direct run would show: killed by a signal, not an exit status.
func dieBySignal(sig syscall.Signal) {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
	time.Sleep(5 * time.Second) // the signal ends the process before this returns
}

// signalByName maps the signal names transport.Exit records.
var signalByName = map[string]syscall.Signal{
	"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL, "SIGINT": syscall.SIGINT, "SIGHUP": syscall.SIGHUP,
	"SIGSEGV": syscall.SIGSEGV, "SIGABRT": syscall.SIGABRT, "SIGPIPE": syscall.SIGPIPE,
}
