package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/drift"
	"github.com/acpprobe/acpprobe/internal/render"
)

// runDiff compares two probe results or two matrices: exit 0 when nothing changed, 1 on drift.
func runDiff(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("diff")
	asJSON := fs.Bool("json", false, "print the changes as JSON")
	var ignore multiFlag
	fs.Var(&ignore, "ignore", "also ignore this path and what is under it (repeatable; [*] matches any list key), e.g. agentInfo.version")
	if err := parseFlags(fs, args, "acpprobe diff [--json] [--ignore PATH]... OLD NEW", stdio.Out); err != nil {
		return failUsage(stdio, "diff", err)
	}
	if fs.NArg() != 2 {
		return failUsage(stdio, "diff", usagef("want two files (OLD NEW), got %d", fs.NArg()))
	}
	old, err := drift.Load(fs.Arg(0))
	if err != nil {
		return failUsage(stdio, "diff", err)
	}
	cur, err := drift.Load(fs.Arg(1))
	if err != nil {
		return failUsage(stdio, "diff", err)
	}
	changes, err := drift.Compare(old, cur, ignore)
	if err != nil {
		return failUsage(stdio, "diff", err)
	}
	if *asJSON {
		if changes == nil {
			changes = []drift.Change{}
		}
		if err := render.JSON(stdio.Out, changes); err != nil {
			return ExitNotProbed
		}
	} else if len(changes) == 0 {
		fmt.Fprintln(stdio.Out, "no drift")
	} else {
		fmt.Fprintf(stdio.Out, "%d change(s):\n", len(changes))
		for _, c := range changes {
			fmt.Fprintln(stdio.Out, "  "+c.Text)
		}
	}
	if len(changes) > 0 {
		return ExitFindings
	}
	return ExitOK
}

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}
