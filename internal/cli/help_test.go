package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite the golden help files")

// TestHelpGolden holds the help of acpprobe and of every command against its golden file
// (testdata/help; -update rewrites them): what a user reads is reviewed as text. Every line
// fits helpWidth (but a word longer than it, a URL), and every flag is spelled with two
// dashes.
func TestHelpGolden(t *testing.T) {
	pages := map[string][]string{"acpprobe": {"help"}}
	for _, c := range commands() {
		if c.name != "agent" && c.name != "version" {
			pages[c.name] = []string{"help", c.name}
		}
	}
	for name, args := range pages {
		t.Run(name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Main(context.Background(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut}); code != ExitOK {
				t.Fatalf("%v: exit %d, stderr %q", args, code, errOut.String())
			}
			for _, line := range strings.Split(out.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > helpWidth && len(strings.Fields(line)) > 1 {
					t.Errorf("a line of %d columns: %q", n, line)
				}
				if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
					t.Errorf("a flag spelled with one dash: %q", line)
				}
			}
			golden := filepath.Join("testdata", "help", name+".txt")
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/cli -run TestHelpGolden -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("help differs from %s (-update rewrites it):\n%s", golden, out.String())
			}
		})
	}
}
