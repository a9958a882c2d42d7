// Package registry maps ACP agent ids to the command lines that start them.
//
// Its data is a snapshot of the official ACP agent registry
// (github.com/agentclientprotocol/registry), embedded under data/ with its provenance in
// data/PROVENANCE.md, plus a few built-in entries for well-known agents the snapshot lacks
// (Source "builtin"). [Refresh] fetches the registry's current index over HTTPS into the
// user cache directory, checked against the index schema, and [LoadCache] reads it back: an
// [Index] (the snapshot, or that copy) is what ids resolve through. A newer registry can
// also be read with [LoadFile] (the published registry.json index or a single agent.json),
// and an agents config file (acpprobe's, acpx's or Zed's settings) with [LoadConfig];
// [Registry.With] layers them over the index, later entries winning.
//
// [Registry.Resolve] turns an id into a [Launch] (argv, extra environment, working directory,
// a suggested startup budget) for the machine described by an [Env]; [Registry.List] tells,
// for every entry, whether it can run here and why not. Apart from Refresh's index, nothing
// here downloads or installs anything: binary distributions must already be on PATH, npx and
// uvx fetch their packages themselves when the launch runs, and an npx or uvx entry whose
// program is already on PATH runs that program instead (Entry.Programs, KindPath). [CheckNPM]
// asks npm whether it still serves the versions npx entries pin, and [ParseNPMError] reads
// why npm could not fetch a package from what npm printed.
//
// The package imports the standard library, internal/safeio and the JSON Schema validator.
package registry

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
)

// SnapshotCommit is the agentclientprotocol/registry commit the embedded snapshot was copied from.
const SnapshotCommit = "3de1678346d1b37b6c3f07de503043ebcbb9cbdb"

// SnapshotDate is the date of SnapshotCommit.
const SnapshotDate = "2026-02-07"

// unlistedDir is the registry repository's directory of entries that are kept in the
// repository but left out of the published index (its name is the registry's own, typo and all).
const unlistedDir = "_not_yet_unsupported"

//go:embed data/PROVENANCE.md data/*.schema.json data/index-2026-08/agent.schema.json data/*/agent.json data/_not_yet_unsupported/*/agent.json
var dataFS embed.FS

// Kind is how an entry is launched.
type Kind string

// Launch kinds.
const (
	KindNPX    Kind = "npx"    // an npm package run with `npx -y <package> args...`
	KindUVX    Kind = "uvx"    // a PyPI package run with `uvx <package> args...`
	KindBinary Kind = "binary" // an executable looked up on PATH
	KindConfig Kind = "config" // a command from an agents config file (see LoadConfig)
	// KindPath is a program of an npx or uvx entry's package found on PATH (Entry.Programs):
	// Resolve runs it instead of the package runner, which would fetch the package again,
	// unless Env.RegistryCommand. It is never one of Entry.Kinds: it is not a distribution.
	KindPath Kind = "path"
)

// Source tells where an entry comes from.
type Source string

// Entry sources.
const (
	SourceRegistry Source = "registry" // the official registry: the embedded snapshot or a file given to LoadFile
	SourceBuiltin  Source = "builtin"  // built into acpprobe, not from the registry (see Builtins)
	SourceConfig   Source = "config"   // an agents config file (see LoadConfig)
)

// Entry is one agent: a registry agent.json, a built-in entry or an agents config entry.
// The JSON field names are the registry's (agent.schema.json); fields after Distribution are
// acpprobe's own and are not read from registry files.
type Entry struct {
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Version      string       `json:"version"`
	Description  string       `json:"description"`
	Repository   string       `json:"repository,omitempty"`
	Website      string       `json:"website,omitempty"` // newer registries (2026-08 schema)
	Authors      []string     `json:"authors,omitempty"`
	License      string       `json:"license,omitempty"`
	LicenseURL   string       `json:"license_url,omitempty"` // newer registries (2026-08 schema)
	Icon         string       `json:"icon,omitempty"`
	Distribution Distribution `json:"distribution"`

	// Command is set instead of Distribution for config entries (Kind "config") and for
	// built-in entries that run a command found on PATH (Kind "binary").
	Command *Command `json:"-"`
	// Listed reports whether the registry publishes the entry. It is false only for entries
	// from the registry repository's _not_yet_unsupported directory, which the registry keeps
	// but leaves out of its index; they still resolve when asked for by id. Built-in and
	// config entries are Listed.
	Listed bool `json:"-"`
	// Source tells where the entry comes from.
	Source Source `json:"-"`
	// Origin names the file the entry was read from ("embedded:data/<id>/agent.json", a path
	// given to LoadFile or LoadConfig) or, for built-in entries, where its data was taken from.
	Origin string `json:"-"`
	// Aliases are other names that resolve to this entry (built-in entries only).
	Aliases []string `json:"-"`
	// RegistryRef marks a config entry that names the registry's agent of the same id rather
	// than a command (Zed's "type": "registry"). Registry.With puts ExtraEnv on that agent; an
	// entry left with RegistryRef found no such agent and cannot run.
	RegistryRef bool `json:"-"`
	// ExtraEnv is environment a config entry adds on top of the launch's own (Launch.Env).
	ExtraEnv map[string]string `json:"-"`
}

// Distribution lists the ways a registry entry can be launched; at least one is set.
type Distribution struct {
	NPX    *Package                `json:"npx,omitempty"`
	UVX    *Package                `json:"uvx,omitempty"`
	Binary map[string]BinaryTarget `json:"binary,omitempty"` // keyed by registry platform, e.g. "linux-x86_64"
}

// Package is an npx or uvx distribution.
type Package struct {
	// Package is the package spec as the registry writes it: "@scope/name@1.2.3" for npm;
	// for PyPI "name", "name==1.2.3" or "name@1.2.3". Like the registry's own launcher, Resolve
	// passes it to npx or uvx as is.
	Package string `json:"package"`
	// Cmd, when set, names the executable to run from the package (FORMAT.md of newer
	// registries: `npx --package <package> <cmd>`, `uvx --from <package> <cmd>`).
	Cmd  string            `json:"cmd,omitempty"`
	Args []string          `json:"args,omitempty"`
	Env  map[string]string `json:"env,omitempty"`
}

// BinaryTarget is a binary distribution for one platform.
type BinaryTarget struct {
	Archive string            `json:"archive"`          // URL of the archive (.zip, .tar.gz, .tgz, .tar.bz2, .tbz2) or raw binary
	SHA256  string            `json:"sha256,omitempty"` // hex checksum of Archive (newer registries)
	Cmd     string            `json:"cmd"`              // path of the executable inside the archive, e.g. "./codex-acp"
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// Command is a command line to run as is: an agents config entry or a built-in entry.
type Command struct {
	Command string            // executable: a name looked up on PATH, or a path
	Args    []string          // arguments after Command
	Env     map[string]string // environment overlaid on the caller's
	Cwd     string            // working directory ("" = the caller's)
	Install string            // how to install Command when it is missing (built-in entries)
}

// Kinds returns the launch kinds the entry offers, in the order Resolve tries them:
// binary (nothing to fetch), then npx, then uvx; "config" for config entries.
func (e Entry) Kinds() []Kind {
	if e.Command != nil {
		if e.Source == SourceConfig {
			return []Kind{KindConfig}
		}
		return []Kind{KindBinary}
	}
	var ks []Kind
	if len(e.Distribution.Binary) > 0 {
		ks = append(ks, KindBinary)
	}
	if e.Distribution.NPX != nil {
		ks = append(ks, KindNPX)
	}
	if e.Distribution.UVX != nil {
		ks = append(ks, KindUVX)
	}
	return ks
}

// Registry is a set of entries addressed by id (and, for built-in entries, by alias).
// A Registry is immutable; it is safe for concurrent use.
type Registry struct {
	entries map[string]Entry
	aliases map[string]string // alias -> id
}

// New returns a registry of the given entries; of two entries with the same id the later wins.
func New(entries ...Entry) *Registry {
	r := &Registry{entries: map[string]Entry{}, aliases: map[string]string{}}
	r.add(entries)
	return r
}

func (r *Registry) add(entries []Entry) {
	for _, e := range entries {
		if e.RegistryRef {
			e = r.overlay(e)
		}
		// An id shadows an alias of the same name, whatever the order.
		delete(r.aliases, e.ID)
		if old, ok := r.entries[e.ID]; ok {
			for _, a := range old.Aliases {
				if r.aliases[a] == e.ID {
					delete(r.aliases, a)
				}
			}
		}
		r.entries[e.ID] = e
		for _, a := range e.Aliases {
			if _, isID := r.entries[a]; !isID {
				r.aliases[a] = e.ID
			}
		}
	}
}

// overlay is the registry entry a RegistryRef entry names, with its ExtraEnv added; the
// RegistryRef entry itself when r has no such entry.
func (r *Registry) overlay(ref Entry) Entry {
	id := ref.ID
	if target, ok := r.aliases[id]; ok {
		id = target
	}
	base, ok := r.entries[id]
	if !ok || base.RegistryRef {
		return ref
	}
	base.ID = ref.ID
	base.ExtraEnv = cloneEnv(base.ExtraEnv)
	for k, v := range ref.ExtraEnv {
		if base.ExtraEnv == nil {
			base.ExtraEnv = map[string]string{}
		}
		base.ExtraEnv[k] = v
	}
	base.Origin = ref.Origin + " over " + base.Origin
	return base
}

// With returns a new registry holding r's entries plus the given ones, which replace entries
// of r with the same id (so an agents config entry named like a registry id wins over it).
// The intended layering is Default().With(registry file entries...).With(config entries...):
// config over a newer registry over the embedded snapshot and built-ins.
func (r *Registry) With(entries ...Entry) *Registry {
	n := &Registry{entries: make(map[string]Entry, len(r.entries)+len(entries)), aliases: make(map[string]string, len(r.aliases))}
	for id, e := range r.entries {
		n.entries[id] = e
	}
	for a, id := range r.aliases {
		n.aliases[a] = id
	}
	n.add(entries)
	return n
}

// Entries returns all entries sorted by id.
func (r *Registry) Entries() []Entry {
	out := make([]Entry, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Lookup returns the entry with the given id or alias. The match is exact first, then
// case-insensitive when that is unambiguous. An unknown id gives an *UnknownAgentError
// carrying close matches.
func (r *Registry) Lookup(id string) (Entry, error) {
	if e, ok := r.entries[id]; ok {
		return e, nil
	}
	if target, ok := r.aliases[id]; ok {
		return r.entries[target], nil
	}
	var found []string
	for _, name := range r.names() {
		if strings.EqualFold(name, id) {
			found = append(found, r.canonical(name))
		}
	}
	found = slices.Compact(found)
	if len(found) == 1 {
		return r.entries[found[0]], nil
	}
	return Entry{}, &UnknownAgentError{ID: id, Suggestions: r.suggest(id)}
}

// names returns every id and alias, sorted.
func (r *Registry) names() []string {
	out := make([]string, 0, len(r.entries)+len(r.aliases))
	for id := range r.entries {
		out = append(out, id)
	}
	for a := range r.aliases {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

func (r *Registry) canonical(name string) string {
	if id, ok := r.aliases[name]; ok {
		return id
	}
	return name
}

var defaultRegistry = sync.OnceValue(func() *Registry {
	embedded, err := Embedded()
	if err != nil {
		panic("registry: embedded snapshot: " + err.Error())
	}
	return New(append(embedded, Builtins()...)...)
})

// Default returns the registry of the embedded snapshot plus the built-in entries
// (a built-in entry never shares an id with a snapshot entry).
func Default() *Registry { return defaultRegistry() }

// Lookup looks id up in Default().
func Lookup(id string) (Entry, error) { return Default().Lookup(id) }

// Resolve resolves id in Default(); see Registry.Resolve.
func Resolve(id string, env Env) (Launch, error) { return Default().Resolve(id, env) }

// List lists Default(); see Registry.List.
func List(env Env) []Status { return Default().List(env) }

// Embedded parses the embedded registry snapshot: one entry per data/<id>/agent.json (Listed)
// and data/_not_yet_unsupported/<id>/agent.json (not Listed), sorted by id.
func Embedded() ([]Entry, error) {
	var out []Entry
	err := fs.WalkDir(dataFS, "data", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "agent.json" {
			return nil
		}
		b, err := dataFS.ReadFile(p)
		if err != nil {
			return err
		}
		origin := "embedded:" + p
		e, err := parseAgent(origin, b)
		if err != nil {
			return err
		}
		dir := path.Base(path.Dir(p))
		if e.ID != dir {
			return fmt.Errorf("%s: id %q does not match its directory %q", origin, e.ID, dir)
		}
		e.Origin = origin
		e.Listed = !inUnlisted(p)
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// inUnlisted reports whether a slash- or backslash-separated path has a _not_yet_unsupported element.
func inUnlisted(p string) bool {
	return slices.Contains(strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }), unlistedDir)
}
