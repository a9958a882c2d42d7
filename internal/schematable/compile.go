package schematable

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Doc is one schema document of a set.
type Doc struct {
	// Name is how the locations of its schemas are written ("doc.json#/…"); the first document's
	// are written "#/…". A document refers to another by the other's $id, relative to its own.
	Name string
	Raw  []byte
	// AssertFormats asserts its formats whatever its dialect, as jsonschema/v6's
	// Compiler.AssertFormat does (a draft-07 document's are always asserted; a 2020-12
	// document's are otherwise annotations).
	AssertFormats bool
}

// Compiled is a compiled set: its table, and the annotations of its named types that the
// validator does not read (ACP's x-method and x-side).
type Compiled struct {
	Table *Table
	// Methods maps each type with an x-method to that method and its x-side.
	Methods map[string]Method
}

// Method is the x-method and x-side of a type.
type Method struct{ Name, Side string }

// Compile compiles documents into one table: every document's root (the first one's named "",
// the others' by their Name) and its named types ($defs in 2020-12, definitions in draft-07;
// the first document's by their name, the others' as Name#name), and every schema they reach. It refuses what the validator does not implement (see the
// package doc).
func Compile(docs ...Doc) (*Compiled, error) {
	c := &compiler{byLoc: map[string]int32{}, nodes: []Node{{}}, methods: map[string]Method{}}
	for i, d := range docs {
		dec := json.NewDecoder(bytes.NewReader(d.Raw))
		dec.UseNumber()
		var root map[string]any
		if err := dec.Decode(&root); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		doc := &document{name: d.Name, root: root, assertFormats: d.AssertFormats}
		if i > 0 {
			doc.prefix = d.Name
		}
		dialect, _ := root["$schema"].(string)
		switch {
		case strings.Contains(dialect, "draft/2020-12"):
			doc.defsKey = "$defs"
		case strings.Contains(dialect, "draft-07"):
			doc.defsKey, doc.draft07 = "definitions", true
		default:
			return nil, fmt.Errorf("%s: $schema %q: only 2020-12 and draft-07 documents are supported", d.Name, dialect)
		}
		if id, ok := root["$id"].(string); ok {
			u, err := url.Parse(id)
			if err != nil {
				return nil, fmt.Errorf("%s: $id: %w", d.Name, err)
			}
			doc.id = u
		}
		c.docs = append(c.docs, doc)
	}
	for _, doc := range c.docs {
		c.doc = doc
		if _, err := c.schema(doc.root, doc.prefix+"#"); err != nil {
			return nil, err
		}
		c.defs = append(c.defs, Def{Name: doc.prefix, Node: c.byLoc[doc.prefix+"#"]})
		defs, _ := doc.root[doc.defsKey].(map[string]any)
		names := make([]string, 0, len(defs))
		for name := range defs {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			n, err := c.schema(defs[name], doc.prefix+"#/"+doc.defsKey+"/"+Escape(name))
			if err != nil {
				return nil, err
			}
			def := name
			if doc.prefix != "" {
				def = doc.prefix + "#" + name
			}
			c.defs = append(c.defs, Def{Name: def, Node: n})
			m, _ := defs[name].(map[string]any)
			if method, _ := m["x-method"].(string); method != "" {
				side, _ := m["x-side"].(string)
				c.methods[def] = Method{method, side}
			}
		}
	}
	for id, ref := range c.refs {
		n, ok := c.byLoc[ref]
		if !ok {
			return nil, fmt.Errorf("%s: $ref resolves to %s, which is no schema of the set", c.nodes[id].Loc, ref)
		}
		c.nodes[id].Ref = n
	}
	if err := c.noCycles(); err != nil {
		return nil, err
	}
	slices.SortFunc(c.defs, func(a, b Def) int { return strings.Compare(a.Name, b.Name) })
	return &Compiled{Table: &Table{Defs: c.defs, Nodes: c.nodes}, Methods: c.methods}, nil
}

type document struct {
	name, prefix string
	root         map[string]any
	id           *url.URL
	defsKey      string
	draft07      bool
	// assertFormats: its formats are asserted (Doc.AssertFormats)
	assertFormats bool
}

type compiler struct {
	docs    []*document
	doc     *document // the document being compiled
	nodes   []Node
	byLoc   map[string]int32
	refs    map[int32]string // node -> the location its $ref names
	defs    []Def
	methods map[string]Method
}

// annotations are the keywords that do not change what is valid (format is one in 2020-12, and
// contentEncoding unless a validator opts in, which acpprobe never did).
var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "contentEncoding": true,
	"contentMediaType": true, "deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
	// OpenAPI-style hints some generators emit: not JSON Schema keywords.
	"discriminator": true, "propertyName": true,
}

// lenientKeys mark a field the reference ACP SDKs read leniently.
var lenientKeys = map[string]bool{
	"x-deserialize-default-on-error": true, "x-deserialize-skip-invalid-items": true, "x-deserialize-default-on-null": true,
}

// schema compiles the schema v at loc and returns its node.
func (c *compiler) schema(v any, loc string) (int32, error) {
	id := int32(len(c.nodes))
	c.nodes = append(c.nodes, Node{Loc: loc})
	c.byLoc[loc] = id
	if b, ok := v.(bool); ok {
		c.nodes[id].Boolean = SchemaFalse
		if b {
			c.nodes[id].Boolean = SchemaTrue
		}
		return id, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return 0, fmt.Errorf("%s: a schema must be an object or a boolean", loc)
	}
	n := Node{Loc: loc} // filled here, stored at the end (children are appended meanwhile)
	root := loc == c.doc.prefix+"#"
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var err error
	for _, k := range keys {
		val := m[k]
		at := loc + "/" + Escape(k)
		switch {
		case annotations[k]:
		case k == "format" && !c.doc.draft07 && !c.doc.assertFormats: // an annotation in 2020-12
		case lenientKeys[k]:
			n.Lenient = n.Lenient || val == true
		case strings.HasPrefix(k, "x-"):
		case root && (k == "$schema" || k == "$id" || k == c.doc.defsKey):
		case k == "type":
			n.Types, err = typesOf(val, at)
		case k == "const":
			n.Const, err = scalarOf(val, at)
		case k == "enum":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				return 0, fmt.Errorf("%s: enum must be a non-empty array", at)
			}
			for _, e := range arr {
				s, err := scalarOf(e, at)
				if err != nil {
					return 0, err
				}
				n.Enum = append(n.Enum, s)
			}
		case k == "required":
			arr, ok := val.([]any)
			if !ok {
				return 0, fmt.Errorf("%s: required must be an array", at)
			}
			for _, e := range arr {
				s, ok := e.(string)
				if !ok {
					return 0, fmt.Errorf("%s: required holds a non-string", at)
				}
				n.Required = append(n.Required, s)
			}
		case k == "properties":
			props, ok := val.(map[string]any)
			if !ok {
				return 0, fmt.Errorf("%s: properties must be an object", at)
			}
			names := make([]string, 0, len(props))
			for p := range props {
				names = append(names, p)
			}
			slices.Sort(names)
			for _, p := range names {
				child, err := c.schema(props[p], at+"/"+Escape(p))
				if err != nil {
					return 0, err
				}
				n.Props = append(n.Props, Prop{p, child})
			}
		case k == "additionalProperties":
			switch val {
			case true:
				n.Addl = AddlTrue
			case false:
				n.Addl = AddlFalse
			default:
				n.Addl, err = c.schema(val, at)
			}
		case k == "unevaluatedProperties":
			if val != true { // true evaluates every property and never fails
				return 0, fmt.Errorf("%s: only unevaluatedProperties: true is supported", at)
			}
		case k == "items":
			if _, isArray := val.([]any); isArray {
				return 0, fmt.Errorf("%s: only a single items schema is supported", at)
			}
			n.Items, err = c.schema(val, at)
		case k == "not":
			n.Not, err = c.schema(val, at)
		case k == "propertyNames":
			n.PropertyNames, err = c.schema(val, at)
		case k == "allOf" || k == "anyOf" || k == "oneOf":
			arr, ok := val.([]any)
			if !ok || len(arr) == 0 {
				return 0, fmt.Errorf("%s: must be a non-empty array", at)
			}
			var ids []int32
			for i, sub := range arr {
				child, err := c.schema(sub, at+"/"+strconv.Itoa(i))
				if err != nil {
					return 0, err
				}
				ids = append(ids, child)
			}
			switch k {
			case "allOf":
				n.AllOf = ids
			case "anyOf":
				n.AnyOf = ids
			default:
				n.OneOf = ids
			}
		case k == "$ref":
			ref, ok := val.(string)
			if !ok {
				return 0, fmt.Errorf("%s: $ref must be a string", at)
			}
			target, err := c.resolve(ref)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", at, err)
			}
			if c.refs == nil {
				c.refs = map[int32]string{}
			}
			c.refs[id] = target
		case k == "minimum" || k == "maximum":
			num, ok := val.(json.Number)
			if !ok {
				return 0, fmt.Errorf("%s: must be a number", at)
			}
			if k == "minimum" {
				n.Minimum = num.String()
			} else {
				n.Maximum = num.String()
			}
		case k == "minLength" || k == "minItems" || k == "minProperties":
			num, ok := val.(json.Number)
			i, perr := strconv.ParseInt(num.String(), 10, 32)
			if !ok || perr != nil || i < 0 {
				return 0, fmt.Errorf("%s: must be a non-negative integer", at)
			}
			switch k {
			case "minLength":
				n.MinLength = int32(i)
			case "minItems":
				n.MinItems = int32(i)
			default:
				n.MinProperties = int32(i)
			}
		case k == "maxItems":
			num, ok := val.(json.Number)
			i, perr := strconv.ParseInt(num.String(), 10, 32)
			if !ok || perr != nil || i < 0 || i == 1<<31-1 {
				return 0, fmt.Errorf("%s: must be a non-negative integer", at)
			}
			n.MaxItems = int32(i) + 1
		case k == "pattern":
			s, ok := val.(string)
			if !ok {
				return 0, fmt.Errorf("%s: must be a string", at)
			}
			if _, err := regexp.Compile(s); err != nil {
				return 0, fmt.Errorf("%s: %w", at, err)
			}
			n.Pattern = s
		case k == "format": // asserted in draft-07, or when the document asks
			s, _ := val.(string)
			if !slices.Contains(Formats, s) {
				return 0, fmt.Errorf("%s: format %q is not supported (a draft-07 validator asserts it)", at, s)
			}
			n.Format = s
		default:
			return 0, fmt.Errorf("%s: keyword %q is not supported by the validator (internal/schematable)", at, k)
		}
		if err != nil {
			return 0, err
		}
	}
	if _, hasRef := m["$ref"]; hasRef && c.doc.draft07 {
		for _, k := range keys {
			if k != "$ref" && !annotations[k] && !strings.HasPrefix(k, "x-") {
				return 0, fmt.Errorf("%s: draft-07 ignores %q beside $ref; the validator refuses the ambiguity", loc, k)
			}
		}
	}
	c.nodes[id] = n
	return id, nil
}

// resolve turns a $ref of the current document into the location of its target.
func (c *compiler) resolve(ref string) (string, error) {
	docPart, frag, _ := strings.Cut(ref, "#")
	target := c.doc
	if docPart != "" {
		if c.doc.id == nil {
			return "", fmt.Errorf("$ref %q: the document has no $id to resolve it against", ref)
		}
		u, err := c.doc.id.Parse(docPart)
		if err != nil {
			return "", fmt.Errorf("$ref %q: %w", ref, err)
		}
		target = nil
		for _, d := range c.docs {
			if d.id != nil && d.id.String() == u.String() {
				target = d
			}
		}
		if target == nil {
			return "", fmt.Errorf("$ref %q: no document of the set has the $id %s", ref, u)
		}
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return "", fmt.Errorf("$ref %q: only JSON pointer fragments are supported", ref)
	}
	return target.prefix + "#" + frag, nil
}

// typesOf reads a type keyword.
func typesOf(v any, at string) (Types, error) {
	var names []string
	switch t := v.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return 0, fmt.Errorf("%s: type holds a non-string", at)
			}
			names = append(names, s)
		}
	default:
		return 0, fmt.Errorf("%s: type must be a string or an array", at)
	}
	var ts Types
	for _, s := range names {
		i := slices.Index(typeNames, s)
		if i < 0 {
			return 0, fmt.Errorf("%s: unknown type %q", at, s)
		}
		ts |= 1 << i
	}
	return ts, nil
}

// scalarOf reads a const or enum value.
func scalarOf(v any, at string) (Value, error) {
	switch x := v.(type) {
	case string:
		return Value{KString, x}, nil
	case json.Number:
		return Value{KNumber, x.String()}, nil
	case bool:
		return Value{KBool, strconv.FormatBool(x)}, nil
	case nil:
		return Value{KNull, ""}, nil
	}
	return Value{}, fmt.Errorf("%s: only scalar const and enum values are supported", at)
}

// noCycles refuses a cycle of schemas applied to the same value ($ref, allOf, anyOf, oneOf,
// not): validating it would never end.
func (c *compiler) noCycles() error {
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, len(c.nodes))
	var visit func(id int32) error
	visit = func(id int32) error {
		switch state[id] {
		case active:
			return fmt.Errorf("%s: a cycle of references that consumes no input", c.nodes[id].Loc)
		case done:
			return nil
		}
		state[id] = active
		n := &c.nodes[id]
		next := slices.Concat(n.AllOf, n.AnyOf, n.OneOf)
		for _, m := range []int32{n.Ref, n.Not} {
			if m != 0 {
				next = append(next, m)
			}
		}
		for _, m := range next {
			if err := visit(m); err != nil {
				return err
			}
		}
		state[id] = done
		return nil
	}
	for id := int32(1); id < int32(len(c.nodes)); id++ {
		if err := visit(id); err != nil {
			return err
		}
	}
	return nil
}
