// Package schema holds the pinned official ACP JSON schemas (see data/SOURCE.md for their
// provenance) and validates messages against the type their method implies. The schemas are
// compiled at build time into Go tables (go generate: internal/gen, with internal/schematable),
// so validating costs no parse and no compile at run time.
//
// JSON Schema validation alone misses one class of deviation: the ACP schemas never forbid
// extra keys, yet the protocol reserves every non-`_meta` key of a spec type. UnknownKeys walks
// an instance along its schema and reports those keys.
package schema

import (
	"embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/internal/schematable"
)

// data holds data/SOURCE.md, the provenance of the pinned documents. The documents stay in
// data/ for the generator and the tests; the binary carries their compiled tables.
//
//go:embed data/SOURCE.md
var data embed.FS

// Schema sets that can be chosen.
const (
	// V1Next is the newer v1 shipped in @agentclientprotocol/sdk 2.4.0 (schema ≥ 1.25.0: stable
	// session notices, compaction updates and tool call names), the default.
	V1Next = "v1-next"
	// V1NextUnstable is the newer v1 with its unstable drafts (auth/status,
	// agentCapabilities.auth.status, auth/status_update, session/status, …).
	V1NextUnstable = "v1-next-unstable"
	V1             = "v1"          // stable v1 of the spec repository's schema-v1.21.0
	V1Unstable     = "v1-unstable" // v1 1.21.0 with the unstable drafts (session/fork, providers, NES, …)
	V2             = "v2"          // the v2 draft (2.0.0-alpha.3)
)

// Default is the set a v1 record is read against when none is chosen.
const Default = V1Next

//go:generate go run ./internal/gen

// set is one compiled set (tables_gen.go): its table, its pinned file and its method index.
type set struct {
	file string // relative to acp/schema
	// methods map side|part|method to the type that describes it, sorted by key.
	methods []method
	table   schematable.Table
}

type method struct{ key, def string }

// sets are the selectable sets, in the order of Names, each with the schema release it is
// (data/SOURCE.md says how each was identified).
var sets = []*Set{
	{V1, "1.21.0", &setV1},
	{V1Unstable, "1.21.0 with its unstable drafts", &setV1Unstable},
	{V2, "2.0.0-alpha.3 (draft)", &setV2},
	{V1Next, ">= 1.25.0, as shipped in @agentclientprotocol/sdk 2.4.0", &setV1Next},
	{V1NextUnstable, ">= 1.25.0 with its unstable drafts, as shipped in @agentclientprotocol/sdk 2.4.0", &setV1NextUnstable},
}

// Names lists the selectable sets.
func Names() []string {
	out := make([]string, len(sets))
	for i, s := range sets {
		out[i] = s.Name
	}
	return out
}

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

// Set is one pinned schema set: its types ($defs), its method index and a validator.
type Set struct {
	Name string
	// Version is the ACP schema release the set is, in words ("1.21.0", ">= 1.25.0, as shipped
	// in …"): a report names it beside Name.
	Version string
	s       *set
}

// Load returns the named set (see Names). The sets are compiled at build time: Load only
// finds one.
func Load(name string) (*Set, error) {
	for _, s := range sets {
		if s.Name == name {
			return s, nil
		}
	}
	return nil, fmt.Errorf("unknown schema set %q (have %s)", name, strings.Join(Names(), ", "))
}

func key(side Side, part Part, method string) string {
	return string(side) + "|" + string(part) + "|" + method
}

// TypeFor returns the $defs name describing part of method, handled by side.
func (s *Set) TypeFor(method string, side Side, part Part) (string, bool) {
	k := key(side, part, method)
	ms := s.s.methods
	i := sort.Search(len(ms), func(i int) bool { return ms[i].key >= k })
	if i < len(ms) && ms[i].key == k {
		return ms[i].def, true
	}
	return "", false
}

// Methods lists the methods the set defines for side, sorted.
func (s *Set) Methods(side Side) []string {
	var out []string
	for _, m := range s.s.methods {
		parts := strings.SplitN(m.key, "|", 3)
		if parts[0] == string(side) && !slices.Contains(out, parts[2]) {
			out = append(out, parts[2])
		}
	}
	slices.Sort(out)
	return out
}

// Has reports whether the set defines the named type.
func (s *Set) Has(def string) bool { return def != "" && s.s.table.Def(def) != 0 }

// Violation is one way an instance does not match its type; its Keyword is the location of
// the failing schema, as acp:NAME#/$defs/….
type Violation = schematable.Violation

// Validate checks instance (raw JSON) against the named $defs type. It returns the leaf
// violations (nil means valid): for a union no branch matches, those of every branch.
func (s *Set) Validate(def string, instance json.RawMessage) ([]Violation, error) {
	return s.validate(def, instance, (*schematable.Table).Violations)
}

// ValidateNamed is Validate, but a union the instance fails and names a branch of by its
// discriminator (a session update's sessionUpdate, a content block's type) says why that
// branch failed, not why every branch did (schematable.NamedViolations): what a report says
// of one bad field of a tool_call_update.
func (s *Set) ValidateNamed(def string, instance json.RawMessage) ([]Violation, error) {
	return s.validate(def, instance, (*schematable.Table).NamedViolations)
}

func (s *Set) validate(def string, instance json.RawMessage, violations func(*schematable.Table, int32, any) []schematable.Violation) ([]Violation, error) {
	n := s.node(def)
	if n == 0 {
		return nil, fmt.Errorf("schema %s has no type %s", s.Name, def)
	}
	v, err := schematable.Decode(instance)
	if err != nil {
		return nil, fmt.Errorf("instance is not JSON: %w", err)
	}
	out := violations(&s.s.table, n, v)
	for i := range out {
		out[i].Keyword = "acp:" + s.Name + out[i].Keyword
	}
	return out, nil
}

// node is the node of the named type (0 for none; the document's root is no type).
func (s *Set) node(def string) int32 {
	if def == "" {
		return 0
	}
	return s.s.table.Def(def)
}

// DiscriminatorValues lists the constant values property prop takes across the branches of
// the union type def (e.g. SessionUpdate/sessionUpdate, ContentBlock/type), in schema order.
func (s *Set) DiscriminatorValues(def, prop string) []string {
	var out []string
	var visit func(n int32, depth int)
	visit = func(n int32, depth int) {
		if n == 0 || depth > 8 {
			return
		}
		nd := &s.s.table.Nodes[n]
		if p := nd.Prop(prop); p != 0 {
			if c := s.s.table.Nodes[p].Const; c.Kind == schematable.KString && !slices.Contains(out, c.Text) {
				out = append(out, c.Text)
			}
		}
		visit(nd.Ref, depth+1)
		for _, subs := range [][]int32{nd.AnyOf, nd.OneOf, nd.AllOf} {
			for _, sub := range subs {
				visit(sub, depth+1)
			}
		}
	}
	visit(s.node(def), 0)
	return out
}
