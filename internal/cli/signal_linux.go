package cli

import (
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// raise sends sig to the calling thread with its disposition set to the system default
// (SIG_DFL) by rt_sigaction, beneath the Go runtime, which never gives up its handler for the
// signals it treats as crashes. SIG_DFL is 0 and the other fields of the kernel's sigaction
// are then unused, so an all-zero struct larger than any architecture's says it (the signal
// set size is 8 bytes where Linux has 64 signals; where it is not, the call fails, the Go
// runtime's action stands and dieBySignal exits with 128+signal after it). The goroutine stays on its thread, whose
// signal mask the runtime keeps open, so the signal is delivered before tgkill returns.
func raise(sig syscall.Signal) {
	runtime.LockOSThread()
	var act [64]byte
	const sigsetSize = 8
	// SIGKILL's disposition cannot be set (EINVAL), nor needs to be.
	_, _, _ = unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, sigsetSize, 0, 0)
	_ = unix.Tgkill(unix.Getpid(), unix.Gettid(), sig)
}
