package cli

import (
	"testing"

	"github.com/acpprobe/acpprobe/probe"
)

func TestExitCode(t *testing.T) {
	cases := map[probe.ErrorCode]int{
		"":                         ExitOK,
		probe.ErrAuthRequired:      ExitAuth,
		probe.ErrInterrupted:       ExitInterrupted,
		probe.ErrSpawnFailed:       ExitNotProbed,
		probe.ErrInitializeTimeout: ExitNotProbed,
		probe.ErrSessionNewTimeout: ExitNotProbed,
		probe.ErrProtocolMismatch:  ExitNotProbed,
		probe.ErrAgentCrashed:      ExitNotProbed,
		probe.ErrUnknown:           ExitNotProbed,
	}
	for code, want := range cases {
		r := &probe.Result{}
		if code != "" {
			r.Error = &probe.Error{Code: code}
		}
		if got := exitCode(r); got != want {
			t.Errorf("exitCode(%q) = %d, want %d", code, got, want)
		}
	}
}
