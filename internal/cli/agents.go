package cli

import (
	"context"
	"errors"
	"flag"
	"os"
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
	fs.StringVar(&a.configFile, "config", "", `agents config file: {"agents": {"name": {"command", "args", "env", "cwd"}}} (the editors' agent_servers shape)`)
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
// longer startup budget for cold npx/uvx starts unless the budgets were given.
func (p *probeFlags) resolveID(id string, explicit map[string]bool) (probe.Options, error) {
	opts, _, err := p.resolve(id, explicit)
	return opts, err
}

// resolve is resolveID that also says where the id came from (registry, builtin, config,
// reference).
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
	var unknown *registry.UnknownAgentError
	switch {
	case errors.As(err, &unknown):
		return probe.Options{}, l, &usageError{err.Error()}
	case err != nil:
		return probe.Options{}, l, &errNotRunnable{err}
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
	opts.AgentID = l.ID
	opts.Command = l.String()
	if l.StartupTimeout > 0 && !explicit["startup-timeout"] {
		opts.StartupTimeout = l.StartupTimeout
		if !explicit["timeout"] && opts.Timeout < l.StartupTimeout+probe.DefaultTimeout {
			opts.Timeout = l.StartupTimeout + probe.DefaultTimeout
		}
	}
	return opts, l, nil
}

// targetOptions reads the agent to probe from the command line: --command, argv after --, or
// a single agent id (registry, built-in, reference persona or --config name).
func (p *probeFlags) targetOptions(fs *flag.FlagSet, args []string) (probe.Options, error) {
	rest := fs.Args()
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	dash := len(args) > len(rest) && args[len(args)-len(rest)-1] == "--"
	if p.command == "" && !dash && len(rest) == 1 {
		return p.resolveID(rest[0], explicit)
	}
	argv, command, err := p.agentArgv(rest)
	if err != nil {
		return probe.Options{}, err
	}
	opts, err := p.options(argv)
	opts.Command = command
	return opts, err
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
		err = render.Agents(render.ScreenOf(opts.IO.Out, os.Getenv), list)
	}
	if err != nil {
		return writeError("the list of agents", err)
	}
	return nil
}
