package render

import (
	"io"
	"os"
	"strconv"
)

// Screen is an io.Writer with what is known of where the text goes: its Width in columns (0
// when unknown, as for a file or a pipe: lines are then laid out to DefaultWidth, and the
// matrix is the full table) and whether it takes ANSI control sequences (ANSI: the matrix
// progress is then redrawn in place). The text writers of this package lay their lines out
// for the Screen they are given (a writer that is not a Screen is a file: DefaultWidth,
// plain); the JSON writers ignore it.
type Screen struct {
	W     io.Writer
	Width int
	ANSI  bool
}

// Write writes to the underlying writer.
func (s *Screen) Write(p []byte) (int, error) { return s.W.Write(p) }

// ScreenOf describes w for the text writers, as the command line finds it. Width is $COLUMNS
// when that is a positive number (whatever w is: COLUMNS=100 acpprobe matrix | less), else
// the width of the terminal when w is one, else 0. ANSI is true only when w is a terminal,
// $TERM is not "dumb" and $NO_COLOR is unset or empty (https://no-color.org: acpprobe prints
// no colour, and NO_COLOR also turns its cursor movements off).
func ScreenOf(w io.Writer, getenv func(string) string) *Screen {
	s := &Screen{W: w}
	cols, tty := 0, false
	if f, ok := w.(*os.File); ok {
		cols, tty = terminalWidth(f)
	}
	if n, err := strconv.Atoi(getenv("COLUMNS")); err == nil && n > 0 {
		cols = n
	}
	s.Width = cols
	s.ANSI = tty && getenv("TERM") != "dumb" && getenv("NO_COLOR") == ""
	return s
}

// DefaultWidth is the width of the lines written where the width is not known (a file, a
// pipe, a writer that is not a Screen): 80 columns, the width people read a report at in a
// log, a mail or an issue.
const DefaultWidth = 80

// lineWidth is the width the lines of a text writer are laid out to: Width, or DefaultWidth
// when it is not known.
func (s *Screen) lineWidth() int {
	if s.Width > 0 {
		return s.Width
	}
	return DefaultWidth
}

// screenOf is the Screen of w: w itself, or a plain one of unknown width.
func screenOf(w io.Writer) *Screen {
	if s, ok := w.(*Screen); ok {
		return s
	}
	return &Screen{W: w}
}
