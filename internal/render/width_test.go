package render_test

import (
	"fmt"
	"io"
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
	return w
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
	if string(file) != string(wide) {
		t.Errorf("at 1000 columns the matrix is not the full table:\n%s", wide)
	}
}
