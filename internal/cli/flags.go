package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
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
	groups         flagGroups  // the groups registered
	launched       launchNotes // what to say about the agent targetOptions chose
}

// flagGroups choose the probe flags a command offers: each command offers only flags that do
// something for it (TestEveryFlagDoesSomething).
type flagGroups int

const (
	jsonFlag       flagGroups = 1 << iota // --json
	commandFlag                           // --command: the agent command as one string
	agentsFlag                            // --registry, --config: where agent ids resolve
	budgetFlags                           // --timeout … --no-methods: how the probe drives the agent
	transcriptFlag                        // --transcript: the record of one session
)

// register defines the probe flags of groups on fs. Every command that launches an agent has
// --cwd, --env, --grace, --max-line-size, --no-redact and --catalogue.
func (p *probeFlags) register(fs *flag.FlagSet, groups flagGroups) {
	p.groups = groups
	if groups&jsonFlag != 0 {
		fs.BoolVar(&p.json, "json", false, "print the result as JSON on stdout")
	}
	if groups&commandFlag != 0 {
		fs.StringVar(&p.command, "command", "", "the agent command as one string, split like a shell does (quotes honoured)")
	}
	fs.StringVar(&p.cwd, "cwd", "", "working directory of the agent and cwd of session/new (default: the current directory)")
	fs.Var(&p.env, "env", "KEY=VALUE added to the agent's environment (repeatable)")
	if groups&budgetFlags != 0 {
		p.timeout.d = probe.DefaultTimeout
		fs.Var(&p.timeout, "timeout", "total budget of the probe (e.g. 30s; a bare number is seconds)")
		p.startupTimeout.d = probe.DefaultStartupTimeout
		fs.Var(&p.startupTimeout, "startup-timeout", "budget for the agent's first answer (initialize)")
		p.requestTimeout.d = probe.DefaultRequestTimeout
		fs.Var(&p.requestTimeout, "request-timeout", "budget of each optional-method probe")
		fs.IntVar(&p.protocol, "protocol-version", acp.ProtocolVersion, "protocolVersion sent in initialize")
		fs.StringVar(&p.authPolicy, "auth-policy", string(probe.AuthPolicySkip), "skip: record authMethods and go on; fail: stop before session/new when authMethods are advertised")
		fs.BoolVar(&p.noMethods, "no-methods", false, "do not detect optional method support")
	}
	p.grace.d = transport.DefaultGrace
	fs.Var(&p.grace, "grace", "how long each teardown step waits before the next (stdin close, SIGTERM, SIGKILL)")
	if groups&agentsFlag != 0 {
		p.agents.register(fs)
	}
	if groups&transcriptFlag != 0 {
		fs.StringVar(&p.transcript, "transcript", "", "record the session, losslessly, as an NDJSON transcript in this file (see acpprobe analyze, replay)")
	}
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
			return opts, usagef("%v", err)
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
	if _, err := p.catalogue(); err != nil {
		return opts, err
	}
	if p.maxLineSize < 1 {
		return opts, usagef("--max-line-size %d: want a positive number of bytes", p.maxLineSize)
	}
	if p.groups&budgetFlags != 0 {
		if p.protocol < 1 || p.protocol > 65535 {
			return opts, usagef("--protocol-version %d: want an integer from 1 to 65535", p.protocol)
		}
		switch probe.AuthPolicy(p.authPolicy) {
		case probe.AuthPolicySkip, probe.AuthPolicyFail:
		default:
			return opts, usagef("--auth-policy %q: want skip or fail", p.authPolicy)
		}
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

// catalogue is the vendor catalogue the flags say, loaded once: the built-in one with the
// files of --catalogue merged in.
// runBudget is the whole budget of a run of prompt turns: --timeout when it was given, else 0
// (turn.DefaultBudget, which grows with the scenarios and --turn-timeout).
func (p *probeFlags) runBudget(fs *flag.FlagSet) time.Duration {
	if flagGiven(fs, "timeout") {
		return p.timeout.d
	}
	return 0
}

func (p *probeFlags) catalogue() (*extensions.Catalogue, error) {
	if p.cat == nil {
		cat, err := loadCatalogue(p.catalogueDir)
		if err != nil {
			return nil, err
		}
		p.cat = cat
	}
	return p.cat, nil
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

// recording is what the flags say about the record of the session.
func (p *probeFlags) recording() Recording {
	var secrets []string
	for _, kv := range p.env {
		_, v, _ := strings.Cut(kv, "=")
		secrets = append(secrets, v)
	}
	return Recording{Transcript: p.transcript, NoRedact: p.noRedact, Secrets: secrets}
}

// Recording says where the record of a live session goes and what is kept out of it.
type Recording struct {
	// Transcript, when set, receives the record as it happens (--transcript FILE).
	Transcript string
	// NoRedact keeps secrets in the record and the report (--no-redact).
	NoRedact bool
	// Secrets are values redacted whatever their name: those given with --env, and those
	// --pass-env passes (isolateFlags.passedValues).
	Secrets []string
}

// start makes the log of a session with target, written by tool: redacted unless NoRedact
// (the secrets, the agent's command line, the environment, the credential keys of cat),
// written to Transcript as it happens. The caller closes it.
func (rc Recording) start(target probe.Options, tool string, cat *extensions.Catalogue) (*transcript.Recording, error) {
	var red *transcript.Redactor
	if !rc.NoRedact {
		secrets := slices.Concat(rc.Secrets, transcript.SecretArgs(target.Launcher.CommandLine()))
		red = transcript.NewRedactor(secrets, os.Environ(), catalogueOr(cat).CredentialKeys())
	}
	rec, err := transcript.Record(rc.Transcript, transcript.Header{Version: probe.Version, Tool: tool, Command: target.Command,
		Argv: target.Launcher.CommandLine(), Cwd: target.Cwd}, red)
	if err != nil {
		return nil, writeError("the transcript", err)
	}
	return rec, nil
}

// loadCatalogue is the built-in vendor catalogue, with the files of dir merged in when given.
func loadCatalogue(dir string) (*extensions.Catalogue, error) {
	if dir == "" {
		return extensions.Default(), nil
	}
	cat, err := extensions.LoadDir(dir)
	if err != nil {
		return nil, readError("--catalogue", err)
	}
	return cat, nil
}

// catalogueOr is cat, or the built-in catalogue when nil (options built without flags).
func catalogueOr(cat *extensions.Catalogue) *extensions.Catalogue {
	if cat == nil {
		return extensions.Default()
	}
	return cat
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

// envFlag collects repeated KEY=VALUE flags.
type envFlag []string

func (e *envFlag) String() string { return strings.Join(*e, ",") }

// kind names the value in help.
func (e *envFlag) kind() string { return "KEY=VALUE" }

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

// kind names the value in help.
func (f *durationFlag) kind() string { return "duration" }

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

// multiFlag collects a repeated string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

// kind names the value in help.
func (m *multiFlag) kind() string { return "string" }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}
