package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"syscall"

	"github.com/acpprobe/acpprobe/acptest"
)

// runAgent runs the reference agent on stdio (acptest.Main parses its flags and prints its
// own errors). Stopped by a signal, it dies by SIGTERM as an ordinary program would.
func runAgent(ctx context.Context, args []string, stdio Stdio) error {
	if fs := acptest.Flags(); errors.Is(fs.Parse(args), flag.ErrHelp) {
		// acpprobe's help, wherever -h stands, with its flags spelled as everywhere else
		// (--persona).
		printSynopsis(stdio.Out, "acpprobe agent [flags]")
		fmt.Fprintln(stdio.Out, "\nRuns the reference ACP agent on stdin/stdout.\n\nFlags:")
		printFlags(stdio.Out, acptest.Flags())
		return nil
	}
	code := acptest.Main(ctx, args, stdio.In, stdio.Out, stdio.Err)
	if ctx.Err() != nil && code == 128+int(syscall.SIGTERM) {
		return &agentExit{status: code, signal: syscall.SIGTERM}
	}
	if code == 0 {
		return nil
	}
	return &agentExit{status: code}
}

func checkPersona(name string) error {
	if _, ok := acptest.LookupPersona(name); !ok {
		return usagef("unknown persona %q (have %s)", name, strings.Join(acptest.PersonaNames(), ", "))
	}
	return nil
}
