package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/internal/safeio"
)

// Platforms are the registry's binary platform keys, in the order of its schema.
var Platforms = []string{
	"darwin-aarch64",
	"darwin-x86_64",
	"linux-aarch64",
	"linux-x86_64",
	"windows-aarch64",
	"windows-x86_64",
}

var (
	idPattern     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z][a-z0-9-]*$`) })
	sha256Pattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-fA-F0-9]{64}$`) })
)

// LoadFile reads a newer registry from a file: either the built index as published at
// https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json ({"version", "agents":
// [agent...], "extensions": [...]}; extensions are not agents and are ignored) or a single
// agent.json. The entries have Source "registry" and Origin path; they are Listed unless the
// path goes through a _not_yet_unsupported directory. Errors name the file and, for an index,
// the agent. Fields this package does not know (such as a newer "preview") are ignored.
func LoadFile(path string) ([]Entry, error) {
	b, err := safeio.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("registry file: %w", err)
	}
	return parseFile(path, b)
}

func parseFile(name string, b []byte) ([]Entry, error) {
	b = trimBOM(b)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("%s: %s", name, describeJSONError(b, err))
	}
	if raw, ok := top["agents"]; ok {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '{' {
			return nil, fmt.Errorf("%s: \"agents\" is an object: this looks like an agents config file (see LoadConfig), not a registry index", name)
		}
		return parseIndex(name, top)
	}
	if _, ok := top["distribution"]; ok {
		e, err := parseAgent(name, b)
		if err != nil {
			return nil, err
		}
		e.Origin = name
		e.Listed = !inUnlisted(name)
		return []Entry{e}, nil
	}
	return nil, fmt.Errorf("%s: neither a registry index (no \"agents\" array) nor an agent.json (no \"distribution\")", name)
}

func parseIndex(name string, top map[string]json.RawMessage) ([]Entry, error) {
	var version string
	if raw, ok := top["version"]; ok {
		if err := json.Unmarshal(raw, &version); err != nil {
			return nil, fmt.Errorf("%s: \"version\" must be a string", name)
		}
	}
	if version != "" && !strings.HasPrefix(version, "1.") {
		return nil, fmt.Errorf("%s: registry index version %q is not supported (want 1.x)", name, version)
	}
	var agents []json.RawMessage
	if err := json.Unmarshal(top["agents"], &agents); err != nil {
		return nil, fmt.Errorf("%s: \"agents\" must be an array of agent objects", name)
	}
	out := make([]Entry, 0, len(agents))
	seen := map[string]int{}
	for i, raw := range agents {
		where := fmt.Sprintf("%s: agents[%d]", name, i)
		e, err := parseAgent(where, raw)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[e.ID]; dup {
			return nil, fmt.Errorf("%s: duplicate id %q (also agents[%d])", where, e.ID, j)
		}
		seen[e.ID] = i
		e.Origin = name
		e.Listed = true
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// parseAgent decodes and checks one agent.json; where names it in errors.
func parseAgent(where string, b []byte) (Entry, error) {
	b = trimBOM(b)
	var e Entry
	if err := json.Unmarshal(b, &e); err != nil {
		// Name the agent when its id can be read at all.
		var head struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(b, &head) == nil && head.ID != "" {
			where += fmt.Sprintf(" (agent %q)", head.ID)
		}
		return Entry{}, fmt.Errorf("%s: %s", where, describeJSONError(b, err))
	}
	if e.ID != "" {
		where += fmt.Sprintf(" (agent %q)", e.ID)
	}
	if err := checkAgent(&e, b); err != nil {
		return Entry{}, fmt.Errorf("%s: %w", where, err)
	}
	e.Source = SourceRegistry
	e.Listed = true
	return e, nil
}

func checkAgent(e *Entry, raw []byte) error {
	var missing []string
	for _, f := range []struct{ name, val string }{{"id", e.ID}, {"name", e.Name}, {"version", e.Version}, {"description", e.Description}} {
		if f.val == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing or empty required field(s): %s", strings.Join(missing, ", "))
	}
	if !idPattern().MatchString(e.ID) {
		return fmt.Errorf("id %q must be lowercase letters, digits and hyphens, starting with a letter", e.ID)
	}
	var probe struct {
		Distribution map[string]json.RawMessage `json:"distribution"`
	}
	_ = json.Unmarshal(raw, &probe) // raw already decoded once into e
	d := e.Distribution
	if _, ok := probe.Distribution["binary"]; ok && len(d.Binary) == 0 {
		return errors.New("distribution.binary is empty")
	}
	if d.NPX == nil && d.UVX == nil && len(d.Binary) == 0 {
		if len(probe.Distribution) == 0 {
			return errors.New("\"distribution\" is missing or empty")
		}
		keys := make([]string, 0, len(probe.Distribution))
		for k := range probe.Distribution {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return fmt.Errorf("no supported distribution (npx, uvx or binary); has: %s", strings.Join(keys, ", "))
	}
	for _, p := range []struct {
		kind string
		pkg  *Package
	}{{"npx", d.NPX}, {"uvx", d.UVX}} {
		if p.pkg != nil && strings.TrimSpace(p.pkg.Package) == "" {
			return fmt.Errorf("distribution.%s.package is missing or empty", p.kind)
		}
	}
	for _, plat := range sortedKeys(d.Binary) {
		t := d.Binary[plat]
		if t.Archive == "" {
			return fmt.Errorf("distribution.binary.%s.archive is missing or empty", plat)
		}
		if t.Cmd == "" {
			return fmt.Errorf("distribution.binary.%s.cmd is missing or empty", plat)
		}
		if t.SHA256 != "" && !sha256Pattern().MatchString(t.SHA256) {
			return fmt.Errorf("distribution.binary.%s.sha256 %q is not 64 hex digits", plat, t.SHA256)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func trimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// describeJSONError renders a decoding error with a line and column where it has an offset.
func describeJSONError(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(b, syn.Offset)
		return fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		if typ.Field == "" {
			return fmt.Sprintf("the document must be a JSON object, got JSON %s", typ.Value)
		}
		line, col := lineCol(b, typ.Offset)
		return fmt.Sprintf("%s: got JSON %s, want %s (line %d, column %d)", typ.Field, typ.Value, jsonTypeName(typ.Type.String()), line, col)
	}
	return "invalid JSON: " + err.Error()
}

func jsonTypeName(goType string) string {
	switch {
	case goType == "string":
		return "string"
	case strings.HasPrefix(goType, "[]"):
		return "array of " + jsonTypeName(goType[2:])
	case strings.HasPrefix(goType, "map[string]"):
		if elem := jsonTypeName(goType[len("map[string]"):]); elem != "object" {
			return "object of " + elem
		}
		return "object"
	case strings.HasPrefix(goType, "*"), strings.HasPrefix(goType, "registry."), strings.HasPrefix(goType, "struct"), goType == "json.RawMessage":
		return "object"
	}
	return goType
}

// lineCol converts a byte offset (as json reports it, pointing just past the error) to 1-based line and column.
func lineCol(b []byte, off int64) (line, col int) {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	if off < 1 {
		return 1, 1
	}
	before := b[:off-1]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off-1) - bytes.LastIndexByte(before, '\n')
	return line, col
}

// MaxFileSize bounds a registry or agents config file (the official registry.json is about
// 100 KiB).
const MaxFileSize = 16 << 20
