package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/transport"
)

// agentsFlags choose where agent ids resolve: the embedded registry snapshot, a newer registry
// file, an agents config file, and the reference personas.
type agentsFlags struct {
	registryFile string
	configFile   string
}

func (a *agentsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.registryFile, "registry", "", "a newer ACP registry (registry.json or an agent.json) used over the embedded snapshot")
	fs.StringVar(&a.configFile, "config", "", `agents config file: acpprobe's or acpx's {"agents": {NAME: {"command", "args" | "argv", "env", "cwd"}}}, or Zed's settings.json ("agent_servers"); JSONC`)
}

// referencePrefix names the reference personas as agents: acptest-claude, acptest-codex, …
const referencePrefix = "acptest-"

// registry is the embedded snapshot and built-in entries, the reference personas, then
// --registry, then --config (later sources win on the same id).
func (a *agentsFlags) registry() (*registry.Registry, error) {
	r := registry.Default()
	if self, err := os.Executable(); err == nil {
		var refs []registry.Entry
		for _, p := range acptest.PersonaNames() {
			persona, _ := acptest.LookupPersona(p)
			refs = append(refs, registry.Entry{ID: referencePrefix + p, Name: "acpprobe reference agent (" + p + ")",
				Description: persona.Description, Version: probe.Version, Listed: true, Source: registry.SourceBuiltin,
				Origin: "acpprobe agent --persona " + p, Command: &registry.Command{Command: self, Args: []string{"agent", "--persona", p}}})
		}
		r = r.With(refs...)
	}
	if a.registryFile != "" {
		entries, err := registry.LoadFile(a.registryFile)
		if err != nil {
			return nil, readError("--registry", err)
		}
		r = r.With(entries...)
	}
	if a.configFile != "" {
		entries, err := registry.LoadConfig(a.configFile)
		if err != nil {
			return nil, readError("--config", err)
		}
		r = r.With(entries...)
	}
	return r, nil
}

// resolveID turns an agent id into probe options: argv, environment, working directory, and a
// longer startup budget for cold npx/uvx starts unless the budgets were given. For an agent
// that cannot run here the error is an *errNotRunnable, and the options are still complete:
// their launcher fails with the reason (see unrunnable).
// An unknown id is a usage error that says how to run a command of that name with cmd
// ("acpprobe probe").
func (p *probeFlags) resolveID(id string, explicit map[string]bool, cmd string) (probe.Options, error) {
	opts, _, err := p.resolve(id, explicit)
	var unknown *registry.UnknownAgentError
	if errors.As(err, &unknown) {
		return opts, usagef("%v; to run a command of that name, put it after --: %s -- %s", err, cmd, joinCommand([]string{id}))
	}
	return opts, err
}

// resolve is resolveID that also says where the id came from (registry, builtin, config,
// reference). An unknown id is a *registry.UnknownAgentError.
func (p *probeFlags) resolve(id string, explicit map[string]bool) (probe.Options, string, error) {
	opts, l, err := p.launch(id, explicit)
	source := string(l.Source)
	if strings.HasPrefix(l.ID, referencePrefix) && l.Source == registry.SourceBuiltin {
		source = "reference"
	}
	return opts, source, err
}

func (p *probeFlags) launch(id string, explicit map[string]bool) (probe.Options, registry.Launch, error) {
	reg, err := p.agents.registry()
	if err != nil {
		return probe.Options{}, registry.Launch{}, err
	}
	l, err := reg.Resolve(id, registry.HostEnv())
	var (
		unknown     *registry.UnknownAgentError
		notRunnable error
	)
	switch {
	case errors.As(err, &unknown):
		return probe.Options{}, l, err
	case err != nil:
		notRunnable = &errNotRunnable{err}
	}
	opts, err := p.options(l.Argv)
	if err != nil {
		return opts, l, err
	}
	cmd := opts.Launcher.(transport.Command)
	var env []string
	for _, k := range sortedMapKeys(l.Env) {
		env = append(env, k+"="+l.Env[k])
	}
	cmd.Env = append(env, cmd.Env...) // --env wins over the registry's
	if l.Dir != "" && !explicit["cwd"] {
		cmd.Dir, opts.Cwd = l.Dir, l.Dir
	}
	opts.Launcher = cmd
	if notRunnable != nil {
		opts.Launcher = unrunnable{argv: l.Argv, err: notRunnable}
	}
	opts.AgentID = l.ID
	opts.Command = l.String()
	if l.StartupTimeout > 0 && !explicit["startup-timeout"] {
		opts.StartupTimeout = l.StartupTimeout
		if !explicit["timeout"] && opts.Timeout < l.StartupTimeout+probe.DefaultTimeout {
			opts.Timeout = l.StartupTimeout + probe.DefaultTimeout
		}
	}
	return opts, l, notRunnable
}

// unrunnable stands for an agent that cannot run here: its launch fails with the reason, so a
// probe of it reports spawn_failed like any launch that failed, result and all.
type unrunnable struct {
	argv []string // what would run
	err  error
}

func (u unrunnable) Launch(context.Context, io.Writer) (transport.Agent, error) { return nil, u.err }
func (u unrunnable) CommandLine() []string                                      { return u.argv }

// targetOptions reads the agent to probe from the command line cl: --command, the argv after
// --, or a single argument, which is an agent id (registry, built-in, reference persona or
// --config name) unless it contains a / or names an existing file: then it is a command.
// Several arguments without -- are a command too.
func (p *probeFlags) targetOptions(fs *flag.FlagSet, cl cmdLine) (probe.Options, error) {
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	rest := cl.after
	switch {
	case cl.dash && len(cl.before) > 0:
		return probe.Options{}, usagef("unexpected %q before --: give an agent id, or the agent command after --, not both", cl.before)
	case !cl.dash:
		rest = cl.before
	}
	if p.command == "" && !cl.dash && len(rest) == 1 {
		if cmd, ok := asCommand(rest[0]); ok {
			rest = []string{cmd}
		} else {
			return p.resolveID(rest[0], explicit, fs.Name())
		}
	}
	if explicit["config"] || explicit["registry"] {
		return probe.Options{}, usagef("--config and --registry say where agent ids resolve: they do nothing for an agent command (after -- or with --command)")
	}
	argv, command, err := p.agentArgv(rest)
	if err != nil {
		return probe.Options{}, err
	}
	opts, err := p.options(argv)
	opts.Command = command
	return opts, err
}

// asCommand says whether a lone argument is a command rather than an agent id: it contains a
// path separator, or names an existing file (which is then run as ./name: an executable is
// never looked up in the current directory).
func asCommand(arg string) (string, bool) {
	if strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) {
		return arg, true
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return "." + string(filepath.Separator) + arg, true
	}
	return "", false
}

func sortedMapKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// AgentsOptions are the options of acpprobe agents: list the agents ids resolve to.
type AgentsOptions struct {
	IO Stdio
	// Registry is where ids resolve: the snapshot, the personas, --registry and --config.
	Registry *registry.Registry
	// All includes entries the registry keeps but does not publish.
	All bool
	// JSON prints the list as JSON.
	JSON bool
}

func newAgentsOptions(args []string, stdio Stdio) (*AgentsOptions, error) {
	fs := newFlagSet("agents")
	var af agentsFlags
	af.register(fs)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	all := fs.Bool("all", false, "include entries the registry keeps but does not publish")
	if err := parseFlags(fs, args, "acpprobe agents [--json] [--registry FILE] [--config FILE]", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	reg, err := af.registry()
	if err != nil {
		return nil, err
	}
	return &AgentsOptions{IO: stdio, Registry: reg, All: *all, JSON: *asJSON}, nil
}

// agentsRun lists the agents acpprobe can resolve, and whether each can run here.
func agentsRun(_ context.Context, opts *AgentsOptions) error {
	var list []registry.Status
	for _, s := range opts.Registry.List(registry.HostEnv()) {
		if s.Listed || opts.All {
			list = append(list, s)
		}
	}
	var err error
	if opts.JSON {
		err = render.JSON(opts.IO.Out, list)
	} else {
		err = render.Agents(opts.IO.Out, list)
	}
	if err != nil {
		return writeError("the list of agents", err)
	}
	return nil
}
