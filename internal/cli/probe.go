package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transcript"
	"github.com/acpprobe/acpprobe/transport"
)

// probeFlags are the flags shared by every command that probes an agent.
type probeFlags struct {
	json           bool
	command        string
	cwd            string
	env            envFlag
	timeout        durationFlag
	startupTimeout durationFlag
	requestTimeout durationFlag
	grace          durationFlag
	protocol       int
	authPolicy     string
	noMethods      bool
	maxLineSize    int
	transcript     string
	noRedact       bool
	catalogueDir   string
	cat            *extensions.Catalogue // the catalogue with --catalogue DIR merged in
	agents         agentsFlags
}

func (p *probeFlags) register(fs *flag.FlagSet, withCommand bool) {
	fs.BoolVar(&p.json, "json", false, "print the result as JSON on stdout")
	if withCommand {
		fs.StringVar(&p.command, "command", "", "the agent command as one string, split like a shell does (quotes honoured)")
	}
	fs.StringVar(&p.cwd, "cwd", "", "working directory of the agent and cwd of session/new (default: the current directory)")
	fs.Var(&p.env, "env", "KEY=VALUE added to the agent's environment (repeatable)")
	p.timeout.d = probe.DefaultTimeout
	fs.Var(&p.timeout, "timeout", "total budget of the probe (e.g. 30s; a bare number is seconds)")
	p.startupTimeout.d = probe.DefaultStartupTimeout
	fs.Var(&p.startupTimeout, "startup-timeout", "budget for the agent's first answer (initialize)")
	p.requestTimeout.d = probe.DefaultRequestTimeout
	fs.Var(&p.requestTimeout, "request-timeout", "budget of each optional-method probe")
	p.grace.d = transport.DefaultGrace
	fs.Var(&p.grace, "grace", "how long each teardown step waits before the next (stdin close, SIGTERM, SIGKILL)")
	fs.IntVar(&p.protocol, "protocol-version", acp.ProtocolVersion, "protocolVersion sent in initialize")
	fs.StringVar(&p.authPolicy, "auth-policy", string(probe.AuthPolicySkip), "skip: record authMethods and go on; fail: stop before session/new when authMethods are advertised")
	fs.BoolVar(&p.noMethods, "no-methods", false, "do not detect optional method support")
	p.agents.register(fs)
	fs.StringVar(&p.transcript, "transcript", "", "record the session, losslessly, as an NDJSON transcript in this file (see acpprobe analyze, replay)")
	fs.BoolVar(&p.noRedact, "no-redact", false, "keep secrets (--env values, *_API_KEY/*_TOKEN values, bearer tokens, sk- keys, credential _meta) in the transcript and result")
	fs.StringVar(&p.catalogueDir, "catalogue", "", "directory of extra vendor catalogue files (JSON, one per namespace) merged over the built-in catalogue")
	fs.IntVar(&p.maxLineSize, "max-line-size", jsonrpc.DefaultMaxLineSize, "longest agent line kept whole, in bytes; longer lines are recorded as oversize and skipped")
}

// options turns the flags into probe options for the given argv.
func (p *probeFlags) options(argv []string) (probe.Options, error) {
	var opts probe.Options
	cwd := p.cwd
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return opts, err
		}
		cwd = wd
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return opts, usagef("--cwd %q: %v", p.cwd, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return opts, usagef("--cwd %q is not an existing directory", p.cwd)
	}
	if p.cat, err = loadCatalogue(p.catalogueDir); err != nil {
		return opts, err
	}
	if p.maxLineSize < 1 {
		return opts, usagef("--max-line-size %d: want a positive number of bytes", p.maxLineSize)
	}
	if p.protocol < 1 || p.protocol > 65535 {
		return opts, usagef("--protocol-version %d: want an integer from 1 to 65535", p.protocol)
	}
	switch probe.AuthPolicy(p.authPolicy) {
	case probe.AuthPolicySkip, probe.AuthPolicyFail:
	default:
		return opts, usagef("--auth-policy %q: want skip or fail", p.authPolicy)
	}
	opts = probe.Options{
		Launcher:        transport.Command{Argv: argv, Dir: abs, Env: p.env},
		Cwd:             abs,
		Timeout:         p.timeout.d,
		StartupTimeout:  p.startupTimeout.d,
		RequestTimeout:  p.requestTimeout.d,
		Grace:           p.grace.d,
		ProtocolVersion: p.protocol,
		AuthPolicy:      probe.AuthPolicy(p.authPolicy),
		SkipMethods:     p.noMethods,
		MaxLineSize:     p.maxLineSize,
	}
	return opts, nil
}

// agentArgv reads the agent command from --command or the positional arguments.
func (p *probeFlags) agentArgv(args []string) ([]string, string, error) {
	switch {
	case p.command != "" && len(args) > 0:
		return nil, "", usagef("give the agent command either with --command or after --, not both")
	case p.command != "":
		argv, err := shellSplit(p.command)
		if err != nil {
			return nil, "", usagef("--command: %v", err)
		}
		if len(argv) == 0 {
			return nil, "", usagef("--command is empty")
		}
		return argv, p.command, nil
	case len(args) == 0 || args[0] == "":
		return nil, "", usagef("no agent command: use 'acpprobe probe -- <command> [args...]' or --command \"...\"")
	}
	return args, joinCommand(args), nil
}

func runProbe(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("probe")
	var pf probeFlags
	pf.register(fs, true)
	if err := parseFlags(fs, args, "acpprobe probe [flags] (AGENT-ID | -- <agent command> [args...])", stdio.Out); err != nil {
		return failUsage(stdio, "probe", err)
	}
	opts, err := pf.targetOptions(fs, args)
	if err != nil {
		return targetFailed(stdio, "probe", err, pf.json)
	}
	return probeAndReport(ctx, opts, &pf, stdio)
}

// targetFailed reports an agent that could not be resolved: a usage error (exit 2), or an
// agent that cannot run here (exit 3, with how to install it).
func targetFailed(stdio Stdio, cmd string, err error, asJSON bool) int {
	var nr *errNotRunnable
	if errors.As(err, &nr) {
		if asJSON {
			line, _ := json.Marshal(map[string]any{"error": map[string]any{
				"code": probe.ErrSpawnFailed, "stage": record.StageSpawn, "message": nr.Error(), "exitCode": ExitNotProbed}})
			fmt.Fprintln(stdio.Err, string(line))
		} else {
			fmt.Fprintf(stdio.Err, "acpprobe %s: %v\n", cmd, nr)
		}
		return ExitNotProbed
	}
	return failUsage(stdio, cmd, err)
}

// probeAndReport runs the probe, judges the recorded session, prints the result, and maps it
// to an exit code.
func probeAndReport(ctx context.Context, opts probe.Options, pf *probeFlags, stdio Stdio) int {
	return runAndReport(ctx, opts, pf, stdio, nil)
}

// checkSpec is what acpprobe check (and analyze) add to a probe: the active checks, the schema
// set and a verdict against --fail-on and a baseline.
type checkSpec struct {
	schema       string
	active       *acpprobe.Check // nil for analyze
	failOn       probe.Tier
	baseline     []probe.BaselineEntry
	baselinePath string
}

// runAndReport probes (recording the session, redacted, into a transcript when asked), then
// reports it through the same analysis as acpprobe analyze.
func runAndReport(ctx context.Context, opts probe.Options, pf *probeFlags, stdio Stdio, check *checkSpec) int {
	tool := "probe"
	if check != nil {
		tool = "check"
	}
	rec, err := pf.record(opts, tool)
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe:", err)
		return ExitUsage
	}
	opts.Log = rec.Log
	ro := acpprobe.Options{Probe: opts, Analyze: analyzeOptions(check, pf.cat)}
	if check != nil {
		ro.Check = check.active
	}
	r, err := acpprobe.Run(ctx, ro)
	cerr := rec.Close()
	if err != nil {
		return failUsage(stdio, tool, err)
	}
	if cerr != nil {
		fmt.Fprintln(stdio.Err, "acpprobe: transcript:", cerr)
		return ExitNotProbed
	}
	return report(r, pf.json, stdio)
}

// analyzeOptions are the analysis options of a command.
func analyzeOptions(check *checkSpec, cat *extensions.Catalogue) acpprobe.AnalyzeOptions {
	o := acpprobe.AnalyzeOptions{Catalogue: cat}
	if check != nil {
		o.Schema = check.schema
		o.Verdict = &acpprobe.Verdict{FailOn: check.failOn, Baseline: check.baseline, BaselinePath: check.baselinePath}
	}
	return o
}

// report prints a result and returns the exit code. A live probe and the analysis of its
// transcript both end here.
func report(r *probe.Result, asJSON bool, stdio Stdio) int {
	var err error
	if asJSON {
		err = render.JSON(stdio.Out, r)
	} else {
		err = render.Text(stdio.Out, r)
	}
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe:", err)
		return ExitNotProbed
	}
	code := exitCode(r)
	if r.Error != nil {
		if asJSON {
			line, _ := json.Marshal(map[string]any{"error": map[string]any{
				"code": r.Error.Code, "stage": r.Error.Stage, "message": r.Error.Message, "exitCode": code}})
			fmt.Fprintln(stdio.Err, string(line))
		} else {
			fmt.Fprintf(stdio.Err, "acpprobe: %s: %s\n", r.Error.Code, r.Error.Message)
		}
	}
	return code
}

// record makes the log of a probe: redacted unless --no-redact, written to --transcript FILE
// as it happens.
func (p *probeFlags) record(opts probe.Options, tool string) (*transcript.Recording, error) {
	var red *transcript.Redactor
	if !p.noRedact {
		red = transcript.NewRedactor(append(p.envValues(), transcript.SecretArgs(opts.Launcher.CommandLine())...), os.Environ(), p.cat.CredentialKeys())
	}
	return transcript.Record(p.transcript, transcript.Header{Version: probe.Version, Tool: tool, Command: opts.Command,
		Argv: opts.Launcher.CommandLine(), Cwd: opts.Cwd}, red)
}

func (p *probeFlags) envValues() []string {
	var vals []string
	for _, kv := range p.env {
		_, v, _ := strings.Cut(kv, "=")
		vals = append(vals, v)
	}
	return vals
}

// exitCode maps a result to the process exit code: an interrupt first, then a failed check
// verdict, then the probe's own outcome.
func exitCode(r *probe.Result) int {
	if r.Error != nil && r.Error.Code == probe.ErrInterrupted {
		return ExitInterrupted
	}
	if r.Verdict != nil && r.Verdict.Failed {
		return ExitFindings
	}
	if r.Error == nil {
		return ExitOK
	}
	switch r.Error.Code {
	case probe.ErrAuthRequired:
		return ExitAuth
	case probe.ErrInterrupted:
		return ExitInterrupted
	}
	return ExitNotProbed
}

func runDemo(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("demo")
	var pf probeFlags
	pf.register(fs, false)
	persona := fs.String("persona", "claude", "reference-agent persona to probe (claude, codebuddy, codex, gemini, minimal)")
	if err := parseFlags(fs, args, "acpprobe demo [flags]", stdio.Out); err != nil {
		return failUsage(stdio, "demo", err)
	}
	if fs.NArg() > 0 {
		return failUsage(stdio, "demo", usagef("takes no agent command (it probes the built-in reference agent); use 'acpprobe probe' for others"))
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe demo: cannot find my own binary:", err)
		return ExitNotProbed
	}
	argv := []string{self, "agent", "--persona", *persona}
	if err := checkPersona(*persona); err != nil {
		return failUsage(stdio, "demo", err)
	}
	opts, err := pf.options(argv)
	if err != nil {
		return failUsage(stdio, "demo", err)
	}
	opts.Command = "acpprobe agent --persona " + *persona
	return probeAndReport(ctx, opts, &pf, stdio)
}

// joinCommand renders argv as a command line a shell would split back into argv.
func joinCommand(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
			parts[i] = a
			continue
		}
		parts[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(parts, " ")
}

// loadCatalogue is the built-in vendor catalogue, with the files of dir merged in when given.
func loadCatalogue(dir string) (*extensions.Catalogue, error) {
	if dir == "" {
		return extensions.Default(), nil
	}
	cat, err := extensions.LoadDir(dir)
	if err != nil {
		return nil, usagef("--catalogue: %v", err)
	}
	return cat, nil
}

// envFlag collects repeated KEY=VALUE flags.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, ",") }

func (e *envFlag) Set(v string) error {
	k, _, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	*e = append(*e, v)
	return nil
}

// durationFlag is a time.Duration flag that also takes a bare number of seconds.
type durationFlag struct{ d time.Duration }

func (f *durationFlag) String() string { return f.d.String() }

func (f *durationFlag) Set(v string) error {
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		f.d = time.Duration(secs * float64(time.Second))
	} else if d, err := time.ParseDuration(v); err == nil {
		f.d = d
	} else {
		return fmt.Errorf("want a duration like 30s or 1m, got %q", v)
	}
	if f.d <= 0 {
		return fmt.Errorf("want a positive duration, got %q", v)
	}
	return nil
}
