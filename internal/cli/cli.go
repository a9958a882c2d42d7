// Package cli is acpprobe's command line: subcommands, flags, and the one place where exit
// codes are chosen. cmd/acpprobe is a thin main around Main.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/probe"
)

// Exit codes (DESIGN.md decision 9).
const (
	ExitOK          = 0
	ExitFindings    = 1 // findings at or above --fail-on, or drift in diff
	ExitUsage       = 2
	ExitNotProbed   = 3 // spawn failure, timeout, crash, protocol mismatch
	ExitAuth        = 4
	ExitInterrupted = 130
)

// Stdio are the streams a command talks to.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io Stdio) int
}

func commands() []command {
	return []command{
		{"probe", "probe an agent: initialize, session/new, optional methods; report what it supports", runProbe},
		{"check", "probe an agent and judge it against the ACP schema and rules (CI exit codes)", runCheck},
		{"analyze", "rebuild the result and findings of a recorded transcript, offline", runAnalyze},
		{"replay", "act as the agent recorded in a transcript, on stdio", runReplay},
		{"tap", "sit between an editor and an agent: pass bytes through, record, check as it happens", runTap},
		{"lint-client", "judge what a client sent in a tap transcript: private vendor keys and methods", runLintClient},
		{"extensions", "print the vendor extension catalogue (keys, methods, classes, directions)", runExtensions},
		{"agents", "list the agents of the ACP registry (and --config), and whether each can run here", runAgents},
		{"matrix", "probe many agents in parallel and render their capability matrix (text, md, json, html)", runMatrix},
		{"diff", "compare two probe results or matrices: what changed (exit 1 on drift)", runDiff},
		{"demo", "probe the built-in reference agent (no setup needed)", runDemo},
		{"agent", "run the built-in reference agent on stdio", runAgent},
		{"version", "print acpprobe's version", runVersion},
	}
}

// Main runs acpprobe with args (without the program name) and returns the exit code.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	if len(args) == 0 {
		usage(stdio.Err)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		usage(stdio.Out)
		return ExitOK
	case "--version", "-version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			return c.run(ctx, args[1:], stdio)
		}
	}
	fmt.Fprintf(stdio.Err, "acpprobe: unknown command %q (try: acpprobe help)\n", name)
	return ExitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "acpprobe — what an ACP agent supports, from the live handshake, without spending tokens.")
	fmt.Fprintln(w, "\nUsage:\n  acpprobe <command> [flags] [-- agent command...]\n\nCommands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	for _, c := range cs {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nExamples:\n  acpprobe demo\n  acpprobe probe -- npx -y @zed-industries/claude-agent-acp\n  acpprobe probe --json --command \"gemini --acp\"")
	fmt.Fprintln(w, "\nRun 'acpprobe <command> -h' for the flags of a command.")
}

func runVersion(_ context.Context, args []string, stdio Stdio) int {
	if len(args) > 0 {
		fmt.Fprintln(stdio.Err, "acpprobe version: takes no arguments")
		return ExitUsage
	}
	fmt.Fprintln(stdio.Out, "acpprobe", probe.Version)
	return ExitOK
}

// usageError is a problem with the command line: exit 2 with a one-line message.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// newFlagSet makes a quiet flag set: parseFlags reports its errors in one line.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("acpprobe "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args. For -h it prints the flags on out and returns errHelp; other
// problems come back as usage errors.
func parseFlags(fs *flag.FlagSet, args []string, synopsis string, out io.Writer) error {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(out, "Usage: %s\n\nFlags:\n", synopsis)
		fs.SetOutput(out)
		fs.PrintDefaults()
		return errHelp
	default:
		return &usageError{err.Error()}
	}
}

var errHelp = errors.New("help requested")

// failUsage prints a usage error and returns the exit code for it.
func failUsage(stdio Stdio, cmd string, err error) int {
	if errors.Is(err, errHelp) {
		return ExitOK
	}
	fmt.Fprintf(stdio.Err, "acpprobe %s: %s\n", cmd, strings.TrimSpace(err.Error()))
	return ExitUsage
}
