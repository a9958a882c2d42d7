// Package schema embeds the pinned official ACP JSON schemas (see data/SOURCE.md for their
// provenance) and validates messages against the type their method implies.
//
// JSON Schema validation alone misses one class of deviation: the ACP schemas never forbid
// extra keys, yet the protocol reserves every non-`_meta` key of a spec type. UnknownKeys walks
// an instance along its schema and reports those keys.
package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

//go:embed data
var data embed.FS

// Schema sets that can be chosen.
const (
	V1         = "v1"          // stable v1 (schema 1.21.0), the default
	V1Unstable = "v1-unstable" // v1 with the unstable drafts (session/fork, providers, …)
	V2         = "v2"          // the v2 draft (2.0.0-alpha.3)
	V1Next     = "v1-next"     // the newer v1 shipped in @agentclientprotocol/sdk 2.4.0 (≥ 1.25)
	// V1NextUnstable is the newer v1 with its unstable drafts (auth/status,
	// agentCapabilities.auth.status, auth/status_update, session/status, …).
	V1NextUnstable = "v1-next-unstable"
)

var files = map[string]string{
	V1:         "data/v1/schema.json",
	V1Unstable: "data/v1/schema.unstable.json",
	V2:         "data/v2/schema.json",
	V1Next:     "data/npm-sdk-2.4.0/v1/schema.json",
	// the unstable file of the same release
	V1NextUnstable: "data/npm-sdk-2.4.0/v1/schema.unstable.json",
}

// Names lists the selectable sets.
func Names() []string { return []string{V1, V1Unstable, V2, V1Next, V1NextUnstable} }

// Provenance is data/SOURCE.md: where every embedded file comes from.
func Provenance() string {
	b, _ := data.ReadFile("data/SOURCE.md")
	return string(b)
}

// Side says which peer handles a method (x-side in the schema): "agent" methods are called by
// the client, "client" methods by the agent.
type Side string

// Sides.
const (
	HandledByAgent  Side = "agent"
	HandledByClient Side = "client"
)

// Part is which piece of an exchange a type describes.
type Part string

// Parts.
const (
	Params       Part = "Request"      // request params
	Result       Part = "Response"     // response result
	Notification Part = "Notification" // notification params
)

// Set is one loaded schema: its $defs and a method index.
type Set struct {
	Name string
	url  string
	doc  any // the whole document, for walking by JSON pointer
	defs map[string]map[string]any
	// index maps side|part|method to the $defs name.
	index map[string]string

	nodes    sync.Map // location → node (see node)
	compiler *jsonschema.Compiler
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Set{}
)

// Load returns the named set (see Names); sets are parsed once and shared.
func Load(name string) (*Set, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if s, ok := loaded[name]; ok {
		return s, nil
	}
	path, ok := files[name]
	if !ok {
		return nil, fmt.Errorf("unknown schema set %q (have %s)", name, strings.Join(Names(), ", "))
	}
	raw, err := data.ReadFile(path)
	if err != nil {
		return nil, err
	}
	// One parse serves the compiler, the $defs index and the walks (numbers stay json.Number).
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	top, _ := doc.(map[string]any)
	rawDefs, _ := top["$defs"].(map[string]any)
	defs := make(map[string]map[string]any, len(rawDefs))
	for k, v := range rawDefs {
		if m, ok := v.(map[string]any); ok {
			defs[k] = m
		}
	}
	// The compiler checks every document against the JSON Schema metaschema on first use
	// (about 20 ms for a pinned set), except documents whose URL is under json-schema.org,
	// which it takes as metaschemas. The pinned sets are registered there, and
	// TestPinnedSetsAreValidSchemas checks them against the metaschema once, in the tests.
	s := &Set{Name: name, url: trustedBase + name, doc: doc, defs: defs, index: map[string]string{},
		compiler: jsonschema.NewCompiler(), compiled: map[string]*jsonschema.Schema{}}
	if err := s.compiler.AddResource(s.url, doc); err != nil {
		return nil, err
	}
	for def, node := range defs {
		method, _ := node["x-method"].(string)
		side, _ := node["x-side"].(string)
		if method == "" {
			continue
		}
		for _, part := range []Part{Params, Result, Notification} {
			if strings.HasSuffix(def, string(part)) {
				s.index[key(Side(side), part, method)] = def
			}
		}
	}
	loaded[name] = s
	return s, nil
}

func key(side Side, part Part, method string) string {
	return string(side) + "|" + string(part) + "|" + method
}

// TypeFor returns the $defs name describing part of method, handled by side.
func (s *Set) TypeFor(method string, side Side, part Part) (string, bool) {
	def, ok := s.index[key(side, part, method)]
	return def, ok
}

// Methods lists the methods the set defines for side, sorted.
func (s *Set) Methods(side Side) []string {
	seen := map[string]bool{}
	for k := range s.index {
		parts := strings.SplitN(k, "|", 3)
		if parts[0] == string(side) {
			seen[parts[2]] = true
		}
	}
	out := make([]string, 0, len(seen))
	for m := range seen {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Has reports whether the set defines the named type.
func (s *Set) Has(def string) bool { _, ok := s.defs[def]; return ok }

// Violation is one way an instance does not match its type.
type Violation struct {
	Pointer string // JSON pointer into the instance
	Keyword string // the failing keyword's location in the schema
	Message string
}

// Validate checks instance (raw JSON) against the named $defs type. It returns the leaf
// violations, most specific first; nil means valid.
func (s *Set) Validate(def string, instance json.RawMessage) ([]Violation, error) {
	sch, err := s.schema("#/$defs/" + def)
	if err != nil {
		return nil, err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return nil, fmt.Errorf("instance is not JSON: %w", err)
	}
	verr := sch.Validate(inst)
	if verr == nil {
		return nil, nil
	}
	ve, ok := verr.(*jsonschema.ValidationError)
	if !ok {
		return nil, verr
	}
	out := leaves(ve)
	for i := range out { // name the keyword as acp:NAME#/…, not by the registration URL
		out[i].Keyword = "acp:" + s.Name + strings.TrimPrefix(out[i].Keyword, s.url)
	}
	return out, nil
}

// trustedBase is where the sets are registered in their compiler (see Load).
const trustedBase = "https://json-schema.org/acpprobe/"

// valid reports whether instance matches the schema at the given location (a JSON pointer
// fragment into the document).
func (s *Set) valid(location string, instance any) bool {
	sch, err := s.schema(location)
	if err != nil {
		return false
	}
	return sch.Validate(instance) == nil
}

func (s *Set) schema(fragment string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.compiled[fragment]; ok {
		return sch, nil
	}
	sch, err := s.compiler.Compile(s.url + fragment)
	if err != nil {
		return nil, err
	}
	s.compiled[fragment] = sch
	return sch, nil
}

// leaves flattens a validation error into its most specific causes.
func leaves(ve *jsonschema.ValidationError) []Violation {
	var out []Violation
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, Violation{
				Pointer: pointer(e.InstanceLocation),
				Keyword: e.SchemaURL,
				Message: e.ErrorKind.LocalizedString(printer),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// DiscriminatorValues lists the constant values property prop takes across the branches of
// the union type def (e.g. SessionUpdate/sessionUpdate, ContentBlock/type), in schema order.
func (s *Set) DiscriminatorValues(def, prop string) []string {
	var out []string
	seen := map[string]bool{}
	var visit func(loc string, depth int)
	visit = func(loc string, depth int) {
		if depth > 8 {
			return
		}
		node, _ := s.node(loc).(map[string]any)
		if props, ok := node["properties"].(map[string]any); ok {
			if p, ok := props[prop].(map[string]any); ok {
				if c, ok := p["const"].(string); ok && !seen[c] {
					seen[c] = true
					out = append(out, c)
				}
			}
		}
		if ref, ok := node["$ref"].(string); ok {
			visit(ref, depth+1)
		}
		for _, kw := range []string{"anyOf", "oneOf", "allOf"} {
			if subs, ok := node[kw].([]any); ok {
				for i := range subs {
					visit(loc+"/"+kw+"/"+strconv.Itoa(i), depth+1)
				}
			}
		}
	}
	visit("#/$defs/"+def, 0)
	return out
}
