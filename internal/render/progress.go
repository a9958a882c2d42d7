package render

import (
	"fmt"
	"io"
	"sync"

	"github.com/acpprobe/acpprobe/matrix"
)

// Progress reports a matrix as it runs: on a terminal a live line per agent, redrawn in place;
// otherwise one line per finished agent. Update may be called from several goroutines (it is
// matrix.Options.Progress). Progress is best effort: a write error is not reported.
type Progress struct {
	w     io.Writer
	tty   bool
	mu    sync.Mutex
	lines []string
	drawn int
}

// NewProgress starts the progress of the agents ids on w; tty says that w is a terminal
// (redrawn in place).
func NewProgress(w io.Writer, ids []string, tty bool) *Progress {
	p := &Progress{w: w, tty: tty, lines: make([]string, len(ids))}
	for i, id := range ids {
		p.lines[i] = fmt.Sprintf("  %-24s waiting", id)
	}
	return p
}

// Update records that an agent started or finished.
func (p *Progress) Update(e matrix.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("  %-24s probing…", e.ID)
	if e.Done {
		line = fmt.Sprintf("  %-24s %s (%.1fs)", e.ID, Status(*e.Row), e.Elapsed.Seconds())
		if !p.tty {
			fmt.Fprintln(p.w, "acpprobe matrix:"+line)
		}
	}
	p.lines[e.Index] = line
	if p.tty {
		p.redraw()
	}
}

// Finish draws the final state on a terminal.
func (p *Progress) Finish() {
	if p.tty {
		p.mu.Lock()
		p.redraw()
		p.mu.Unlock()
	}
}

func (p *Progress) redraw() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA", p.drawn)
	}
	for _, l := range p.lines {
		fmt.Fprintf(p.w, "\x1b[2K%s\n", Cut(l, 120))
	}
	p.drawn = len(p.lines)
}
