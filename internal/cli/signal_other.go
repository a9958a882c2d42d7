//go:build !linux

package cli

import (
	"os"
	"syscall"
)

// raise sends sig to acpprobe. os/signal's Reset has restored the default action of the
// signals Go lets go (SIGTERM, SIGINT, SIGHUP); for the others dieBySignal exits with
// 128+signal.
func raise(sig syscall.Signal) { _ = syscall.Kill(os.Getpid(), sig) }
