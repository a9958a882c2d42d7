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
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/sentinel"
	"github.com/acpprobe/acpprobe/transport"

	"github.com/acpprobe/acpprobe/internal/buildinfo"
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
	// launches says the command starts agent processes: dispatch starts the watchdog early.
	launches bool
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

// sentinelCommand is the hidden command of the stdio sentinel MCP server (sentinel.Main).
const sentinelCommand = "mcp-sentinel"

func commands() []command {
	return []command{
		{"probe", "probe an agent: initialize, session/new, optional methods; report what it supports", bind(newProbeOptions, probeRun), true},
		{"check", "probe an agent and judge it against the ACP schema and rules (CI exit codes)", bind(newCheckOptions, checkRun), true},
		{"turn", "run real prompt turns at zero tokens: the agent in a sandbox, a loopback model emulator as its model", bind(newTurnOptions, turnRun), true},
		{"analyze", "rebuild the result and findings of a recorded transcript, offline", bind(newAnalyzeOptions, analyzeRun), false},
		{"replay", "act as the agent recorded in a transcript, on stdio", bind(newReplayOptions, replayRun), false},
		{"tap", "sit between an editor and an agent: pass bytes through, record, check as it happens", bind(newTapOptions, tapRun), true},
		{"lint-client", "judge what a client sent in a tap transcript: private vendor keys and methods", bind(newLintClientOptions, lintClientRun), false},
		{"extensions", "print the vendor extension catalogue (keys, methods, classes, directions)", bind(newExtensionsOptions, extensionsRun), false},
		{"agents", "list the agents of the ACP registry (and --config), and whether each can run here", bind(newAgentsOptions, agentsRun), false},
		{"matrix", "probe many agents in parallel and render their capability matrix (text, md, json, html)", bind(newMatrixOptions, matrixRun), true},
		{"diff", "compare two probe results or matrices: what changed (exit 1 on drift)", bind(newDiffOptions, diffRun), false},
		{"demo", "probe the built-in reference agent (no setup needed)", bind(newDemoOptions, probeRun), true},
		{"agent", "run the built-in reference agent on stdio", runAgent, false},
		{"version", "print acpprobe's version", runVersion, false},
	}
}

// Main runs acpprobe with args (without the program name) and returns the exit code. It is the
// only caller of exitCode, and the only place that prints why a command failed.
//
// The hidden command mcp-sentinel is the stdio sentinel MCP server that acpprobe turn --mcp
// offers an agent (the agent starts it): it speaks MCP, not to people, so it is not listed.
func Main(ctx context.Context, args []string, stdio Stdio) int {
	if len(args) > 0 && args[0] == sentinelCommand {
		return sentinel.Main(ctx, args[1:], stdio.In, stdio.Out, stdio.Err)
	}
	boundHeap(1) // the matrix raises it for its parallel records
	name, err := dispatch(ctx, args, stdio)
	// Every launch of the command has been torn down (its sweeps included): the watchdog
	// need not sweep the machine again once this process ends.
	transport.RunOver()
	code := exitCode(err)
	printError(stdio.Err, name, err, code)
	var agent *agentExit
	if errors.As(err, &agent) && agent.signal != 0 {
		dieBySignal(agent.signal) // whoever waits for us sees the agent's own end
	}
	return code
}

// dispatch runs the command named on the command line and returns its name and error. Flags
// may come before the command's name (acpprobe --json probe ID): they are the command's.
// "help COMMAND" prints the flags of COMMAND.
func dispatch(ctx context.Context, args []string, stdio Stdio) (string, error) {
	i, err := commandIndex(args)
	if err != nil {
		return "", err
	}
	if i < 0 {
		for _, a := range args {
			switch a {
			case "-h", "-help", "--help":
				usage(stdio.Out)
				return "", nil
			case "-v", "-version", "--version":
				return "version", runVersion(ctx, nil, stdio)
			}
		}
		usage(stdio.Err)
		return "", &usageError{}
	}
	name := args[i]
	rest := append(args[:i:i], args[i+1:]...)
	if name == "help" {
		if len(rest) == 1 {
			if c, ok := lookupCommand(rest[0]); ok {
				return c.name, c.run(ctx, []string{"-h"}, stdio)
			}
		}
		if len(rest) == 1 {
			return "", usagef("unknown command %q: the commands are %s", rest[0], commandNames())
		}
		if len(rest) > 1 {
			return "", usagef("help takes one command name: the commands are %s", commandNames())
		}
		usage(stdio.Out)
		return "", nil
	}
	c, _ := lookupCommand(name)
	if c.launches {
		// Every agent launch waits until the watchdog is armed (transport): started now, its
		// exec overlaps the parsing of the flags and the preparation of the run.
		go func() { _ = transport.StartWatchdog() }()
	}
	return name, c.run(ctx, rest, stdio)
}

// commandIndex finds the command's name in args: the first argument before "--" that names
// a command (or help), skipping flags and what may be their values. -1 when there is none;
// an argument that cannot be a flag's value and is no command is an unknown command.
func commandIndex(args []string) (int, error) {
	var unknown string
	for i, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		if _, ok := lookupCommand(a); ok || a == "help" {
			return i, nil
		}
		valueOfFlag := i > 0 && strings.HasPrefix(args[i-1], "-") && !strings.Contains(args[i-1], "=")
		if unknown == "" {
			unknown = a
		}
		if !valueOfFlag {
			break
		}
	}
	if unknown != "" {
		return -1, usagef("unknown command %q (try: acpprobe help)", unknown)
	}
	return -1, nil
}

// lookupCommand finds a command by name.
func lookupCommand(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// commandNames lists the commands' names, sorted, for an error line.
func commandNames() string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "acpprobe — what an ACP agent supports, from the live handshake, without spending\ntokens.")
	fmt.Fprintln(w, "\nUsage:\n  acpprobe <command> [flags] [-- agent command...]\n\nCommands:")
	cs := commands()
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	printCommands(w, cs)
	fmt.Fprintln(w, "\nExamples:\n  acpprobe demo\n  acpprobe probe -- npx -y @zed-industries/claude-agent-acp\n  acpprobe probe --json --command \"gemini --acp\"")
	fmt.Fprintln(w, "\nFlags go anywhere before --; everything after -- is the agent's command.")
	fmt.Fprintln(w, "Run 'acpprobe help <command>' (or 'acpprobe <command> -h') for the flags of a\ncommand.")
}

func runVersion(_ context.Context, args []string, stdio Stdio) error {
	if len(args) == 1 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		fmt.Fprintln(stdio.Out, "Usage: acpprobe version\n\nPrints acpprobe's version: the module version, or devel, with the commit and\nbuild time the toolchain stamped (see README, Install). No flags.")
		return errHelp
	}
	if len(args) > 0 {
		return usagef("takes no arguments")
	}
	info := buildinfo.Read()
	if _, err := fmt.Fprintln(stdio.Out, "acpprobe", info); err != nil {
		return writeError("the version", err)
	}
	if info.Version == "" && info.Revision == "" && stdio.Err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe version: note: "+unstamped)
	}
	return nil
}

// unstamped says why a binary has no version, and how to build one that has (README, Install).
const unstamped = "nothing was stamped into this binary (go run; -buildvcs=false, which go env GOFLAGS shows " +
	"and GOFLAGS=-buildvcs=auto overrides; or a build in a linked git worktree, which Go does not stamp): " +
	"go install ./cmd/acpprobe in a clone stamps its commit, " +
	"go install github.com/acpprobe/acpprobe/cmd/acpprobe@VERSION the version"

// newFlagSet makes a quiet flag set: parseFlags reports its errors in one line.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet("acpprobe "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args (see parseArgs) and leaves the positional arguments, before and
// after "--", in fs.Args().
func parseFlags(fs *flag.FlagSet, args []string, synopsis string, out io.Writer) error {
	_, err := parseArgs(fs, args, synopsis, out)
	return err
}

// cmdLine is a command line split by parseArgs: its positional arguments before "--", and
// those after it.
type cmdLine struct {
	before []string
	after  []string
	dash   bool // the command line has a "--"
}

// parseArgs parses a command line the way gh and kubectl do: flags may come before, between
// and after the positional arguments, up to a "--"; everything after "--" is positional. A
// flag that is not a bool takes the next argument as its value, whatever it looks like, as
// package flag does. For -h it prints the flags on out and returns errHelp; other problems
// come back as usage errors. fs.Args() holds the positional arguments, before and after "--".
func parseArgs(fs *flag.FlagSet, args []string, synopsis string, out io.Writer) (cmdLine, error) {
	var (
		cl    cmdLine
		flags []string
	)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			cl.after, cl.dash = args[i+1:], true
			break
		}
		if len(a) < 2 || a[0] != '-' {
			cl.before = append(cl.before, a)
			continue
		}
		flags = append(flags, a)
		name, _, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		f := fs.Lookup(name)
		switch {
		case f == nil && name != "h" && name != "help" && len(cl.before) > 0:
			return cl, usagef("flag provided but not defined: --%s (usage: %s)", name, synopsis)
		case f == nil || hasValue || isBoolFlag(f):
		case i+1 < len(args):
			i++
			flags = append(flags, args[i])
		default: // the last argument: package flag would take the "--" parseArgs adds
			return cl, usagef("--%s needs a value", name)
		}
	}
	err := fs.Parse(append(append(flags, "--"), append(cl.before[:len(cl.before):len(cl.before)], cl.after...)...))
	switch {
	case err == nil:
		return cl, nil
	case errors.Is(err, flag.ErrHelp):
		printSynopsis(out, synopsis)
		fmt.Fprint(out, "\nFlags:\n")
		printFlags(out, fs)
		return cl, errHelp
	default:
		return cl, &usageError{twoDashes(err.Error())}
	}
}

// flagErrors are package flag's error messages, and how they read with the flag spelled with
// two dashes, as help, the README and users spell it.
// They are compiled on the first error, not in every process.
var flagErrors = sync.OnceValue(func() []flagError {
	return []flagError{
		{regexp.MustCompile(`^flag provided but not defined: -+`), "flag provided but not defined: --"},
		{regexp.MustCompile(`^(invalid (?:boolean )?value ".*" for) (?:flag )?-+([^\s:]+): `), "$1 --$2: "},
		{regexp.MustCompile(`^flag needs an argument: -+(.*)$`), "--$1 needs a value"},
	}
})

// flagError is one of flagErrors: the message and its two-dash spelling.
type flagError struct {
	re   *regexp.Regexp
	repl string
}

// twoDashes rewrites an error of package flag with its flag spelled with two dashes.
func twoDashes(msg string) string {
	for _, e := range flagErrors() {
		if e.re.MatchString(msg) {
			return e.re.ReplaceAllString(msg, e.repl)
		}
	}
	return msg
}

// isBoolFlag says whether f takes no value (-json, not -json VALUE).
func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
