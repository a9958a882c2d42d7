package render

import (
	"fmt"
	"io"
	"sync"

	"github.com/acpprobe/acpprobe/matrix"
)

// progressWidth is the width of a redrawn line when the terminal's is not known.
const progressWidth = 120

// Progress reports a matrix as it runs: on a Screen that takes ANSI sequences a live line per
// agent, redrawn in place; anywhere else (a file, a pipe, TERM=dumb, NO_COLOR) one plain line
// per finished agent. Update may be called from several goroutines (it is
// matrix.Options.Progress). Progress is best effort: a write error is not reported.
type Progress struct {
	w     io.Writer
	ansi  bool
	width int
	mu    sync.Mutex
	lines []string
	drawn int
}

// NewProgress starts the progress of the agents ids on w (see Screen).
func NewProgress(w io.Writer, ids []string) *Progress {
	s := screenOf(w)
	p := &Progress{w: w, ansi: s.ANSI, width: s.lineWidth(), lines: make([]string, len(ids))}
	if p.ansi && s.Width <= 0 {
		p.width = progressWidth
	}
	for i, id := range ids {
		p.lines[i] = fmt.Sprintf("  %-24s waiting", Clean(id))
	}
	return p
}

// Update records that an agent started or finished.
func (p *Progress) Update(e matrix.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("  %-24s probing…", Clean(e.ID))
	if e.Done {
		line = fmt.Sprintf("  %-24s %s (%.1fs)", Clean(e.ID), Clean(Status(*e.Row)), e.Elapsed.Seconds())
		if !p.ansi {
			t := &textWriter{w: p.w, width: p.width}
			t.hang("acpprobe matrix:"+line, 4)
		}
	}
	p.lines[e.Index] = line
	if p.ansi {
		p.redraw()
	}
}

// Finish draws the final state on a terminal.
func (p *Progress) Finish() {
	if p.ansi {
		p.mu.Lock()
		p.redraw()
		p.mu.Unlock()
	}
}

// redraw moves the cursor up over the lines drawn before and draws them again, each cut to
// one line of the terminal (a line that wrapped would throw the count off).
func (p *Progress) redraw() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA", p.drawn)
	}
	for _, l := range p.lines {
		fmt.Fprintf(p.w, "\x1b[2K%s\n", Cut(l, p.width-1))
	}
	p.drawn = len(p.lines)
}
