package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acptest"
)

func runAgent(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("agent")
	var cfg acptest.Config
	fs.StringVar(&cfg.Persona, "persona", "claude", "persona: "+strings.Join(acptest.PersonaNames(), ", "))
	fs.StringVar(&cfg.HangOn, "hang-on", "", "stop answering (and reading) when this method arrives")
	fs.StringVar(&cfg.ExitBefore, "exit-before", "", fmt.Sprintf("exit with status %d when this method arrives, before answering", acptest.ExitBeforeStatus))
	fs.BoolVar(&cfg.GarbageStdout, "garbage-stdout", false, "write a line that is not JSON on stdout before the first answer")
	slow := durationFlag{}
	fs.Var(&slow, "slow-start", "wait this long before reading anything (e.g. 2s)")
	if err := parseFlags(fs, args, "acpprobe agent [--persona NAME] [faults]", stdio.Out); err != nil {
		return failUsage(stdio, "agent", err)
	}
	if fs.NArg() > 0 {
		return failUsage(stdio, "agent", usagef("unexpected arguments %q", fs.Args()))
	}
	if err := checkPersona(cfg.Persona); err != nil {
		return failUsage(stdio, "agent", err)
	}
	cfg.SlowStart = slow.d
	err := acptest.Serve(ctx, stdio.In, stdio.Out, stdio.Err, cfg)
	var exit *acptest.ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		return exit.Code
	case ctx.Err() != nil:
		return 128 + 15 // stopped by a signal: the status a shell shows for SIGTERM
	}
	fmt.Fprintln(stdio.Err, "acpprobe agent:", err)
	return 1
}

func checkPersona(name string) error {
	if _, ok := acptest.LookupPersona(name); !ok {
		return usagef("unknown persona %q (have %s)", name, strings.Join(acptest.PersonaNames(), ", "))
	}
	return nil
}
