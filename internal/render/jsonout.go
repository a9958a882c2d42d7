package render

import (
	"io"

	"github.com/acpprobe/acpprobe/internal/jsonout"
	"github.com/acpprobe/acpprobe/report"
)

// JSON writes v as JSON followed by a newline, as jsonout.Indent writes it: indented where
// the Go types of v give it a shape, what an agent sent compact on the line of its key (so the
// output stays proportional to v however deep an agent nests), strings safe for a terminal.
func JSON(w io.Writer, v any) error {
	b, err := jsonout.Indent(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// JSONLine writes v as one line of compact JSON (NDJSON), as the tap's --findings file holds
// them, with strings safe for a terminal (jsonout.Hidden).
func JSONLine(w io.Writer, v any) error {
	b, err := jsonout.Line(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WarmResultJSON builds, once per process, what the first result written as JSON costs
// beyond its own bytes: the encoders of report.Result's types, which encoding/json makes by
// reflection on first use (about a millisecond and a half for the result's types, most of
// what writing a short probe's result costs). A command that will write its result as JSON
// calls it on a goroutine of its own as its agent starts, while it waits for the agent anyway.
func WarmResultJSON() { _, _ = jsonout.Indent(&report.Result{}) }
