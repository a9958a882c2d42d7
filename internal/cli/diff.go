package cli

import (
	"context"
	"os"

	"github.com/acpprobe/acpprobe/drift"
	"github.com/acpprobe/acpprobe/internal/render"
)

// DiffOptions are the options of acpprobe diff: compare two probe results or two matrices.
type DiffOptions struct {
	IO Stdio
	// Old and New are the files compared.
	Old, New string
	// Ignore are paths ignored besides the volatile ones ([*] matches any list key).
	Ignore []string
	// JSON prints the changes as JSON.
	JSON bool
}

func newDiffOptions(args []string, stdio Stdio) (*DiffOptions, error) {
	fs := newFlagSet("diff")
	asJSON := fs.Bool("json", false, "print the changes as JSON")
	var ignore multiFlag
	fs.Var(&ignore, "ignore", "also ignore this path and what is under it (repeatable; [*] matches any list key), e.g. agentInfo.version")
	if err := parseFlags(fs, args, "acpprobe diff [--json] [--ignore PATH]... OLD NEW", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() != 2 {
		return nil, usagef("want two files (OLD NEW), got %d", fs.NArg())
	}
	return &DiffOptions{IO: stdio, Old: fs.Arg(0), New: fs.Arg(1), Ignore: ignore, JSON: *asJSON}, nil
}

// diffRun compares the two files: nil when nothing changed, errFindings on drift.
func diffRun(_ context.Context, opts *DiffOptions) error {
	old, err := drift.Load(opts.Old)
	if err != nil {
		return readError("the old file", err)
	}
	cur, err := drift.Load(opts.New)
	if err != nil {
		return readError("the new file", err)
	}
	changes, err := drift.Compare(old, cur, opts.Ignore)
	if err != nil {
		return usagef("%v", err)
	}
	if opts.JSON {
		if changes == nil {
			changes = []drift.Change{}
		}
		err = render.JSON(opts.IO.Out, changes)
	} else {
		err = render.Diff(render.ScreenOf(opts.IO.Out, os.Getenv), changes)
	}
	if err != nil {
		return writeError("the changes", err)
	}
	if len(changes) > 0 {
		return errFindings
	}
	return nil
}
