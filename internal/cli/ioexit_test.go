package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/internal/cli"
)

// failingWriter is an output that cannot be written: a closed pipe, a full disk.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestFileErrorsExitIO: a file that cannot be read or parsed, and output that cannot be
// written, exit ExitIO with a line that says what failed — not 2 (usage) or 3 (could not
// probe), as they did before exit codes were chosen in one place.
func TestFileErrorsExitIO(t *testing.T) {
	fixture := filepath.Join("..", "..", "testdata", "v1", "probe-hang.ndjson")
	cases := []struct {
		name string
		args []string
		out  io.Writer
		want string // the error line starts with it
	}{
		{"missing transcript", []string{"analyze", filepath.Join(t.TempDir(), "missing.ndjson")}, &bytes.Buffer{}, "acpprobe analyze: cannot read the transcript: open "},
		{"JSON result not written", []string{"analyze", "--json", fixture}, failingWriter{}, "acpprobe analyze: cannot write the result: disk full\n"},
		{"text result not written", []string{"analyze", fixture}, failingWriter{}, "acpprobe analyze: cannot write the result: disk full\n"},
		{"check list not written", []string{"check", "--list", "--json"}, failingWriter{}, "acpprobe check: cannot write the list of checks: disk full\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var errOut bytes.Buffer
			code := cli.Main(context.Background(), c.args, cli.Stdio{In: strings.NewReader(""), Out: c.out, Err: &errOut})
			if code != cli.ExitIO {
				t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, cli.ExitIO, errOut.String())
			}
			if !strings.HasPrefix(errOut.String(), c.want) {
				t.Errorf("%v: stderr %q, want it to start with %q", c.args, errOut.String(), c.want)
			}
		})
	}
}

// TestBaselineThatIsNoFile: a --baseline that is a FIFO (nothing ever writes it) or a device
// that never ends is a clear error at once, exit ExitIO, before any agent starts; reading it
// whole blocked check and analyze forever (and they ignored SIGTERM while blocked), or grew
// without bound on /dev/zero.
func TestBaselineThatIsNoFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "baseline.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	transcript := filepath.Join("..", "..", "testdata", "v1", "probe-hang.ndjson")
	for _, path := range []string{fifo, "/dev/zero"} {
		for _, args := range [][]string{
			{"check", "--baseline", path, "--", "acpprobe-no-such-agent"},
			{"analyze", "--baseline", path, transcript},
		} {
			t.Run(args[0]+" "+filepath.Base(path), func(t *testing.T) {
				var errOut bytes.Buffer
				done := make(chan int, 1)
				go func() {
					done <- cli.Main(context.Background(), args, cli.Stdio{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errOut})
				}()
				select {
				case code := <-done:
					if code != cli.ExitIO || !strings.Contains(errOut.String(), "cannot read --baseline") || !strings.Contains(errOut.String(), "not a regular file") {
						t.Errorf("%v: exit %d, stderr %q; want %d and a line that says the baseline is not a regular file", args, code, errOut.String(), cli.ExitIO)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%v: still reading the baseline after 10 s", args)
				}
			})
		}
	}
}
