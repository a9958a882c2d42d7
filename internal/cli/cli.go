// Package cli is acpprobe's command line: subcommands, flags, and the one place where exit
// codes are chosen. cmd/acpprobe is a thin main around Main.
//
// Each command is two halves, in the style of gh: newXOptions parses the command line into an
// XOptions struct (flags, files named by flags, the agent to probe), and xRun(ctx, opts) does
// the work and returns an error that carries its exit meaning (exit.go). Tests can build the
// options by hand and call the run function without any flag parsing. (agent hands its flags
// to the reference agent, and version has none: they are single functions.) Everything a
// command prints for people is written by internal/render; this package prints only error
// lines, usage, help and the version.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"

	"github.com/acpprobe/acpprobe/probe"
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
	run     func(ctx context.Context, args []string, io Stdio) error
}

// bind makes a command of its two halves: parse the command line into options, then run them.
func bind[O any](parse func(args []string, io Stdio) (*O, error), run func(context.Context, *O) error) func(context.Context, []string, Stdio) error {
	return func(ctx context.Context, args []string, io Stdio) error {
		opts, err := parse(args, io)
		if err != nil {
			return err
		}
		return run(ctx, opts)
	}
}

func commands() []command {
	return []command{
		{"probe", "probe an agent: initialize, session/new, optional methods; report what it supports", bind(newProbeOptions, probeRun)},
		{"check", "probe an agent and judge it against the ACP schema and rules (CI exit codes)", bind(newCheckOptions, checkRun)},
		{"analyze", "rebuild the result and findings of a recorded transcript, offline", bind(newAnalyzeOptions, analyzeRun)},
		{"replay", "act as the agent recorded in a transcript, on stdio", bind(newReplayOptions, replayRun)},
		{"tap", "sit between an editor and an agent: pass bytes through, record, check as it happens", bind(newTapOptions, tapRun)},
		{"lint-client", "judge what a client sent in a tap transcript: private vendor keys and methods", bind(newLintClientOptions, lintClientRun)},
		{"extensions", "print the vendor extension catalogue (keys, methods, classes, directions)", bind(newExtensionsOptions, extensionsRun)},
		{"agents", "list the agents of the ACP registry (and --config), and whether each can run here", bind(newAgentsOptions, agentsRun)},
		{"matrix", "probe many agents in parallel and render their capability matrix (text, md, json, html)", bind(newMatrixOptions, matrixRun)},
		{"diff", "compare two probe results or matrices: what changed (exit 1 on drift)", bind(newDiffOptions, diffRun)},
		{"demo", "probe the built-in reference agent (no setup needed)", bind(newDemoOptions, probeRun)},
		{"agent", "run the built-in reference agent on stdio", runAgent},
		{"version", "print acpprobe's version", runVersion},
	}
}

// Main runs acpprobe with args (without the program name) and returns the exit code. It is the
// only caller of exitCode, and the only place that prints why a command failed.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	name, err := dispatch(ctx, args, stdio)
	code := exitCode(err)
	printError(stdio.Err, name, err, code)
	var agent *agentExit
	if errors.As(err, &agent) && agent.signal != 0 {
		dieBySignal(agent.signal) // whoever waits for us sees the agent's own end
	}
	return code
}

// dispatch runs the command named by args[0] and returns its name and error.
func dispatch(ctx context.Context, args []string, stdio Stdio) (string, error) {
	if len(args) == 0 {
		usage(stdio.Err)
		return "", &usageError{}
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		usage(stdio.Out)
		return "", nil
	case "--version", "-version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name {
			return name, c.run(ctx, args[1:], stdio)
		}
	}
	return "", usagef("unknown command %q (try: acpprobe help)", name)
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

func runVersion(_ context.Context, args []string, stdio Stdio) error {
	if len(args) > 0 {
		return usagef("takes no arguments")
	}
	if _, err := fmt.Fprintln(stdio.Out, "acpprobe", probe.Version); err != nil {
		return writeError("the version", err)
	}
	return nil
}

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
