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

	"github.com/acpprobe/acpprobe/internal/buildinfo"
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

// TestVersionSaysHowToStamp (issue 25, item 2): a binary with nothing stamped says devel, and
// on stderr why and how to build one that says its commit or version; a stamped one says only
// its version.
func TestVersionSaysHowToStamp(t *testing.T) {
	read := buildinfo.Read
	defer func() { buildinfo.Read = read }()
	for _, c := range []struct {
		info      buildinfo.Info
		out, note string
	}{
		{buildinfo.Info{GoVersion: "go1.26.0"}, "acpprobe devel (go1.26.0)\n", "acpprobe version: note: " + unstamped + "\n"},
		{buildinfo.Info{GoVersion: "go1.26.0", Version: "v1.2.3"}, "acpprobe v1.2.3 (go1.26.0)\n", ""},
		{buildinfo.Info{GoVersion: "go1.26.0", Revision: "02edd81fdac56c6a771ec49332c672fb384fda96"},
			"acpprobe devel+02edd81fdac5 (commit 02edd81fdac56c6a771ec49332c672fb384fda96, go1.26.0)\n", ""},
	} {
		buildinfo.Read = func() buildinfo.Info { return c.info }
		var out, errOut bytes.Buffer
		if code := Main(context.Background(), []string{"version"}, Stdio{Out: &out, Err: &errOut}); code != ExitOK {
			t.Fatalf("exit %d", code)
		}
		if out.String() != c.out || errOut.String() != c.note {
			t.Errorf("%+v: stdout %q, stderr %q; want %q, %q", c.info, out.String(), errOut.String(), c.out, c.note)
		}
	}
	if !strings.Contains(unstamped, "-buildvcs=false") || !strings.Contains(unstamped, "go install ./cmd/acpprobe") {
		t.Errorf("the note does not say the cause and the fix: %q", unstamped)
	}
}
