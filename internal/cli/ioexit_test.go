package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

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
