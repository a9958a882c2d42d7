package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTapEndsAsTheAgentDid (issue 11, F12): an agent killed by a signal leaves the tap killed
// by the same signal, whatever the signal: what the editor waits for ends exactly as the agent
// alone would (a shell shows 128+signal), with nothing of acpprobe's own on its stderr — no Go
// runtime dump for the signals Go treats as crashes (SIGSEGV, SIGABRT, SIGQUIT), no plain
// exit 1 for those Go ignores (SIGUSR1).
func TestTapEndsAsTheAgentDid(t *testing.T) {
	sigs := []syscall.Signal{syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGQUIT, syscall.SIGBUS,
		syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGPIPE, syscall.SIGKILL}
	// A signal this test was started with ignored stays ignored in every process it starts,
	// across exec: nohup ignores SIGHUP, a shell's background job SIGINT and SIGQUIT. The
	// agent (sh) could then not kill itself with it, alone or under the tap. Caught here while
	// the test runs, each is back to its default action in the children: exec resets a caught
	// signal, never an ignored one.
	caught := make(chan os.Signal, 1)
	for _, sig := range sigs {
		if sig != syscall.SIGKILL {
			signal.Notify(caught, sig)
		}
	}
	defer signal.Stop(caught)
	for _, sig := range sigs {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			// The agent forbids itself a core file, and so must the tap.
			script := "ulimit -c 0; kill -" + strings.TrimPrefix(unix.SignalName(sig), "SIG") + " $$"
			direct := exec.Command("/bin/sh", "-c", script)
			var directErr bytes.Buffer
			direct.Stderr = &directErr
			if err := direct.Run(); waitSignal(t, err) != sig {
				t.Fatalf("the agent alone: %v, want killed by %v", err, sig)
			}

			tap := exec.Command("acpprobe", "tap", "--", "/bin/sh", "-c", script)
			var stdout, stderr bytes.Buffer
			tap.Stdout, tap.Stderr = &stdout, &stderr
			err := tap.Run()
			if got := waitSignal(t, err); got != sig {
				t.Errorf("the tap: %v (exit status %d), want killed by %v as the agent was", err, tap.ProcessState.ExitCode(), sig)
			}
			if stderr.Len() > directErr.Len() || strings.Contains(stderr.String(), "goroutine") {
				t.Errorf("the tap wrote %d bytes on the editor's stderr (the agent alone %d): %.200q", stderr.Len(), directErr.Len(), stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("the tap wrote on stdout: %q", stdout.String())
			}
		})
	}
}

// TestTapEndsAsTheAgentDidUnderNohup (issue 25, item 5): the test above holds when the test
// command is started with SIGHUP ignored (nohup scripts/test.sh): it runs again here, in this
// test binary started by nohup.
func TestTapEndsAsTheAgentDidUnderNohup(t *testing.T) {
	if os.Getenv("ACPPROBE_UNDER_NOHUP") != "" {
		t.Skip("already under nohup")
	}
	nohup, err := exec.LookPath("nohup")
	if err != nil {
		t.Skip("no nohup here")
	}
	cmd := exec.Command(nohup, os.Args[0], "-test.run=^TestTapEndsAsTheAgentDid$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ACPPROBE_UNDER_NOHUP=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestTapEndsAsTheAgentDid/SIGHUP") {
		t.Errorf("under nohup: %v\n%s", err, out)
	}
}

// waitSignal is the signal that killed a process that ended with err (0 if none did).
func waitSignal(t *testing.T, err error) syscall.Signal {
	t.Helper()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return 0
	}
	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}
