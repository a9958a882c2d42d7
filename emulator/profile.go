package emulator

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/internal/safefs"
	"github.com/acpprobe/acpprobe/internal/safeio"
	"github.com/acpprobe/acpprobe/record"
)

// Profile says how to point one agent at the emulator: the environment, the files in its
// throwaway HOME and the authenticate call that make it send its model requests to the
// emulator with a dummy key. Profiles are data: an embedded set (profiles/*.json) plus a
// user directory (LoadProfilesDir).
//
// Text values may hold placeholders, replaced by Setup: {{baseURL}} (http://127.0.0.1:PORT),
// {{port}}, {{dummyKey}} and {{home}} (the throwaway HOME).
type Profile struct {
	// Name identifies the profile; a user file is named <name>.json. The generic profiles
	// are named after their dialect ("anthropic", "openai-responses" …) and match nothing.
	Name string `json:"name"`
	// Description says in one line what the profile is for.
	Description string `json:"description,omitempty"`
	// Match lists the keys that choose this profile for an agent.
	Match Match `json:"match"`
	// Dialect is the wire format the agent speaks with this setup (Auto: any of them, as the
	// agent chooses).
	Dialect Dialect `json:"dialect"`
	// Env are environment variables to set (values may hold placeholders).
	Env map[string]string `json:"env,omitempty"`
	// EmptyEnv are environment variables that must be unset or empty: a value there would
	// send the agent elsewhere or change what it does.
	EmptyEnv []string `json:"emptyEnv,omitempty"`
	// HomeDirs are environment variables that name directories to create inside the HOME:
	// variable -> path relative to HOME (the variable is set to the absolute path).
	HomeDirs map[string]string `json:"homeDirs,omitempty"`
	// Files are files to write into the HOME before the agent starts.
	Files []File `json:"files,omitempty"`
	// Authenticate is the authMethods id to call authenticate with before session/new;
	// empty means no call.
	Authenticate string `json:"authenticate,omitempty"`
	// Gateway, when set, logs the agent in through its gateway login instead (ACP's
	// authenticate with _meta.gateway {baseUrl, headers}), the emulator as the gateway.
	Gateway *Gateway `json:"gateway,omitempty"`
	// Verified lists the agent versions the recipe was checked against ("name version").
	Verified []string `json:"verified,omitempty"`
	// Conditions say what the setup creates that changes what the agent does (a trusted
	// workspace): the report names them beside the route.
	Conditions []string `json:"conditions,omitempty"`
	// Notes explain the recipe: why each setting is there, what the agent then sends.
	Notes []string `json:"notes,omitempty"`
}

// Gateway is a gateway login: the authMethods id to authenticate with, and the path the
// gateway's base URL has after the emulator's (the agent appends its own paths to it: codex
// wants "/v1", as the OpenAI SDKs do).
type Gateway struct {
	Method string `json:"method"`
	Path   string `json:"path,omitempty"`
}

// GatewayProtocols are the gateway protocols (an auth method's _meta.gateway.protocol) the
// emulator serves, and the path each one's base URL has (GatewayPath).
var GatewayProtocols = map[string]Dialect{"anthropic": Anthropic, "openai": OpenAIResponses, "google": Gemini}

// GatewayPath is the path a gateway base URL of protocol has after the host: the OpenAI
// clients append their endpoints to a base URL that ends in /v1, the others to the host.
func GatewayPath(protocol string) string {
	if protocol == "openai" {
		return "/v1"
	}
	return ""
}

// Match lists the keys that choose a profile. A key belongs to one profile only.
type Match struct {
	// RegistryIDs are ACP registry ids ("codex-acp").
	RegistryIDs []string `json:"registryIds,omitempty"`
	// ConfigNames are agent names in an agents config file.
	ConfigNames []string `json:"configNames,omitempty"`
	// Packages are npm package names without their scope ("claude-agent-acp" stands for
	// @zed-industries/claude-agent-acp and @agentclientprotocol/claude-agent-acp alike):
	// matched against the package an npx command runs and against agentInfo.name.
	Packages []string `json:"packages,omitempty"`
	// Programs are the program names that run the agent ("codex-acp", "gemini"): matched
	// against the command's program (its base name, or a script's run by node).
	Programs []string `json:"programs,omitempty"`
	// AgentNames are initialize agentInfo.name values ("OpenCode").
	AgentNames []string `json:"agentNames,omitempty"`
}

// File is a file a profile writes into the HOME.
type File struct {
	// Path is relative to HOME, with forward slashes; it may not leave HOME.
	Path string `json:"path"`
	// Content is the file's text (placeholders are replaced).
	Content string `json:"content"`
}

// Keys are what a caller knows of an agent; empty fields are not used.
type Keys struct {
	RegistryID string
	ConfigName string
	// Package is the npm package the command runs through npx (scoped or not); Program the
	// command's program name.
	Package string
	Program string
	// AgentName is agentInfo.name, learned by a first handshake.
	AgentName string
}

// Values fill a profile's placeholders.
type Values struct {
	// BaseURL is the emulator's base URL (Server.URL); Port its port.
	BaseURL string
	Port    int
	// DummyKey is the credential given to the agent (DummyKey when empty).
	DummyKey string
	// Home is the throwaway HOME, an absolute path.
	Home string
}

// ValuesFor returns the Values for an agent run with s as its model and home as its HOME.
func ValuesFor(s *Server, home string) Values {
	return Values{BaseURL: s.URL(), Port: s.Port(), DummyKey: s.opts.DummyKey, Home: home}
}

// Setup is a profile made concrete for one run.
type Setup struct {
	// Profile is the profile's name; Dialect its dialect.
	Profile string
	Dialect Dialect
	// Env are KEY=VALUE assignments, sorted by key; Empty the variables to remove.
	Env   []string
	Empty []string
	// Dirs are directories to create (absolute, inside HOME); Files files to write.
	Dirs  []string
	Files []File
	// Authenticate is the methodId to authenticate with before session/new, or empty.
	Authenticate string
	// Gateway is the gateway login to authenticate with instead (nil for none): its method
	// and the base URL to give it.
	Gateway *GatewayLogin

	home string // Values.Home: everything above is beneath it
}

// GatewayLogin is a gateway login made concrete: the method, and the gateway's base URL.
type GatewayLogin struct {
	Method  string
	BaseURL string
}

// Meta is the _meta of the authenticate call (ACP's gateway login: the base URL and headers
// the agent sends its model requests to).
func (g GatewayLogin) Meta() json.RawMessage {
	b, _ := json.Marshal(map[string]any{"gateway": map[string]any{"baseUrl": g.BaseURL, "headers": map[string]string{}}})
	return b
}

// Limits on profile files.
const (
	maxProfileFile = 256 << 10
	maxFileContent = 64 << 10
)

//go:embed profiles/*.json
var embeddedProfiles embed.FS

var (
	profileName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })
	envName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`) })
	placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`) })
	knownFields = []string{"baseURL", "port", "dummyKey", "home"}
)

// Profiles is a validated set of profiles.
type Profiles struct {
	list []Profile // by name
}

// LoadProfiles reads and validates the embedded profiles.
func LoadProfiles() (*Profiles, error) { return loadProfiles("") }

// LoadProfilesDir loads the embedded profiles and then every *.json file directly inside
// dir, one profile per file named <name>.json. A user profile with an embedded profile's
// name replaces it. A *.json entry that is not a regular file, a file over 256 KiB, an
// unknown member, a bad placeholder, a path leaving HOME or a match key claimed by two
// profiles is an error naming the file; other files are ignored.
func LoadProfilesDir(dir string) (*Profiles, error) {
	if dir == "" {
		return nil, errors.New("emulator: LoadProfilesDir: empty directory name")
	}
	return loadProfiles(dir)
}

func loadProfiles(dir string) (*Profiles, error) {
	byName := map[string]Profile{}
	origin := map[string]string{}
	var errs []error
	add := func(file string, data []byte) {
		p, err := parseProfile(data)
		if err == nil && path.Base(filepath.ToSlash(file)) != p.Name+".json" {
			err = fmt.Errorf("the file must be named %s.json after its profile", p.Name)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("emulator: profile %s: %w", file, err))
			return
		}
		byName[p.Name], origin[p.Name] = p, file
	}
	names, _ := fs.Glob(embeddedProfiles, "profiles/*.json")
	for _, name := range names {
		data, err := embeddedProfiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("emulator: embedded profiles: %w", err)
		}
		add("emulator/"+name, data)
	}
	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("emulator: profiles directory: %w", err)
		}
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			file := filepath.Join(dir, e.Name())
			data, err := safeio.ReadFileNoFollow(file, maxProfileFile)
			if err != nil {
				errs = append(errs, fmt.Errorf("emulator: profile %s: %w", file, err))
				continue
			}
			add(file, data)
		}
	}
	set := &Profiles{}
	owner := map[string]string{}
	for _, name := range sortedKeys(byName) {
		p := byName[name]
		for _, k := range p.Match.keys() {
			if other, dup := owner[k]; dup {
				errs = append(errs, fmt.Errorf("emulator: profile %s: match key %s is also claimed by profile %q (%s)",
					origin[name], k, other, origin[other]))
				continue
			}
			owner[k] = name
		}
		set.list = append(set.list, p)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// parseProfile decodes one profile strictly and checks it.
func parseProfile(data []byte) (Profile, error) {
	var p Profile
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("invalid profile JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return p, errors.New("invalid profile JSON: data after the top-level object")
	}
	return p, p.check()
}

// check validates a decoded profile.
func (p *Profile) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !profileName().MatchString(p.Name) {
		bad("name %q must be lower-case letters, digits, '.', '_' or '-' (at most 64)", p.Name)
	}
	if !slices.Contains(Dialects, p.Dialect) && p.Dialect != Auto {
		bad("dialect %q is not one of %v or %s", p.Dialect, Dialects, Auto)
	}
	for _, k := range p.Match.keys() {
		if _, v, _ := strings.Cut(k, " "); strings.TrimSpace(v) == "" || strings.TrimSpace(v) != v {
			bad("match key %s is empty or has surrounding spaces", k)
		}
	}
	for _, k := range sortedKeys(p.Env) {
		if !envName().MatchString(k) {
			bad("env: %q is not a variable name", k)
		}
		if err := checkTemplate(p.Env[k]); err != nil {
			bad("env %s: %v", k, err)
		}
	}
	for _, k := range p.EmptyEnv {
		if !envName().MatchString(k) {
			bad("emptyEnv: %q is not a variable name", k)
		}
		if _, set := p.Env[k]; set {
			bad("emptyEnv: %s is also set in env", k)
		}
	}
	for _, k := range sortedKeys(p.HomeDirs) {
		if !envName().MatchString(k) {
			bad("homeDirs: %q is not a variable name", k)
		}
		if _, set := p.Env[k]; set {
			bad("homeDirs: %s is also set in env", k)
		}
		if !localPath(p.HomeDirs[k]) {
			bad("homeDirs %s: %q must be a relative path inside HOME", k, p.HomeDirs[k])
		}
	}
	for i, f := range p.Files {
		if !localPath(f.Path) {
			bad("files[%d]: path %q must be a relative path inside HOME", i, f.Path)
		}
		if len(f.Content) > maxFileContent {
			bad("files[%d]: content larger than %d bytes", i, maxFileContent)
		}
		if err := checkTemplate(f.Content); err != nil {
			bad("files[%d] %s: %v", i, f.Path, err)
		}
	}
	if strings.TrimSpace(p.Authenticate) != p.Authenticate {
		bad("authenticate %q has surrounding spaces", p.Authenticate)
	}
	if g := p.Gateway; g != nil {
		switch {
		case p.Authenticate != "":
			bad("gateway and authenticate both say how to log in: keep one")
		case g.Method == "" || strings.TrimSpace(g.Method) != g.Method:
			bad("gateway method %q is empty or has surrounding spaces", g.Method)
		case g.Path != "" && (!strings.HasPrefix(g.Path, "/") || strings.ContainsAny(g.Path, "?#{}")):
			bad("gateway path %q must be a plain absolute path", g.Path)
		}
	}
	return errors.Join(errs...)
}

// keys lists the match keys as "kind value" strings.
func (m Match) keys() []string {
	var out []string
	for _, k := range m.RegistryIDs {
		out = append(out, "registryId "+k)
	}
	for _, k := range m.ConfigNames {
		out = append(out, "configName "+k)
	}
	for _, k := range m.Packages {
		out = append(out, "package "+k)
	}
	for _, k := range m.Programs {
		out = append(out, "program "+k)
	}
	for _, k := range m.AgentNames {
		out = append(out, "agentName "+k)
	}
	return out
}

// localPath reports whether p is a clean relative slash path that stays inside its root.
func localPath(p string) bool {
	return p != "" && !strings.Contains(p, "\\") && path.Clean(p) == p && filepath.IsLocal(filepath.FromSlash(p))
}

// checkTemplate checks that every placeholder in s is known and every "{{" opens one
// ("}}" alone is ordinary text: JSON and TOML files end nested objects with it).
func checkTemplate(s string) error {
	if strings.Contains(placeholder().ReplaceAllString(s, ""), "{{") {
		return errors.New("a {{ opens no {{placeholder}}")
	}
	for _, m := range placeholder().FindAllStringSubmatch(s, -1) {
		if !slices.Contains(knownFields, m[1]) {
			return fmt.Errorf("unknown placeholder {{%s}} (known: %s)", m[1], strings.Join(knownFields, ", "))
		}
	}
	return nil
}

// fill replaces the placeholders in s.
func fill(s string, v Values) string {
	return placeholder().ReplaceAllStringFunc(s, func(m string) string {
		switch placeholder().FindStringSubmatch(m)[1] {
		case "baseURL":
			return v.BaseURL
		case "port":
			return strconv.Itoa(v.Port)
		case "dummyKey":
			return v.DummyKey
		case "home":
			return v.Home
		}
		return m
	})
}

// All returns every profile, by name.
func (s *Profiles) All() []Profile { return slices.Clone(s.list) }

// Get returns the profile named name.
func (s *Profiles) Get(name string) (Profile, bool) {
	for _, p := range s.list {
		if p.Name == name {
			return p, true
		}
	}
	return Profile{}, false
}

// Backend returns the generic profile of a dialect (--backend anthropic|openai-responses|
// openai-chat|gemini|auto): the profile named after the dialect.
func (s *Profiles) Backend(d Dialect) (Profile, bool) {
	p, ok := s.Get(string(d))
	return p, ok && p.Dialect == d
}

// Match chooses the profile for an agent, by the first of its keys that a profile lists: its
// registry id, its config name, the npm package its command runs (under any scope), its
// program, its agentInfo.name (exactly, or as a package under any scope). It also says which
// key matched, as a person reads it ("registry id codex-acp", "agentInfo.name
// @agentclientprotocol/claude-agent-acp"). An agent that matches nothing has no profile.
func (s *Profiles) Match(k Keys) (Profile, string, bool) {
	for _, try := range []struct {
		kind, value string
		list        func(Match) []string
	}{
		{"registry id", k.RegistryID, func(m Match) []string { return m.RegistryIDs }},
		{"config name", k.ConfigName, func(m Match) []string { return m.ConfigNames }},
		{"package", record.PackageName(k.Package), func(m Match) []string { return m.Packages }},
		{"program", k.Program, func(m Match) []string { return m.Programs }},
		{"agentInfo.name", k.AgentName, func(m Match) []string { return m.AgentNames }},
		{"agentInfo.name", record.PackageName(k.AgentName), func(m Match) []string { return m.Packages }},
	} {
		if try.value == "" {
			continue
		}
		for _, p := range s.list {
			if slices.Contains(try.list(p.Match), try.value) {
				shown := try.value
				if try.kind == "package" {
					shown = k.Package
				} else if try.kind == "agentInfo.name" {
					shown = k.AgentName
				}
				return p, try.kind + " " + shown, true
			}
		}
	}
	return Profile{}, "", false
}

// Setup makes the profile concrete for one run. v.Home must be an absolute path.
func (p Profile) Setup(v Values) (Setup, error) {
	if !filepath.IsAbs(v.Home) {
		return Setup{}, fmt.Errorf("emulator: profile %s: HOME %q is not an absolute path", p.Name, v.Home)
	}
	if v.DummyKey == "" {
		v.DummyKey = DummyKey
	}
	s := Setup{Profile: p.Name, Dialect: p.Dialect, Authenticate: p.Authenticate, Empty: slices.Clone(p.EmptyEnv), home: v.Home}
	if g := p.Gateway; g != nil {
		s.Gateway = &GatewayLogin{Method: g.Method, BaseURL: v.BaseURL + g.Path}
	}
	env := map[string]string{}
	for k, val := range p.Env {
		env[k] = fill(val, v)
	}
	for _, k := range sortedKeys(p.HomeDirs) {
		dir := filepath.Join(v.Home, filepath.FromSlash(p.HomeDirs[k]))
		env[k] = dir
		s.Dirs = append(s.Dirs, dir)
	}
	for _, k := range sortedKeys(env) {
		s.Env = append(s.Env, k+"="+env[k])
	}
	for _, f := range p.Files {
		s.Files = append(s.Files, File{Path: filepath.Join(v.Home, filepath.FromSlash(f.Path)), Content: fill(f.Content, v)})
	}
	slices.Sort(s.Empty)
	return s, nil
}

// Write creates the setup's directories (0700) and files (0600, replacing any) in the HOME.
// The HOME is an agent's, which may have run there already (a turn's earlier connection)
// and planted links: every path is resolved beneath the HOME without following a link or
// crossing a mount point, the HOME's own path may hold no link, and a file is written new
// and renamed over the old name, never through it (internal/safefs). A write that would leave
// the HOME fails instead.
func (s Setup) Write() error {
	home, err := safefs.OpenDir(s.home)
	if err != nil {
		return fmt.Errorf("emulator: setup %s: the HOME: %w", s.Profile, err)
	}
	defer home.Close()
	rel := func(p string) (string, error) {
		r, err := filepath.Rel(s.home, p)
		if err != nil || !filepath.IsLocal(r) {
			return "", fmt.Errorf("emulator: setup %s: %s is not inside the HOME", s.Profile, p)
		}
		return r, nil
	}
	for _, d := range s.Dirs {
		r, err := rel(d)
		if err == nil {
			err = home.MkdirAll(r, 0o700)
		}
		if err != nil {
			return fmt.Errorf("emulator: setup %s: %w", s.Profile, err)
		}
	}
	for _, f := range s.Files {
		r, err := rel(f.Path)
		if err == nil {
			err = home.WriteFile(r, []byte(f.Content), 0o600)
		}
		if err != nil {
			return fmt.Errorf("emulator: setup %s: %w", s.Profile, err)
		}
	}
	return nil
}

// Written are the directories and files Write makes (absolute paths inside HOME).
func (s Setup) Written() []string {
	out := slices.Clone(s.Dirs)
	for _, f := range s.Files {
		out = append(out, f.Path)
	}
	return out
}

// Environ applies the setup to an environment (KEY=VALUE list): the variables of Empty and
// Env are removed from base, then Env is appended.
func (s Setup) Environ(base []string) []string {
	drop := map[string]bool{}
	for _, k := range s.Empty {
		drop[k] = true
	}
	for _, kv := range s.Env {
		k, _, _ := strings.Cut(kv, "=")
		drop[k] = true
	}
	out := make([]string, 0, len(base)+len(s.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if !drop[k] {
			out = append(out, kv)
		}
	}
	return append(out, s.Env...)
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
