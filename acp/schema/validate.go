package schema

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

// The validator implements the part of JSON Schema 2020-12 the pinned sets use (internal/gen
// refuses any other keyword) with the semantics and the messages of
// github.com/santhosh-tekuri/jsonschema/v6, which the tests keep as its oracle: the same
// verdict and the same leaf violations (instance pointer, schema location, message) for every
// instance (TestAgreesWithJSONSchema, FuzzAgreesWithJSONSchema). It differs in one way: an
// object's members are judged in key order, where jsonschema/v6 follows Go's map order, so the
// order of the violations is stable.

// printer formats the messages as jsonschema/v6 does (numbers with English digit grouping).
var printer = message.NewPrinter(language.English)

// decode parses an instance as jsonschema/v6 does: numbers kept exact (json.Number), one
// value and nothing after it.
func decode(instance []byte) (any, error) {
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

// valid reports whether v matches node n. It stops at the first failure and allocates
// nothing.
func (t *table) valid(n int32, v any) bool {
	nd := &t.nodes[n]
	switch nd.boolean {
	case schemaTrue:
		return true
	case schemaFalse:
		return false
	}
	if nd.types != 0 && !nd.types.allows(v) {
		return false
	}
	if nd.cnst.kind != kNone && !nd.cnst.equals(v) {
		return false
	}
	if len(nd.enum) > 0 && !inEnum(nd.enum, v) {
		return false
	}
	if nd.ref != 0 && !t.valid(nd.ref, v) {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range nd.required {
			if _, ok := x[r]; !ok {
				return false
			}
		}
		if len(nd.props) > 0 || nd.addl > 0 || nd.addl == addlFalse {
			for k, val := range x {
				sub := nd.prop(k)
				if sub == 0 {
					switch {
					case nd.addl == addlFalse:
						return false
					case nd.addl > 0:
						sub = nd.addl
					default:
						continue
					}
				}
				if !t.valid(sub, val) {
					return false
				}
			}
		}
	case []any:
		if nd.minItems > 0 && len(x) < int(nd.minItems) {
			return false
		}
		if nd.items != 0 {
			for _, el := range x {
				if !t.valid(nd.items, el) {
					return false
				}
			}
		}
	case string:
		if nd.minLength > 0 && utf8.RuneCountInString(x) < int(nd.minLength) {
			return false
		}
		if nd.pattern != "" && !pattern(nd.pattern).MatchString(x) {
			return false
		}
	case json.Number:
		if nd.minimum != "" && compareNumbers(string(x), nd.minimum) < 0 {
			return false
		}
		if nd.maximum != "" && compareNumbers(string(x), nd.maximum) > 0 {
			return false
		}
	}
	if nd.not != 0 && t.valid(nd.not, v) {
		return false
	}
	for _, s := range nd.allOf {
		if !t.valid(s, v) {
			return false
		}
	}
	if len(nd.anyOf) > 0 && !slices.ContainsFunc(nd.anyOf, func(s int32) bool { return t.valid(s, v) }) {
		return false
	}
	if len(nd.oneOf) > 0 {
		if i, j := t.oneOfMatches(nd.oneOf, v); i < 0 || j >= 0 {
			return false
		}
	}
	return true
}

// oneOfMatches returns the first two branches v matches (-1 when fewer).
func (t *table) oneOfMatches(branches []int32, v any) (first, second int) {
	first, second = -1, -1
	for i, s := range branches {
		if !t.valid(s, v) {
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

// violations collects the leaf violations of one validation, in the order jsonschema/v6
// reports them.
type violations struct {
	t    *table
	out  []Violation
	path []string // the instance location being judged
}

// leaf reports a violation of node n at the current instance location.
func (c *violations) leaf(n int32, msg string) {
	c.out = append(c.out, Violation{Pointer: pointer(c.path), Keyword: c.t.nodes[n].loc, Message: msg})
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
	nd := &t.nodes[n]
	switch nd.boolean {
	case schemaTrue:
		return
	case schemaFalse:
		c.leaf(n, printer.Sprintf("false schema"))
		return
	}
	// A type, const or enum mismatch is the only violation reported for this schema.
	if nd.types != 0 && !nd.types.allows(v) {
		c.leaf(n, printer.Sprintf("got %s, want %s", typeOf(v), strings.Join(nd.types.names(), " or ")))
		return
	}
	if nd.cnst.kind != kNone && !nd.cnst.equals(v) {
		c.leaf(n, printer.Sprintf("value must be %s", nd.cnst.display()))
		return
	}
	if len(nd.enum) > 0 && !inEnum(nd.enum, v) {
		if len(nd.enum) == 1 {
			c.leaf(n, printer.Sprintf("value must be %s", nd.enum[0].display()))
		} else {
			want := make([]string, len(nd.enum))
			for i, e := range nd.enum {
				want[i] = e.display()
			}
			c.leaf(n, printer.Sprintf("value must be one of %s", strings.Join(want, ", ")))
		}
		return
	}
	if nd.ref != 0 && !t.valid(nd.ref, v) {
		c.check(nd.ref, v)
	}
	switch x := v.(type) {
	case map[string]any:
		var missing []string
		for _, r := range nd.required {
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
			sub := nd.prop(k)
			if sub == 0 {
				switch {
				case nd.addl == addlFalse:
					additional = append(additional, k)
					continue
				case nd.addl > 0:
					sub = nd.addl
				default:
					continue
				}
			}
			if !t.valid(sub, x[k]) {
				c.at(k, sub, x[k])
			}
		}
		if len(additional) > 0 {
			c.leaf(n, printer.Sprintf("additional properties %s not allowed", joinQuoted(additional)))
		}
	case []any:
		if nd.minItems > 0 && len(x) < int(nd.minItems) {
			c.leaf(n, printer.Sprintf("minItems: got %d, want %d", len(x), nd.minItems))
		}
		if nd.items != 0 {
			for i, el := range x {
				if !t.valid(nd.items, el) {
					c.at(strconv.Itoa(i), nd.items, el)
				}
			}
		}
	case string:
		if nd.minLength > 0 {
			if got := utf8.RuneCountInString(x); got < int(nd.minLength) {
				c.leaf(n, printer.Sprintf("minLength: got %d, want %d", got, nd.minLength))
			}
		}
		if nd.pattern != "" && !pattern(nd.pattern).MatchString(x) {
			c.leaf(n, printer.Sprintf("%s does not match pattern %s", quote(x), quote(nd.pattern)))
		}
	case json.Number:
		if nd.minimum != "" && compareNumbers(string(x), nd.minimum) < 0 {
			c.leaf(n, printer.Sprintf("minimum: got %v, want %v", float(string(x)), float(nd.minimum)))
		}
		if nd.maximum != "" && compareNumbers(string(x), nd.maximum) > 0 {
			c.leaf(n, printer.Sprintf("maximum: got %v, want %v", float(string(x)), float(nd.maximum)))
		}
	}
	if nd.not != 0 && t.valid(nd.not, v) {
		c.leaf(n, printer.Sprintf("'not' failed"))
	}
	for _, s := range nd.allOf {
		if !t.valid(s, v) {
			c.check(s, v)
		}
	}
	// A union that v fails reports why every branch failed.
	if len(nd.anyOf) > 0 && !slices.ContainsFunc(nd.anyOf, func(s int32) bool { return t.valid(s, v) }) {
		for _, s := range nd.anyOf {
			c.check(s, v)
		}
	}
	if len(nd.oneOf) > 0 {
		switch i, j := t.oneOfMatches(nd.oneOf, v); {
		case i < 0:
			for _, s := range nd.oneOf {
				c.check(s, v)
			}
		case j >= 0:
			c.leaf(n, printer.Sprintf("'oneOf' failed, subschemas %d, %d matched", i, j))
		}
	}
}

// allows reports whether v has one of the types (a number without a fraction is an integer).
func (ts types) allows(v any) bool {
	var t types
	switch x := v.(type) {
	case nil:
		t = tNull
	case bool:
		t = tBoolean
	case json.Number:
		if ts&tNumber != 0 || ts&tInteger != 0 && isInteger(string(x)) {
			return true
		}
		return false
	case string:
		t = tString
	case []any:
		t = tArray
	case map[string]any:
		t = tObject
	}
	return ts&t != 0
}

func (ts types) names() []string {
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
func (c value) equals(v any) bool {
	switch x := v.(type) {
	case string:
		return c.kind == kString && c.text == x
	case json.Number:
		return c.kind == kNumber && compareNumbers(string(x), c.text) == 0
	case bool:
		return c.kind == kBool && c.text == strconv.FormatBool(x)
	case nil:
		return c.kind == kNull
	}
	return false
}

func inEnum(enum []value, v any) bool {
	for _, e := range enum {
		if e.equals(v) {
			return true
		}
	}
	return false
}

// display shows a scalar in a message, as jsonschema/v6 does.
func (c value) display() string {
	switch c.kind {
	case kString:
		return quote(c.text)
	case kNull:
		return "<nil>"
	}
	return c.text
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
