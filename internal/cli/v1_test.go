package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/internal/cli"
)

// TestFormatV1Transcripts keeps old recordings readable: testdata/v1 (at the module root) holds
// transcripts written by acpprobe before the typed record (format 1: probe, check with prompt
// shapes and --deep, a crash, a hang, agent faults, a tap session) and the reports
// `acpprobe analyze` printed for them then (*.result.json, *.result.txt). Today's analyze must
// print the same bytes and exit the same way. A deliberate change of a report updates the
// expected file in the same commit, saying why; the transcripts themselves never change.
func TestFormatV1Transcripts(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "v1")
	files, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	if err != nil || len(files) < 8 {
		t.Fatalf("want the format-1 fixtures in %s, found %d (%v)", dir, len(files), err)
	}
	exits := map[string]int{"check-codex": cli.ExitAuth, "check-faults": cli.ExitFindings, "probe-crash": cli.ExitNotProbed, "probe-hang": cli.ExitNotProbed}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".ndjson")
		t.Run(name, func(t *testing.T) {
			for _, format := range []struct{ flag, ext string }{{"--json", ".result.json"}, {"", ".result.txt"}} {
				args := []string{"analyze", file}
				if format.flag != "" {
					args = []string{"analyze", format.flag, file}
				}
				var out, errOut bytes.Buffer
				code := cli.Main(context.Background(), args, cli.Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
				if code != exits[name] {
					t.Errorf("analyze %s: exit %d, want %d (stderr %s)", format.flag, code, exits[name], errOut.String())
				}
				want, err := os.ReadFile(filepath.Join(dir, name+format.ext))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), want) {
					t.Errorf("analyze %s of %s differs from %s:\n%s", format.flag, name, name+format.ext, out.String())
				}
			}
		})
	}
}
