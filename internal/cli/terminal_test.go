package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/report"
)

// TestErrorLineInert (issue 11, F4): the error line shows what an agent said, never as raw
// control characters.
func TestErrorLineInert(t *testing.T) {
	const attack = "\x1b]0;pwned\x07\x1b[2Jfake\rREAL\u202eevil\u009b31m\n  fake line"
	r := &report.Result{Error: &report.Error{Code: report.ErrAgentCrashed, Stage: "initialize", Message: "the agent said " + attack}}
	for _, err := range []error{
		&resultError{r: r, note: attack},
		&resultError{r: r, because: "npm: no version " + attack, hint: attack}, // npm's lines are the agent's stderr
		withJSON(&resultError{r: r, because: "npm: no version " + attack, hint: attack}, true),
		&errNotRunnable{err: errors.New(attack), note: attack},
		&agentExit{status: 3, err: errors.New(attack)},
		usagef("unknown agent %q", attack),
		errors.New(attack),
		withJSON(&resultError{r: r}, true),
	} {
		var b bytes.Buffer
		printError(&b, "probe", err, exitCode(err))
		out := b.String()
		// A note has a line of its own; every line starts with the program's name.
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			if strings.ContainsAny(line, "\x1b\x07\r\u202e\u009b") || !strings.HasPrefix(line, "acpprobe") && !strings.HasPrefix(line, "{") {
				t.Errorf("%T: raw control characters or a forged line in the error output %q", err, out)
			}
		}
		if !strings.Contains(out, "pwned") {
			t.Errorf("%T: the agent's message is not shown: %q", err, out)
		}
	}
}

// TestErrorNoGoTypes (issue 13, item 18): a file of the wrong shape is reported in JSON's
// terms, never with Go's type names.
func TestErrorNoGoTypes(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"number.json": `{"schema":5}`,
		"argv.json":   `{"schema":"acpprobe.result/v1","agent":{"argv":"x"}}`,
		"array.json":  `[1]`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := Main(context.Background(), []string{"diff", path, path}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
		line := errOut.String()
		if code != ExitIO || !strings.Contains(line, "got JSON") {
			t.Errorf("diff of %s: exit %d, %q; want %d and the JSON type named", name, code, line, ExitIO)
		}
		for _, goName := range []string{"Go struct", "Go value", "int64", "[]string", "struct {", "AgentRef"} {
			if strings.Contains(line, goName) {
				t.Errorf("diff of %s: the error line names a Go type (%s): %q", name, goName, line)
			}
		}
	}
}
