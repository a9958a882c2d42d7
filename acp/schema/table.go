package schema

import "sort"

//go:generate go run ./internal/gen

// table is one pinned schema set, compiled at build time by internal/gen into
// tables_gen.go: its types ($defs), the method index (x-method, x-side) and every schema of
// the document as a node. The compiler lays the tables out as static data, so a process
// parses and compiles nothing before its first verdict.
type table struct {
	name    string
	file    string // the pinned document, relative to acp/schema (see data/SOURCE.md)
	defs    []def  // sorted by name
	methods []method
	// nodes are the schemas of the document; index 0 is unused (0 means none).
	nodes []node
}

// def is one type of $defs.
type def struct {
	name string
	node int32
}

// method maps side|part|method to the type that describes it.
type method struct {
	key, def string
}

// node is one schema of a set: the keywords the validator acts on, subschemas as node
// indices. A field at its zero value means the keyword is absent.
type node struct {
	loc     string // the schema's location in the document: "#/$defs/X/properties/y"
	boolean int8   // schemaTrue or schemaFalse for a boolean schema
	types   types
	lenient bool // x-deserialize-default-on-error, -skip-invalid-items or -default-on-null
	ref     int32
	not     int32
	items   int32
	// addl is additionalProperties: a node, addlTrue or addlFalse.
	addl      int32
	minLength int32
	minItems  int32
	cnst      value
	enum      []value
	minimum   string // JSON number text
	maximum   string
	pattern   string
	required  []string
	props     []prop // sorted by name
	allOf     []int32
	anyOf     []int32
	oneOf     []int32
}

// Boolean schemas.
const (
	schemaTrue  = 1
	schemaFalse = -1
)

// additionalProperties given as a boolean.
const (
	addlTrue  = -1
	addlFalse = -2
)

type prop struct {
	name string
	node int32
}

// value is a const or enum value (the pinned sets have scalar ones only).
type value struct {
	kind valueKind
	text string // the string, the number's JSON text, "true" or "false"
}

type valueKind uint8

const (
	kNone valueKind = iota
	kString
	kNumber
	kBool
	kNull
)

// types is the set of JSON types a type keyword allows, in the order error messages list them.
type types uint8

const (
	tNull types = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeNames = []string{"null", "boolean", "number", "integer", "string", "array", "object"}

// def returns the node of the named type, or 0.
func (t *table) def(name string) int32 {
	i := sort.Search(len(t.defs), func(i int) bool { return t.defs[i].name >= name })
	if i < len(t.defs) && t.defs[i].name == name {
		return t.defs[i].node
	}
	return 0
}

// prop returns the node of property name, or 0.
func (n *node) prop(name string) int32 {
	for _, p := range n.props {
		if p.name == name {
			return p.node
		}
	}
	return 0
}
