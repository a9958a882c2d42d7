package registry

import (
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// ColdStartTimeout is the startup budget suggested for launches that may download a package
// first (npx, uvx, and config commands run through a package runner such as npx or uvx).
const ColdStartTimeout = 60 * time.Second

// packageRunners are commands whose first start may fetch and install a package.
var packageRunners = []string{"npx", "pnpx", "bunx", "uvx", "pipx", "uv", "npm", "pnpm", "yarn", "bun"}

// interpreters are binary "cmd" values that name a system interpreter rather than the
// agent itself: finding one on PATH says nothing about the agent's own files in the archive.
var interpreters = []string{"node", "python", "python3", "java", "ruby", "bun", "deno", "sh", "bash"}

// Env describes the machine a launch is resolved for. The zero value means this machine:
// runtime.GOOS, runtime.GOARCH and exec.LookPath.
type Env struct {
	GOOS     string                            // "" = runtime.GOOS
	GOARCH   string                            // "" = runtime.GOARCH
	LookPath func(file string) (string, error) // nil = exec.LookPath
	// RegistryCommand resolves npx and uvx entries to the registry's own command even when a
	// program of their package is on PATH (which otherwise runs instead: KindPath).
	RegistryCommand bool
}

// HostEnv returns the Env of this machine, with every field filled in.
func HostEnv() Env { return Env{}.norm() }

func (e Env) norm() Env {
	if e.GOOS == "" {
		e.GOOS = runtime.GOOS
	}
	if e.GOARCH == "" {
		e.GOARCH = runtime.GOARCH
	}
	if e.LookPath == nil {
		e.LookPath = exec.LookPath
	}
	return e
}

// Platform returns the registry platform key for the Env ("linux-x86_64", "darwin-aarch64",
// ...), or "" when the registry has no builds for its GOOS/GOARCH.
func (e Env) Platform() string { e = e.norm(); return PlatformFor(e.GOOS, e.GOARCH) }

// PlatformFor maps a GOOS/GOARCH pair to a registry platform key; "" if there is none.
func PlatformFor(goos, goarch string) string {
	var arch string
	switch goarch {
	case "amd64":
		arch = "x86_64"
	case "arm64":
		arch = "aarch64"
	default:
		return ""
	}
	switch goos {
	case "darwin", "linux", "windows":
		return goos + "-" + arch
	}
	return ""
}

// StartupTimeout is the startup budget suggested for a kind: ColdStartTimeout for npx and
// uvx, which may download a package before the agent starts, 0 ("use the default") otherwise.
// A config command run through a package runner (npx, uvx, ...) also gets ColdStartTimeout;
// Launch.StartupTimeout accounts for that.
func (k Kind) StartupTimeout() time.Duration {
	if k == KindNPX || k == KindUVX {
		return ColdStartTimeout
	}
	return 0
}

// Launch is a resolved command line.
type Launch struct {
	ID     string // the entry's id
	Kind   Kind   // npx, uvx, binary or config
	Source Source // where the entry comes from
	// Argv is the command line. Argv[0] is the executable as the registry or config names it
	// ("npx", "uvx", the binary's base name, the config command); Path is where LookPath found it.
	Argv []string
	Path string
	// Env holds variables to set on top of the caller's environment (see Environ).
	Env map[string]string
	// Dir is the working directory for the agent; "" means the caller's.
	Dir string
	// StartupTimeout is the suggested budget for the agent's first answer: ColdStartTimeout
	// for launches that may download a package first, 0 for "use the default".
	StartupTimeout time.Duration
	// Package is the package spec an npx or uvx launch fetches, or that a path launch stands
	// in for ("@google/gemini-cli@0.27.3"); "" for other launches.
	Package string
	// Replaces is, for a path launch, the registry's command it runs instead of.
	Replaces []string
	// Installed is, for a path launch, the npm package and version its program belongs to
	// ("@google/gemini-cli 0.61.0"), as the package's package.json says; "" when unknown.
	Installed string
}

// Environ returns base (as os.Environ gives it) with l.Env overlaid: variables of l.Env
// replace those of the same name and the rest are appended in name order.
func (l Launch) Environ(base []string) []string {
	out := make([]string, 0, len(base)+len(l.Env))
	done := map[string]bool{}
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if v, ok := l.Env[name]; ok {
			if !done[name] {
				out = append(out, name+"="+v)
				done[name] = true
			}
			continue
		}
		out = append(out, kv)
	}
	for _, name := range sortedKeys(l.Env) {
		if !done[name] {
			out = append(out, name+"="+l.Env[name])
		}
	}
	return out
}

// String renders the launch as a shell-like line: environment assignments, then argv, with
// arguments quoted where a POSIX shell would need it.
func (l Launch) String() string {
	var parts []string
	for _, name := range sortedKeys(l.Env) {
		parts = append(parts, name+"="+shellQuote(l.Env[name]))
	}
	return strings.Join(append(parts, quoteArgv(l.Argv)), " ")
}

func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./-_", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// NotRunnableError says why an entry cannot be launched on the Env it was resolved for and,
// where known, how to make it runnable.
type NotRunnableError struct {
	ID      string
	Reason  string // e.g. `codex-acp not found on PATH`
	Install string // e.g. `download https://..., extract it and put codex-acp on PATH`; may be ""
}

// Error implements error.
func (e *NotRunnableError) Error() string {
	msg := fmt.Sprintf("agent %q cannot run here: %s", e.ID, e.Reason)
	if e.Install != "" {
		msg += "; to install: " + e.Install
	}
	return msg
}

// Resolve returns how to launch the agent id on the machine env describes. An entry with
// several distributions is tried in the order of Entry.Kinds: a binary already on PATH, then
// npx, then uvx; before npx or uvx, a program of their package already on PATH (KindPath,
// unless env.RegistryCommand), which then runs instead of fetching the package. Each launch
// needs its executable on PATH (the binary, the program, npx or uvx; for config entries the
// command); nothing is downloaded here.
//
// Errors: an *UnknownAgentError for an unknown id; a *NotRunnableError when nothing can run
// here, in which case the returned Launch is still filled in for the preferred kind (Path
// empty) so that callers can show what would run.
func (r *Registry) Resolve(id string, env Env) (Launch, error) {
	e, err := r.Lookup(id)
	if err != nil {
		return Launch{}, err
	}
	return e.Resolve(env)
}

// Resolve returns how to launch the entry; see Registry.Resolve.
func (e Entry) Resolve(env Env) (Launch, error) {
	env = env.norm()
	var (
		first    Launch
		haveOne  bool
		reasons  []string
		installs []string
	)
	for _, k := range e.Kinds() {
		if (k == KindNPX || k == KindUVX) && !env.RegistryCommand {
			if l, ok := e.onPath(k, env); ok {
				l.Env = withEnv(l.Env, e.ExtraEnv)
				return l, nil
			}
		}
		l, reason, install := e.try(k, env)
		l.Env = withEnv(l.Env, e.ExtraEnv)
		if reason == "" {
			return l, nil
		}
		if !haveOne && l.Argv != nil {
			first, haveOne = l, true
		}
		reasons = append(reasons, reason)
		if install != "" {
			installs = append(installs, install)
		}
	}
	if !haveOne {
		first = Launch{ID: e.ID, Source: e.Source}
		if ks := e.Kinds(); len(ks) > 0 {
			first.Kind = ks[0]
		}
	}
	switch {
	case e.RegistryRef:
		reasons = append(reasons, fmt.Sprintf("its config entry (\"type\": \"registry\") names an agent of the ACP registry, but the registry has no agent %q", e.ID))
	case len(reasons) == 0:
		reasons = append(reasons, "the entry has no distribution")
	}
	return first, &NotRunnableError{ID: e.ID, Reason: strings.Join(reasons, "; "), Install: strings.Join(installs, "; or ")}
}

// try builds the launch of one kind; reason is "" when it can run, else why not.
func (e Entry) try(k Kind, env Env) (l Launch, reason, install string) {
	l = Launch{ID: e.ID, Kind: k, Source: e.Source}
	switch {
	case e.Command != nil:
		c := e.Command
		l.Argv = append([]string{c.Command}, c.Args...)
		l.Env = cloneEnv(c.Env)
		l.Dir = c.Cwd
		if slices.Contains(packageRunners, commandBase(c.Command)) {
			l.StartupTimeout = ColdStartTimeout
		}
		look := c.Command
		if c.Cwd != "" && !filepath.IsAbs(look) && strings.ContainsAny(look, `/\`) {
			look = filepath.Join(c.Cwd, look)
		}
		p, err := env.LookPath(look)
		if err != nil {
			return l, fmt.Sprintf("%s not found%s", c.Command, onPath(c.Command)), c.Install
		}
		l.Path = p
		return l, "", ""

	case k == KindNPX || k == KindUVX:
		pkg, runner := e.Distribution.NPX, "npx"
		if k == KindUVX {
			pkg, runner = e.Distribution.UVX, "uvx"
		}
		l.Argv = packageArgv(runner, pkg)
		l.Env = cloneEnv(pkg.Env)
		l.Package = pkg.Package
		l.StartupTimeout = k.StartupTimeout()
		p, err := env.LookPath(runner)
		if err != nil {
			if k == KindNPX {
				return l, "npx not found on PATH", "install Node.js (npx comes with npm): https://nodejs.org"
			}
			return l, "uvx not found on PATH", "install uv (uvx comes with it): https://docs.astral.sh/uv/getting-started/installation/"
		}
		l.Path = p
		return l, "", ""

	case k == KindBinary:
		plat := PlatformFor(env.GOOS, env.GOARCH)
		t, ok := e.Distribution.Binary[plat]
		if !ok {
			have := sortedKeys(e.Distribution.Binary)
			if plat == "" {
				return Launch{}, fmt.Sprintf("the registry has no platform for %s/%s (binary builds: %s)", env.GOOS, env.GOARCH, strings.Join(have, ", ")), ""
			}
			return Launch{}, fmt.Sprintf("no binary build for %s (builds: %s)", plat, strings.Join(have, ", ")), ""
		}
		name := commandBase(t.Cmd)
		l.Argv = append([]string{name}, t.Args...)
		l.Env = cloneEnv(t.Env)
		how := fmt.Sprintf("download %s", t.Archive)
		if t.SHA256 != "" {
			how += fmt.Sprintf(" (sha256 %s)", t.SHA256)
		}
		if isArchive(t.Archive) {
			how += fmt.Sprintf(", extract it and put %s on PATH", strings.TrimPrefix(path.Clean(strings.ReplaceAll(t.Cmd, `\`, "/")), "./"))
		} else {
			how += fmt.Sprintf(", save it as %s on PATH", name)
			if !strings.HasPrefix(env.GOOS, "windows") {
				how += " and make it executable"
			}
		}
		if slices.Contains(interpreters, strings.TrimSuffix(name, ".exe")) {
			return l, fmt.Sprintf("its command is the interpreter %s, which runs files from the archive", name),
				how + "; then describe it in an agents config file with the extracted paths"
		}
		p, err := env.LookPath(name)
		if err != nil {
			return l, fmt.Sprintf("%s not found on PATH", name), how
		}
		l.Path = p
		return l, "", ""
	}
	return l, fmt.Sprintf("unknown launch kind %q", k), ""
}

// packageArgv builds an npx or uvx command line as the registry's FORMAT.md describes it.
func packageArgv(runner string, pkg *Package) []string {
	var argv []string
	switch {
	case runner == "npx" && pkg.Cmd != "":
		argv = []string{"npx", "-y", "--package", pkg.Package, pkg.Cmd}
	case runner == "npx":
		argv = []string{"npx", "-y", pkg.Package}
	case pkg.Cmd != "":
		argv = []string{"uvx", "--from", pkg.Package, pkg.Cmd}
	default:
		argv = []string{"uvx", pkg.Package}
	}
	return append(argv, pkg.Args...)
}

// commandBase returns the last element of a registry or config command, whichever separator it uses.
func commandBase(cmd string) string {
	return path.Base(strings.ReplaceAll(cmd, `\`, "/"))
}

func onPath(cmd string) string {
	if strings.ContainsAny(cmd, `/\`) {
		return ""
	}
	return " on PATH"
}

func isArchive(url string) bool {
	u := strings.ToLower(url)
	for _, ext := range []string{".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar"} {
		if strings.HasSuffix(u, ext) {
			return true
		}
	}
	return false
}

// withEnv is env with extra laid over it (a new map when extra has anything).
func withEnv(env, extra map[string]string) map[string]string {
	if len(extra) == 0 {
		return env
	}
	out := cloneEnv(env)
	if out == nil {
		out = map[string]string{}
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func cloneEnv(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Status is one line of `acpprobe agents`: an entry and whether it can run here.
type Status struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Version     string   `json:"version,omitempty"`
	Description string   `json:"description,omitempty"`
	Kind        Kind     `json:"kind"`             // the kind Resolve picks (or would prefer, when none can run)
	Kinds       []Kind   `json:"kinds"`            // every kind the entry offers
	Source      Source   `json:"source"`           // registry, builtin or config
	Listed      bool     `json:"listed"`           // false for registry entries it keeps but does not publish
	CanRun      bool     `json:"canRun"`           // whether Resolve succeeds here
	Reason      string   `json:"reason,omitempty"` // why not, when CanRun is false
	Install     string   `json:"install,omitempty"`
	Argv        []string `json:"argv,omitempty"` // the command line (that would be) run
	Aliases     []string `json:"aliases,omitempty"`
	Origin      string   `json:"origin,omitempty"` // the file (or note) the entry comes from
	// Package is the package spec an npx or uvx launch fetches, or a path launch stands in for.
	Package string `json:"package,omitempty"`
	// Replaces is, for a path launch (Kind "path"), the registry's command it runs instead of;
	// Installed is the package and version of the program on PATH, when its package.json says.
	Replaces  []string `json:"replaces,omitempty"`
	Installed string   `json:"installed,omitempty"`
	// NPM is what npm said of Package when asked (CheckStatuses); nil when not asked.
	NPM *NPMCheck `json:"npm,omitempty"`
}

// RunsHere says, in a few words, whether the entry can run here and how sure that is: "yes"
// (a binary or command on PATH), "yes (gemini on PATH: @google/gemini-cli 0.61.0)",
// "yes (npx; version not checked)", "yes (npx; npm serves 0.61.0)", or "no: " and the reason.
func (s Status) RunsHere() string {
	switch {
	case !s.CanRun:
		return "no: " + s.Reason
	case s.Kind == KindPath && len(s.Argv) > 0:
		if s.Installed != "" {
			return fmt.Sprintf("yes (%s on PATH: %s)", s.Argv[0], s.Installed)
		}
		return fmt.Sprintf("yes (%s on PATH)", s.Argv[0])
	case s.Kind != KindNPX && s.Kind != KindUVX:
		return "yes"
	case s.NPM == nil:
		return fmt.Sprintf("yes (%s; version not checked)", s.Kind)
	case s.NPM.Served == NPMServes:
		return fmt.Sprintf("yes (npx; npm serves %s)", s.NPM.Detail)
	}
	return fmt.Sprintf("yes (npx; version not checked: %s)", s.NPM.Detail)
}

// List returns the status of every entry on the machine env describes, sorted by id.
func (r *Registry) List(env Env) []Status {
	env = env.norm()
	entries := r.Entries()
	out := make([]Status, 0, len(entries))
	for _, e := range entries {
		l, err := e.Resolve(env)
		s := Status{
			ID: e.ID, Name: e.Name, Version: e.Version, Description: e.Description,
			Kind: l.Kind, Kinds: e.Kinds(), Source: e.Source, Listed: e.Listed,
			CanRun: err == nil, Argv: l.Argv, Aliases: slices.Clone(e.Aliases), Origin: e.Origin,
			Package: l.Package, Replaces: l.Replaces, Installed: l.Installed,
		}
		if nr, ok := err.(*NotRunnableError); ok {
			s.Reason, s.Install = nr.Reason, nr.Install
		} else if err != nil {
			s.Reason = err.Error()
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
