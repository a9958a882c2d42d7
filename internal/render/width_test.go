package render_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
)

// textWriters are the writers of text for people, over the test data of this package.
func textWriters(t *testing.T) map[string]func(io.Writer) error {
	m := testMatrix(t)
	docs := testCatalogue(t)
	w := map[string]func(io.Writer) error{
		"MatrixText":     func(w io.Writer) error { return render.MatrixText(w, m) },
		"Catalogue":      func(w io.Writer) error { return render.Catalogue(w, docs) },
		"CheckList":      func(w io.Writer) error { return render.CheckList(w, testChecks) },
		"Agents":         func(w io.Writer) error { return render.Agents(w, testIndex, testAgents) },
		"Diff":           func(w io.Writer) error { return render.Diff(w, testChanges) },
		"ClientFindings": func(w io.Writer) error { return render.ClientFindings(w, testFindings) },
		"Progress": func(w io.Writer) error {
			p := render.NewProgress(w, []string{m.Rows[3].ID})
			p.Update(matrix.Event{Index: 0, ID: m.Rows[3].ID, Done: true, Row: &m.Rows[3]})
			return nil
		},
	}
	for _, name := range []string{"check-claude", "check-codebuddy", "check-codex", "check-faults", "probe-crash", "probe-hang"} {
		r := v1(t, name)
		w["Text "+name] = func(w io.Writer) error { return render.Text(w, r) }
	}
	for _, name := range resultFixtures {
		r := loadResult(t, filepath.Join("testdata", name+".result.json"))
		w["Text "+name] = func(w io.Writer) error { return render.Text(w, r) }
	}
	return w
}

// resultFixtures are the results of testdata/*.result.json.
var resultFixtures = []string{"spawn-failure", "check-baseline", "turn-faults", "side-effects", "turn-claude-agent-acp", "turn-codex-acp"}

// TestFileWidth (issue 20 item 6, issue 25 item 10): written where the width is not known (a
// file, a pipe, a writer that is not a Screen), no line of any text writer, nor of any golden
// file, is wider than render.DefaultWidth; a golden made at a width (name-W) fits that width.
// The exceptions are the layouts README names: the matrix as the full table (a file keeps
// every column; TestMatrixFull) and as Markdown, the tap's lines (one a finding, for an
// editor's log), the progress redrawn on a terminal.
func TestFileWidth(t *testing.T) {
	for name, f := range textWriters(t) {
		if name == "MatrixText" {
			continue
		}
		for i, line := range strings.Split(string(write(t, f)), "\n") {
			if n := render.Width(line); n > render.DefaultWidth {
				t.Errorf("%s in a file: line %d is %d wide: %q", name, i+1, n, line)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil || len(files) < 20 {
		t.Fatalf("want the golden files of testdata, found %d (%v)", len(files), err)
	}
	sized := regexp.MustCompile(`-([0-9]+)(\.txt)?$`)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".golden")
		switch {
		case name == "matrix.txt", name == "matrix.md", strings.HasPrefix(name, "tap"), name == "progress-tty":
			continue
		}
		width := render.DefaultWidth
		if m := sized.FindStringSubmatch(name); m != nil {
			width, _ = strconv.Atoi(m[1])
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if n := render.Width(line); n > width {
				t.Errorf("%s: line %d is %d wide (more than %d): %q", file, i+1, n, width, line)
			}
		}
	}
}

// TestFitsWidth (issue 13, item 18): on a Screen of a known width, no line of any text writer
// is wider.
func TestFitsWidth(t *testing.T) {
	for name, f := range textWriters(t) {
		for _, width := range []int{30, 40, 60, 80, 100, 120} {
			out := string(write(t, func(w io.Writer) error { return f(&render.Screen{W: w, Width: width}) }))
			for i, line := range strings.Split(out, "\n") {
				if n := render.Width(line); n > width {
					t.Errorf("%s at %d columns: line %d is %d wide: %q", name, width, i+1, n, line)
				}
			}
		}
	}
}

// TestWidthGolden: the layouts for a terminal, at widths where the matrix fits whole (none
// here), loses columns (120, 80), and goes vertical (30); the report and the agent list
// wrapped at 80.
func TestWidthGolden(t *testing.T) {
	m := testMatrix(t)
	for _, width := range []int{120, 80, 30} {
		golden(t, fmt.Sprintf("matrix-%d.txt", width), write(t, func(w io.Writer) error {
			return render.MatrixText(&render.Screen{W: w, Width: width}, m)
		}))
	}
	golden(t, "text-check-codex-80", write(t, func(w io.Writer) error {
		return render.Text(&render.Screen{W: w, Width: 80}, v1(t, "check-codex"))
	}))
	golden(t, "agents-60", write(t, func(w io.Writer) error {
		return render.Agents(&render.Screen{W: w, Width: 60}, testIndex, testAgents)
	}))
}

// TestMatrixFull: a terminal wide enough gets the full table, the one a file gets.
func TestMatrixFull(t *testing.T) {
	m := testMatrix(t)
	file := write(t, func(w io.Writer) error { return render.MatrixText(w, m) })
	wide := write(t, func(w io.Writer) error { return render.MatrixText(&render.Screen{W: w, Width: 1000}, m) })
	// The table, above the reasons (laid out to the width: 80 columns in a file).
	table := func(b []byte) string { s, _, _ := strings.Cut(string(b), "\n\nNot ok\n"); return s }
	if table(file) != table(wide) || !strings.Contains(string(file), "\n\nNot ok\n") {
		t.Errorf("at 1000 columns the matrix is not the full table:\n%s", wide)
	}
}
