// Package schematable validates JSON against JSON Schemas compiled at build time into static
// Go tables, so that no process parses or compiles a schema: a set's tables are static data,
// and the validator walks them. acp/schema compiles the pinned ACP schemas, registry the
// registry's index schema, each with go generate and a test that the checked-in tables are
// current.
//
// Compile accepts exactly the part of JSON Schema (2020-12, and draft-07 for the registry) that
// those documents use and that the validator implements, and refuses anything else: another
// keyword, a reference it cannot resolve, a cycle of references that consumes no input. The
// validator has the semantics and the messages of github.com/santhosh-tekuri/jsonschema/v6,
// which the tests keep as its oracle (the same verdict and the same leaf violations), with one
// difference: an object's members are judged in key order, where jsonschema/v6 follows Go's
// map order, so the order of the violations is stable.
package schematable

import "sort"

// Table is one compiled schema set: its named types and every schema of its documents as a
// node. Generated code fills it; it is read only.
type Table struct {
	Defs []Def // sorted by name
	// Nodes are the schemas; index 0 is unused (0 means none).
	Nodes []Node
}

// Def is one named type ($defs, definitions) of a set, or a document's root (named "").
type Def struct {
	Name string
	Node int32
}

// Node is one schema: the keywords the validator acts on, subschemas as node indices. A field
// at its zero value means the keyword is absent.
type Node struct {
	Loc     string // the schema's location: "#/$defs/X/properties/y" (the first document's), "doc.json#/…"
	Boolean int8   // SchemaTrue or SchemaFalse for a boolean schema
	Types   Types
	Lenient bool // x-deserialize-default-on-error, -skip-invalid-items or -default-on-null (ACP)
	Ref     int32
	Not     int32
	Items   int32
	// Addl is additionalProperties: a node, AddlTrue or AddlFalse.
	Addl          int32
	PropertyNames int32
	MinLength     int32
	MinItems      int32
	// MaxItems is maxItems plus one, so that the zero Node has none (0: no maxItems).
	MaxItems      int32
	MinProperties int32
	Const         Value
	Enum          []Value
	Minimum       string // JSON number text
	Maximum       string
	Pattern       string
	Format        string // an asserted format (draft-07, or Doc.AssertFormats): see Formats
	Required      []string
	Props         []Prop // sorted by name
	AllOf         []int32
	AnyOf         []int32
	OneOf         []int32
}

// Boolean schemas.
const (
	SchemaTrue  = 1
	SchemaFalse = -1
)

// additionalProperties given as a boolean.
const (
	AddlTrue  = -1
	AddlFalse = -2
)

// Prop is one entry of properties.
type Prop struct {
	Name string
	Node int32
}

// Value is a const or enum value (scalars only: Compile refuses others).
type Value struct {
	Kind Kind
	Text string // the string, the number's JSON text, "true" or "false"
}

// Kind is the JSON type of a Value.
type Kind uint8

// Kinds; KNone is an absent const.
const (
	KNone Kind = iota
	KString
	KNumber
	KBool
	KNull
)

// Types is the set of JSON types a type keyword allows, in the order error messages list them.
type Types uint8

// JSON types.
const (
	TNull Types = 1 << iota
	TBoolean
	TNumber
	TInteger
	TString
	TArray
	TObject
)

var typeNames = []string{"null", "boolean", "number", "integer", "string", "array", "object"}

// Def returns the node of the named type, or 0.
func (t *Table) Def(name string) int32 {
	i := sort.Search(len(t.Defs), func(i int) bool { return t.Defs[i].Name >= name })
	if i < len(t.Defs) && t.Defs[i].Name == name {
		return t.Defs[i].Node
	}
	return 0
}

// Prop returns the node of property name, or 0.
func (n *Node) Prop(name string) int32 {
	for _, p := range n.Props {
		if p.Name == name {
			return p.Node
		}
	}
	return 0
}
