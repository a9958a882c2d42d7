package schematable

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// printer formats the messages as jsonschema/v6 does (numbers with English digit grouping).
var printer = message.NewPrinter(language.English)

// Decode parses an instance as the validator expects it (and as jsonschema/v6 does): numbers
// kept exact (json.Number), one value and nothing after it.
func Decode(instance []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(instance))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// Valid reports whether v (as Decode gives it) matches node n. It stops at the first failure
// and allocates nothing.
func (t *Table) Valid(n int32, v any) bool {
	nd := &t.Nodes[n]
	switch nd.Boolean {
	case SchemaTrue:
		return true
	case SchemaFalse:
		return false
	}
	if nd.Types != 0 && !nd.Types.allows(v) {
		return false
	}
	if nd.Const.Kind != KNone && !nd.Const.equals(v) {
		return false
	}
	if len(nd.Enum) > 0 && !inEnum(nd.Enum, v) {
		return false
	}
	if nd.Format != "" && formatError(nd.Format, v) != nil {
		return false
	}
	if nd.Ref != 0 && !t.Valid(nd.Ref, v) {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		if nd.MinProperties > 0 && len(x) < int(nd.MinProperties) {
			return false
		}
		if nd.PropertyNames != 0 {
			for k := range x {
				if !t.Valid(nd.PropertyNames, k) {
					return false
				}
			}
		}
		for _, r := range nd.Required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		if len(nd.Props) > 0 || nd.Addl > 0 || nd.Addl == AddlFalse {
			for k, val := range x {
				sub := nd.Prop(k)
				if sub == 0 {
					switch {
					case nd.Addl == AddlFalse:
						return false
					case nd.Addl > 0:
						sub = nd.Addl
					default:
						continue
					}
				}
				if !t.Valid(sub, val) {
					return false
				}
			}
		}
	case []any:
		if nd.MinItems > 0 && len(x) < int(nd.MinItems) || nd.MaxItems > 0 && len(x) > int(nd.MaxItems-1) {
			return false
		}
		if nd.Items != 0 {
			for _, el := range x {
				if !t.Valid(nd.Items, el) {
					return false
				}
			}
		}
	case string:
		if nd.MinLength > 0 && utf8.RuneCountInString(x) < int(nd.MinLength) {
			return false
		}
		if nd.Pattern != "" && !pattern(nd.Pattern).MatchString(x) {
			return false
		}
	case json.Number:
		if nd.Minimum != "" && compareNumbers(string(x), nd.Minimum) < 0 {
			return false
		}
		if nd.Maximum != "" && compareNumbers(string(x), nd.Maximum) > 0 {
			return false
		}
	}
	if nd.Not != 0 && t.Valid(nd.Not, v) {
		return false
	}
	for _, s := range nd.AllOf {
		if !t.Valid(s, v) {
			return false
		}
	}
	if len(nd.AnyOf) > 0 && !slices.ContainsFunc(nd.AnyOf, func(s int32) bool { return t.Valid(s, v) }) {
		return false
	}
	if len(nd.OneOf) > 0 {
		if i, j := t.oneOfMatches(nd.OneOf, v); i < 0 || j >= 0 {
			return false
		}
	}
	return true
}

// oneOfMatches returns the first two branches v matches (-1 when fewer).
func (t *Table) oneOfMatches(branches []int32, v any) (first, second int) {
	first, second = -1, -1
	for i, s := range branches {
		if !t.Valid(s, v) {
			continue
		}
		if first < 0 {
			first = i
			continue
		}
		second = i
		break
	}
	return first, second
}

// Violation is one way an instance does not match its schema.
type Violation struct {
	Pointer string // JSON pointer into the instance
	Keyword string // the location of the failing schema (Node.Loc)
	Message string
}

// Violations returns the leaf violations of v against node n, nil when v is valid: for a union
// no branch matches, those of every branch.
func (t *Table) Violations(n int32, v any) []Violation {
	if t.Valid(n, v) {
		return nil
	}
	c := &violations{t: t}
	c.check(n, v)
	return c.out
}

// NamedViolations is Violations, but a union that v fails and names a branch of by its
// discriminators (sessionUpdate "tool_call_update", type "text") reports why that branch
// failed, not why every branch did: a tool_call_update with a bad status is not also a
// user_message_chunk without content. (Violations, like jsonschema/v6, reports every branch.)
func (t *Table) NamedViolations(n int32, v any) []Violation {
	if t.Valid(n, v) {
		return nil
	}
	c := &violations{t: t, named: true}
	c.check(n, v)
	return c.out
}

// violations collects the leaf violations of one validation, in the order jsonschema/v6
// reports them.
type violations struct {
	t    *Table
	out  []Violation
	path []string // the instance location being judged
	// named: a failed union reports only the branches v names (NamedViolations).
	named bool
}

// leaf reports a violation of node n at the current instance location.
func (c *violations) leaf(n int32, msg string) {
	c.out = append(c.out, Violation{Pointer: Pointer(c.path), Keyword: c.t.Nodes[n].Loc, Message: msg})
}

// at judges v, the member tok of the current value, against node n.
func (c *violations) at(tok string, n int32, v any) {
	c.path = append(c.path, tok)
	c.check(n, v)
	c.path = c.path[:len(c.path)-1]
}

// check reports the violations of v against node n. It is called only where valid says v
// does not match (or in a branch whose violations are all kept), so that a valid value
// costs one valid walk.
func (c *violations) check(n int32, v any) {
	t := c.t
	nd := &t.Nodes[n]
	switch nd.Boolean {
	case SchemaTrue:
		return
	case SchemaFalse:
		c.leaf(n, printer.Sprintf("false schema"))
		return
	}
	// A type, const or enum mismatch is the only violation reported for this schema.
	if nd.Types != 0 && !nd.Types.allows(v) {
		c.leaf(n, printer.Sprintf("got %s, want %s", typeOf(v), strings.Join(nd.Types.names(), " or ")))
		return
	}
	if nd.Const.Kind != KNone && !nd.Const.equals(v) {
		c.leaf(n, printer.Sprintf("value must be %s", nd.Const.display()))
		return
	}
	if len(nd.Enum) > 0 && !inEnum(nd.Enum, v) {
		if len(nd.Enum) == 1 {
			c.leaf(n, printer.Sprintf("value must be %s", nd.Enum[0].display()))
		} else {
			want := make([]string, len(nd.Enum))
			for i, e := range nd.Enum {
				want[i] = e.display()
			}
			c.leaf(n, printer.Sprintf("value must be one of %s", strings.Join(want, ", ")))
		}
		return
	}
	if nd.Format != "" {
		if err := formatError(nd.Format, v); err != nil {
			c.leaf(n, printer.Sprintf("%s is not valid %s: %v", quote(v.(string)), nd.Format, err))
			return
		}
	}
	if nd.Ref != 0 && !t.Valid(nd.Ref, v) {
		c.check(nd.Ref, v)
	}
	switch x := v.(type) {
	case map[string]any:
		if nd.MinProperties > 0 && len(x) < int(nd.MinProperties) {
			c.leaf(n, printer.Sprintf("minProperties: got %d, want %d", len(x), nd.MinProperties))
		}
		var missing []string
		for _, r := range nd.Required {
			if _, ok := x[r]; !ok {
				missing = append(missing, r)
			}
		}
		switch len(missing) {
		case 0:
		case 1:
			c.leaf(n, printer.Sprintf("missing property %s", quote(missing[0])))
		default:
			c.leaf(n, printer.Sprintf("missing properties %s", joinQuoted(missing)))
		}
		var additional []string
		for _, k := range sortedKeys(x) {
			sub := nd.Prop(k)
			if sub == 0 {
				switch {
				case nd.Addl == AddlFalse:
					additional = append(additional, k)
					continue
				case nd.Addl > 0:
					sub = nd.Addl
				default:
					continue
				}
			}
			if !t.Valid(sub, x[k]) {
				c.at(k, sub, x[k])
			}
		}
		if len(additional) > 0 {
			c.leaf(n, printer.Sprintf("additional properties %s not allowed", joinQuoted(additional)))
		}
		if nd.PropertyNames != 0 {
			// A name is judged as a value of its own: its violations point at the root.
			path := c.path
			for _, k := range sortedKeys(x) {
				if !t.Valid(nd.PropertyNames, k) {
					c.path = nil
					c.check(nd.PropertyNames, k)
				}
			}
			c.path = path
		}
	case []any:
		if nd.MinItems > 0 && len(x) < int(nd.MinItems) {
			c.leaf(n, printer.Sprintf("minItems: got %d, want %d", len(x), nd.MinItems))
		}
		if nd.MaxItems > 0 && len(x) > int(nd.MaxItems-1) {
			c.leaf(n, printer.Sprintf("maxItems: got %d, want %d", len(x), nd.MaxItems-1))
		}
		if nd.Items != 0 {
			for i, el := range x {
				if !t.Valid(nd.Items, el) {
					c.at(strconv.Itoa(i), nd.Items, el)
				}
			}
		}
	case string:
		if nd.MinLength > 0 {
			if got := utf8.RuneCountInString(x); got < int(nd.MinLength) {
				c.leaf(n, printer.Sprintf("minLength: got %d, want %d", got, nd.MinLength))
			}
		}
		if nd.Pattern != "" && !pattern(nd.Pattern).MatchString(x) {
			c.leaf(n, printer.Sprintf("%s does not match pattern %s", quote(x), quote(nd.Pattern)))
		}
	case json.Number:
		if nd.Minimum != "" && compareNumbers(string(x), nd.Minimum) < 0 {
			c.leaf(n, printer.Sprintf("minimum: got %v, want %v", float(string(x)), float(nd.Minimum)))
		}
		if nd.Maximum != "" && compareNumbers(string(x), nd.Maximum) > 0 {
			c.leaf(n, printer.Sprintf("maximum: got %v, want %v", float(string(x)), float(nd.Maximum)))
		}
	}
	if nd.Not != 0 && t.Valid(nd.Not, v) {
		c.leaf(n, printer.Sprintf("'not' failed"))
	}
	for _, s := range nd.AllOf {
		if !t.Valid(s, v) {
			c.check(s, v)
		}
	}
	// A union that v fails reports why every branch failed (NamedViolations: why the
	// branches v names did).
	if len(nd.AnyOf) > 0 && !slices.ContainsFunc(nd.AnyOf, func(s int32) bool { return t.Valid(s, v) }) {
		for _, s := range c.branches(nd.AnyOf, v) {
			c.check(s, v)
		}
	}
	if len(nd.OneOf) > 0 {
		switch i, j := t.oneOfMatches(nd.OneOf, v); {
		case i < 0:
			for _, s := range c.branches(nd.OneOf, v) {
				c.check(s, v)
			}
		case j >= 0:
			c.leaf(n, printer.Sprintf("'oneOf' failed, subschemas %d, %d matched", i, j))
		}
	}
}

// branches are the branches of a failed union to report: all, or with named those v names.
func (c *violations) branches(all []int32, v any) []int32 {
	if !c.named {
		return all
	}
	return c.t.named(all, v)
}

// named narrows the branches of a union v failed to those v names by their discriminators:
// a branch whose string-const properties (through its $ref and allOf) all equal v's. When
// no branch has one, or v names none, it is every branch.
func (t *Table) named(branches []int32, v any) []int32 {
	obj, ok := v.(map[string]any)
	if !ok {
		return branches
	}
	var out []int32
	for _, b := range branches {
		if has, match := t.discriminated(b, obj, 0); has && match {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return branches
	}
	return out
}

// discriminated says whether schema n has string-const properties (has) and whether obj's
// values equal them all (match), following $ref and allOf a few levels.
func (t *Table) discriminated(n int32, obj map[string]any, depth int) (has, match bool) {
	if n <= 0 || depth > 4 {
		return false, true
	}
	nd := &t.Nodes[n]
	match = true
	for _, p := range nd.Props {
		if c := t.Nodes[p.Node].Const; c.Kind == KString {
			has = true
			if s, ok := obj[p.Name].(string); !ok || s != c.Text {
				match = false
			}
		}
	}
	for _, s := range append([]int32{nd.Ref}, nd.AllOf...) {
		if h, m := t.discriminated(s, obj, depth+1); h {
			has, match = true, match && m
		}
	}
	return has, match
}

// allows reports whether v has one of the types (a number without a fraction is an integer).
func (ts Types) allows(v any) bool {
	var t Types
	switch x := v.(type) {
	case nil:
		t = TNull
	case bool:
		t = TBoolean
	case json.Number:
		if ts&TNumber != 0 || ts&TInteger != 0 && isInteger(string(x)) {
			return true
		}
		return false
	case string:
		t = TString
	case []any:
		t = TArray
	case map[string]any:
		t = TObject
	}
	return ts&t != 0
}

func (ts Types) names() []string {
	var out []string
	for i, name := range typeNames {
		if ts&(1<<i) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// typeOf names the JSON type of a decoded value (a number is "number", integer or not).
func typeOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "invalid"
}

// equals reports whether v is the scalar c (numbers compared by value: 1 equals 1.0).
func (c Value) equals(v any) bool {
	switch x := v.(type) {
	case string:
		return c.Kind == KString && c.Text == x
	case json.Number:
		return c.Kind == KNumber && compareNumbers(string(x), c.Text) == 0
	case bool:
		return c.Kind == KBool && c.Text == strconv.FormatBool(x)
	case nil:
		return c.Kind == KNull
	}
	return false
}

func inEnum(enum []Value, v any) bool {
	for _, e := range enum {
		if e.equals(v) {
			return true
		}
	}
	return false
}

// display shows a scalar in a message, as jsonschema/v6 does.
func (c Value) display() string {
	switch c.Kind {
	case KString:
		return quote(c.Text)
	case KNull:
		return "<nil>"
	}
	return c.Text
}

// quote single-quotes s as jsonschema/v6 does.
func quote(s string) string {
	s = strconv.Quote(s)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `'`, `\'`)
	return "'" + s[1:len(s)-1] + "'"
}

func joinQuoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = quote(n)
	}
	return strings.Join(q, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// float is a JSON number as the nearest float64 (for messages).
func float(num string) float64 {
	f, _ := strconv.ParseFloat(num, 64)
	return f
}

var patterns sync.Map // pattern -> *regexp.Regexp

// pattern is the compiled regular expression (internal/gen checked that it compiles).
func pattern(p string) *regexp.Regexp {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp)
	}
	re := regexp.MustCompile(p)
	patterns.Store(p, re)
	return re
}

// Pointer is the JSON pointer of a path of tokens.
func Pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(Escape(t))
	}
	return b.String()
}

// Escape writes a JSON pointer token.
func Escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
