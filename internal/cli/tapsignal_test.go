package cli_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestTapForwardsSignals: a signal the editor sends the tap reaches the agent, as it would
// reach the agent run directly: the agent's handler runs and its exit is the tap's. SIGUSR1
// and SIGUSR2 were swallowed (Go ignores them unless asked), SIGQUIT ended the tap itself with
// a goroutine dump, and the agent never saw them.
func TestTapForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGQUIT, syscall.SIGHUP} {
		name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
		t.Run(name, func(t *testing.T) {
			script := `trap 'echo got-` + name + `; exit 7' ` + name + `; echo ready; while :; do sleep 0.05; done`
			tap := exec.Command("acpprobe", "tap", "--grace", "5s", "--", "/bin/sh", "-c", script)
			stdout, err := tap.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stderr bytes.Buffer
			tap.Stderr = &stderr
			if err := tap.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(stdout)
			if !lines.Scan() || lines.Text() != "ready" {
				tap.Process.Kill()
				t.Fatalf("first line %q, want ready", lines.Text())
			}
			if err := tap.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			var rest []string
			for lines.Scan() {
				rest = append(rest, lines.Text())
			}
			err = tap.Wait()
			if code := tap.ProcessState.ExitCode(); code != 7 || len(rest) != 1 || rest[0] != "got-"+name {
				t.Errorf("tap ended %v (code %d), agent's output after ready %q; want the agent's handler: got-%s, exit 7 (stderr %.300q)", err, code, rest, name, stderr.String())
			}
		})
	}
}
