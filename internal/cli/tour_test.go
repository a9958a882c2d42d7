package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestREADMETour (issue 25, item 12): the README's tour runs as written. Each line of its
// block (after the go build, which the test binary stands in for) is run in a fresh directory
// shared by the tour, with ./acpprobe the acpprobe of this test binary, and must exit with the
// code its comment says (0 when it says none).
func TestREADMETour(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "<!-- the tour: internal/cli's TestREADMETour runs each line and checks its exit code -->\n```sh\n")
	block, _, closed := strings.Cut(block, "```")
	if !ok || !closed {
		t.Fatal("README.md has no tour block")
	}
	self, err := exec.LookPath("acpprobe") // testscript.Main put it on PATH
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "acpprobe")); err != nil {
		t.Fatal(err)
	}
	exitSays := regexp.MustCompile(`exit (\d+)`)
	lines := strings.Split(strings.TrimSpace(block), "\n")
	if len(lines) < 5 || !strings.HasPrefix(lines[0], "go build -o acpprobe ") {
		t.Fatalf("the tour: %q, want the go build then the commands", lines)
	}
	for _, line := range lines[1:] {
		command, comment, _ := strings.Cut(line, "#")
		want := 0
		if m := exitSays.FindStringSubmatch(comment); m != nil {
			want, _ = strconv.Atoi(m[1])
		}
		args := strings.Fields(command)
		if len(args) == 0 || args[0] != "./acpprobe" {
			t.Errorf("%q: every line of the tour runs ./acpprobe", line)
			continue
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0") // agents that are -race test binaries: no exit sleep
		out, err := cmd.CombinedOutput()
		got := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if got != want {
			t.Errorf("%q: exit %d, the README says %d:\n%s", line, got, want, out)
		}
	}
}
