package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// agentsFlags choose where agent ids resolve: the official registry's index (the copy
// `acpprobe agents --refresh` keeps in the cache directory, else the embedded snapshot), the
// built-in entries, the reference personas, a newer registry file and an agents config file.
type agentsFlags struct {
	registryFile string
	configFile   string
	// registryCommand runs an id's own registry command (npx, uvx) even when a program of its
	// package is on PATH, which otherwise runs instead (--registry-command).
	registryCommand bool
	// cacheDir is where the fetched index is kept ("" = registry.CacheDir()); tests set it.
	cacheDir string

	reg *registry.Registry // built once by registry()
	idx registry.Index     // the index reg was built on
}

func (a *agentsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&a.registryFile, "registry", "", "an ACP registry file (registry.json or an agent.json) whose agents win over the registry's index (the snapshot, or the copy agents --refresh fetched)")
	fs.StringVar(&a.configFile, "config", "", `agents config file: acpprobe's or acpx's {"agents": {NAME: {"command", "args" | "argv", "env", "cwd"}}}, or Zed's settings.json ("agent_servers"); JSONC`)
	fs.BoolVar(&a.registryCommand, "registry-command", false, "run an id's own registry command (npx PACKAGE@VERSION, uvx …) even when its program (claude-agent-acp, gemini, qwen, codebuddy…) is on PATH, which otherwise runs instead")
}

// env is this machine as ids resolve on it: with --registry-command, to the registry's own
// commands.
func (a *agentsFlags) env() registry.Env {
	env := registry.HostEnv()
	env.RegistryCommand = a.registryCommand
	return env
}

// referencePrefix names the reference personas as agents: acptest-claude, acptest-codex, …
const referencePrefix = "acptest-"

// index is the official registry's data ids resolve through: the copy in the cache directory
// when there is a usable one, else the embedded snapshot, whose Problem then says why the
// copy was not used.
func (a *agentsFlags) index() registry.Index {
	dir := a.cacheDir
	if dir == "" {
		d, err := registry.CacheDir()
		if err != nil {
			return registry.Snapshot()
		}
		dir = d
	}
	x, err := registry.LoadCache(dir)
	switch {
	case err == nil:
		return x
	case errors.Is(err, fs.ErrNotExist):
		return registry.Snapshot()
	}
	snap := registry.Snapshot()
	snap.Problem = err
	return snap
}

// registry is the registry's index (index) with the built-in entries, the reference
// personas, then --registry, then --config (later sources win on the same id). It is built
// once.
func (a *agentsFlags) registry() (*registry.Registry, error) {
	if a.reg != nil {
		return a.reg, nil
	}
	a.idx = a.index()
	r := a.idx.Registry()
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
	a.reg = r
	return r, nil
}

// staleNote is the note for an agent of the registry's index that could not be probed: which
// index it comes from, how old that is, and how to fetch the current one (the version an old
// index pins may be gone, as npm no longer serves the snapshot's gemini-cli 0.27.3).
func (a *agentsFlags) staleNote(id string, e registry.Entry) string {
	if !a.idx.FromIndex(e) {
		return ""
	}
	note := fmt.Sprintf("%s comes from %s (%s); 'acpprobe agents --refresh' fetches the current registry", id, a.idx.Name(), a.idx.AgeText(time.Now()))
	if a.idx.Problem != nil {
		note += fmt.Sprintf(" (the copy fetched before is unusable: %v)", a.idx.Problem)
	}
	return note
}

// resolveID turns an agent id into probe options: argv, environment, working directory, and a
// longer startup budget for cold npx/uvx starts unless the budgets were given. For an agent
// that cannot run here the error is an *errNotRunnable, and the options are still complete:
// their launcher fails with the reason (see unrunnable).
// An unknown id is a usage error that says how to run a command of that name with cmd
// ("acpprobe probe").
func (p *probeFlags) resolveID(id string, explicit map[string]bool, cmd string) (probe.Options, error) {
	opts, _, notes, err := p.resolve(id, explicit)
	p.launched = notes
	var unknown *registry.UnknownAgentError
	if errors.As(err, &unknown) {
		return opts, usagef("%v; to run a command of that name, put it after --: %s -- %s", err, cmd, joinCommand([]string{id}))
	}
	return opts, err
}

// note is what to say about agent id when it could not be probed (see staleNote).
func (p *probeFlags) note(id string) string {
	reg, err := p.agents.registry()
	if err != nil {
		return ""
	}
	e, err := reg.Lookup(id)
	if err != nil {
		return ""
	}
	return p.agents.staleNote(id, e)
}

// resolve is resolveID that also says where the id came from (registry, builtin, config,
// reference) and what to say about its launch. An unknown id is a *registry.UnknownAgentError.
func (p *probeFlags) resolve(id string, explicit map[string]bool) (probe.Options, string, launchNotes, error) {
	opts, l, err := p.launch(id, explicit)
	source := string(l.Source)
	if strings.HasPrefix(l.ID, referencePrefix) && l.Source == registry.SourceBuiltin {
		source = "reference"
	}
	notes := launchNotes{npx: runsNPX(l.Argv), spec: l.Package, pin: p.agents.pinClause(id, l)}
	if r := l.Resolution(); r != "" {
		notes.resolved = id + ": " + r + " (--registry-command runs that)"
	}
	return opts, source, notes, err
}

// launchNotes is what the CLI says about how an agent was launched, besides its report: how
// its id resolved when a program on PATH runs instead of the registry's command (said before
// it runs), and what explains a failure of npx to fetch it (explain).
type launchNotes struct {
	resolved string // "ID: resolved to PROGRAM on PATH (…) instead of …"
	npx      bool   // the agent's command runs npx
	spec     string // the package npx was asked for, when the registry named it
	pin      string // where the version the launch pins comes from, and what to try instead (pinClause)
	// stale, for an agent of the registry's index, is the note said when it could not be
	// probed (staleNote): which index, how old, how to fetch the current one. The matrix says
	// it per row; probe and check carry it in ProbeOptions.Note.
	stale string
}

// explain says, for an agent launched through npx that ended before it answered initialize,
// what npm said about fetching it (registry.ParseNPMError, from the agent's stderr, which is
// npx's until the agent starts): a pinned version npm does not serve, with where the pin
// comes from and what to try; a package it does not serve, and how else to get the agent
// (hint); an npm registry it could not reach. "" when npm's lines say none of that.
func (n launchNotes) explain(r *report.Result) (because, hint string) {
	if !n.npx || r == nil || r.Error == nil || r.ProtocolVersion != nil ||
		(r.Error.Stage != record.StageSpawn && r.Error.Stage != record.StageInitialize) {
		return "", ""
	}
	np := registry.ParseNPMError(r.StderrTail, n.spec)
	switch {
	case np == nil:
		return "", ""
	case np.Unreachable:
		return np.Error(), ""
	case np.Version == "":
		return np.Error(), registry.PackageHint(np.Package)
	case n.pin != "" && registry.PackageName(registry.KindNPX, n.spec) == np.Package:
		return np.Error() + "; " + n.pin, ""
	}
	return np.Error(), ""
}

// runsNPX says whether argv runs npx (or npm exec), whose failures to fetch a package
// launchNotes.explain reads.
func runsNPX(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch strings.TrimSuffix(filepath.Base(argv[0]), ".cmd") {
	case "npx":
		return true
	case "npm":
		return len(argv) > 1 && (argv[1] == "exec" || argv[1] == "x")
	}
	return false
}

// pinClause says, for an npx launch l of id that pins its package's version, where the pin
// comes from and what to try when npm no longer serves it: "the ACP registry snapshot of
// 2026-02-07 is stale: try --refresh, or the latest (npx -y @google/gemini-cli@latest
// --experimental-acp)". "" for other launches.
func (a *agentsFlags) pinClause(id string, l registry.Launch) string {
	name := registry.PackageName(registry.KindNPX, l.Package)
	if l.Kind != registry.KindNPX || name == l.Package || l.Package == name+"@latest" {
		return ""
	}
	argv := slices.Clone(l.Argv)
	if i := slices.Index(argv, l.Package); i >= 0 {
		argv[i] = name + "@latest"
	}
	latest := joinCommand(argv)
	e, err := a.reg.Lookup(id)
	switch {
	case err == nil && a.idx.FromIndex(e):
		return fmt.Sprintf("%s is stale: try --refresh, or the latest (%s)", a.idx.Name(), latest)
	case l.Source == registry.SourceBuiltin:
		return fmt.Sprintf("acpprobe's built-in %s entry is stale: try the latest (%s)", id, latest)
	case err == nil && l.Source == registry.SourceRegistry:
		return fmt.Sprintf("the registry file %s is stale: try the latest (%s)", e.Origin, latest)
	}
	return ""
}

func (p *probeFlags) launch(id string, explicit map[string]bool) (probe.Options, registry.Launch, error) {
	reg, err := p.agents.registry()
	if err != nil {
		return probe.Options{}, registry.Launch{}, err
	}
	l, err := reg.Resolve(id, p.agents.env())
	var (
		unknown     *registry.UnknownAgentError
		notRunnable error
	)
	switch {
	case errors.As(err, &unknown):
		return probe.Options{}, l, err
	case err != nil:
		notRunnable = &errNotRunnable{err: err, note: p.note(id)}
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
	opts.AgentID, opts.AgentSource = l.ID, string(l.Source)
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
	if explicit["config"] || explicit["registry"] || explicit["registry-command"] {
		return probe.Options{}, usagef("--config, --registry and --registry-command say where and how agent ids resolve: they do nothing for an agent command (after -- or with --command)")
	}
	argv, command, err := p.agentArgv(rest)
	if err != nil {
		return probe.Options{}, err
	}
	p.launched = launchNotes{npx: runsNPX(argv)}
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
	// Sources say where ids resolve: the registry's index (the cache directory, else the
	// snapshot), the personas, --registry and --config.
	Sources agentsFlags
	// All includes entries the registry keeps but does not publish.
	All bool
	// JSON prints the list as JSON.
	JSON bool
	// Refresh first fetches the official registry's current index into the cache directory
	// (--refresh), where every command then finds it.
	Refresh bool
	// CheckNPM asks npm whether it still serves the package version each npx agent pins
	// (--check-npm): the list then says so, and an agent npm does not serve cannot run.
	CheckNPM bool
	// Fetch says where Refresh fetches from (the official index when zero; tests point it at
	// a local TLS server). Its Dir is not used: the index goes where Sources read it.
	Fetch registry.RefreshOptions
}

func newAgentsOptions(args []string, stdio Stdio) (*AgentsOptions, error) {
	fs := newFlagSet("agents")
	opts := &AgentsOptions{IO: stdio}
	opts.Sources.register(fs)
	fs.BoolVar(&opts.JSON, "json", false, "print the list as JSON")
	fs.BoolVar(&opts.All, "all", false, "include entries the registry keeps but does not publish")
	fs.BoolVar(&opts.Refresh, "refresh", false, "first fetch the official registry's current index ("+registry.IndexURL+") into the cache directory, where every command then finds it")
	fs.BoolVar(&opts.CheckNPM, "check-npm", false, fmt.Sprintf("ask npm whether it still serves the version each npx agent pins (npm view PACKAGE@VERSION, %s at most each, needs the npm registry); without it RUNS HERE says the version was not checked", registry.DefaultNPMTimeout))
	if err := parseFlags(fs, args, "acpprobe agents [--refresh] [--check-npm] [--json] [--all] [--registry FILE] [--config FILE] [--registry-command]", stdio.Out); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected arguments %q", fs.Args())
	}
	return opts, nil
}

// agentsRun lists the agents acpprobe can resolve, and whether each can run here (with
// CheckNPM, whether npm serves the versions npx agents pin); with Refresh, after fetching the
// registry's current index. A fetch that fails still lists the agents of the index in use,
// then fails (exit 5) saying which that is and how old.
func agentsRun(ctx context.Context, opts *AgentsOptions) error {
	var fetchErr error
	if opts.Refresh {
		f := opts.Fetch
		f.Dir = opts.Sources.cacheDir
		x, err := registry.Refresh(ctx, f)
		if err != nil {
			fetchErr = err
		} else {
			fmt.Fprintf(opts.IO.Err, "acpprobe agents: fetched the ACP registry (index %s, %d agents) into %s\n", x.Version, len(x.Entries), x.Path)
		}
	}
	reg, err := opts.Sources.registry()
	if err != nil {
		return err
	}
	var list []registry.Status
	for _, s := range reg.List(opts.Sources.env()) {
		if s.Listed || opts.All {
			list = append(list, s)
		}
	}
	if opts.CheckNPM {
		registry.CheckStatuses(ctx, list, nil, registry.DefaultNPMTimeout)
	}
	idx, now := opts.Sources.idx, time.Now()
	if opts.JSON {
		err = render.JSON(opts.IO.Out, list)
	} else {
		err = render.Agents(render.ScreenOf(opts.IO.Out, os.Getenv), indexHeader(idx, now), list)
	}
	if err != nil {
		return writeError("the list of agents", err)
	}
	if fetchErr != nil {
		return &fileError{"fetch the current registry", fmt.Errorf("%w; still using %s (%s)", fetchErr, idx.Name(), idx.AgeText(now))}
	}
	return nil
}

// indexHeader says, above the list of agents, which registry index ids resolve through.
func indexHeader(x registry.Index, now time.Time) string {
	if !x.IsSnapshot() {
		return fmt.Sprintf("ACP registry fetched on %s (index %s, %s)", x.FetchedAt.UTC().Format("2006-01-02 15:04 MST"), x.Version, x.AgeText(now))
	}
	h := fmt.Sprintf("ACP registry snapshot %s (%s, %s; 'acpprobe agents --refresh' fetches the current one)", registry.SnapshotDate, registry.SnapshotCommit[:12], x.AgeText(now))
	if x.Problem != nil {
		h += fmt.Sprintf("; the copy fetched before is unusable: %v", x.Problem)
	}
	return h
}
