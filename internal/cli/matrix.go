package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/transcript"
)

// runMatrix probes several agents concurrently and renders their capability matrix.
func runMatrix(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("matrix")
	var pf probeFlags
	pf.register(fs, false)
	parallel := fs.Int("parallel", matrix.DefaultParallel, "agents probed at once")
	format := fs.String("format", "text", "output: text, md, json or html")
	outDir := fs.String("out", "", "directory for each agent's result (<id>.json) and transcript (<id>.ndjson), and matrix.json")
	if err := parseFlags(fs, args, "acpprobe matrix [IDS...] [--config FILE] [--parallel N] [--format text|md|json|html] [--out DIR]", stdio.Out); err != nil {
		return failUsage(stdio, "matrix", err)
	}
	if pf.json {
		*format = "json"
	}
	writer, ok := map[string]func(io.Writer, *matrix.Matrix) error{
		"text": render.MatrixText, "md": render.MatrixMarkdown, "markdown": render.MatrixMarkdown,
		"json": func(w io.Writer, m *matrix.Matrix) error { return render.JSON(w, m) }, "html": render.MatrixHTML,
	}[*format]
	if !ok {
		return failUsage(stdio, "matrix", usagef("--format %q: want text, md, json or html", *format))
	}
	if *parallel < 1 {
		return failUsage(stdio, "matrix", usagef("--parallel %d: want at least 1", *parallel))
	}
	ids := fs.Args()
	if len(ids) == 0 && pf.agents.configFile != "" {
		entries, err := registry.LoadConfig(pf.agents.configFile)
		if err != nil {
			return failUsage(stdio, "matrix", usagef("--config: %v", err))
		}
		for _, e := range entries {
			ids = append(ids, e.ID)
		}
	}
	if len(ids) == 0 {
		return failUsage(stdio, "matrix", usagef("name the agents (ids from 'acpprobe agents'), or give --config FILE to probe all its agents"))
	}
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	var targets []matrix.Target
	for _, id := range ids {
		opts, source, err := pf.resolve(id, explicit)
		var nr *errNotRunnable
		switch {
		case errors.As(err, &nr):
			targets = append(targets, matrix.Target{ID: id, Source: source, Problem: nr.Error()})
		case err != nil:
			return failUsage(stdio, "matrix", err)
		default:
			targets = append(targets, matrix.Target{ID: id, Source: source, Launch: opts.Command, Options: opts})
		}
	}
	if *outDir != "" {
		if err := os.MkdirAll(*outDir, 0o755); err != nil {
			fmt.Fprintln(stdio.Err, "acpprobe matrix:", err)
			return ExitUsage
		}
	}
	var red *transcript.Redactor
	if !pf.noRedact {
		secrets := pf.envValues()
		for _, t := range targets {
			if t.Options.Launcher != nil {
				secrets = append(secrets, transcript.SecretArgs(t.Options.Launcher.CommandLine())...)
			}
		}
		red = transcript.NewRedactor(secrets, os.Environ(), pf.cat.CredentialKeys())
	}
	progress := newProgress(stdio.Err, ids)
	m := matrix.Run(ctx, targets, matrix.Options{
		Parallel: *parallel, Check: &acpprobe.Check{}, OutDir: *outDir,
		Redactor: red, Catalogue: pf.cat, Progress: progress.update,
	})
	progress.finish()
	if *outDir != "" {
		if f, err := os.Create(filepath.Join(*outDir, "matrix.json")); err == nil {
			_ = render.JSON(f, m)
			f.Close()
		}
	}
	if err := writer(stdio.Out, m); err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe matrix:", err)
		return ExitNotProbed
	}
	if ctx.Err() != nil {
		return ExitInterrupted
	}
	return ExitOK
}

// progress reports the matrix as it runs: on a terminal a live line per agent, redrawn in
// place; otherwise one line per finished agent.
type progress struct {
	w     io.Writer
	tty   bool
	mu    sync.Mutex
	lines []string
	drawn int
}

func newProgress(w io.Writer, ids []string) *progress {
	p := &progress{w: w, lines: make([]string, len(ids))}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	for i, id := range ids {
		p.lines[i] = fmt.Sprintf("  %-24s waiting", id)
	}
	return p
}

func (p *progress) update(e matrix.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("  %-24s probing…", e.ID)
	if e.Done {
		line = fmt.Sprintf("  %-24s %s (%.1fs)", e.ID, render.Status(*e.Row), e.Elapsed.Seconds())
		if !p.tty {
			fmt.Fprintln(p.w, "acpprobe matrix:"+line)
		}
	}
	p.lines[e.Index] = line
	if p.tty {
		p.redraw()
	}
}

func (p *progress) redraw() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\x1b[%dA", p.drawn)
	}
	for _, l := range p.lines {
		fmt.Fprintf(p.w, "\x1b[2K%s\n", render.Cut(l, 120))
	}
	p.drawn = len(p.lines)
}

func (p *progress) finish() {
	if p.tty {
		p.mu.Lock()
		p.redraw()
		p.mu.Unlock()
	}
}
