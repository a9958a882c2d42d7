//go:build !linux

package transport

import (
	"errors"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// Sweep lists the live processes in scope. It needs Linux's /proc: elsewhere it returns
// errors.ErrUnsupported.
func Sweep(s Scope) ([]record.Proc, error) { return nil, errors.ErrUnsupported }

// Kill kills the processes in scope. It needs Linux's /proc and pidfds: elsewhere it
// returns errors.ErrUnsupported.
func Kill(s Scope, at record.Moment, bound time.Duration) ([]record.Survivor, error) {
	return nil, errors.ErrUnsupported
}

// StartWatchdog starts the watchdog of this host process. It needs Linux: elsewhere it
// returns errors.ErrUnsupported.
func StartWatchdog() error { return errors.ErrUnsupported }

// RunOver tells the watchdog the run is over; without a watchdog it does nothing.
func RunOver() {}
