package emulator

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// Bounds of Minimal: how deep it follows a schema, how many values it builds, how long a
// string or array it makes, and how many bytes it produces in all.
const (
	maxSchemaDepth = 32
	maxSchemaNodes = 10000
	maxMinString   = 4096
	maxMinItems    = 256
	maxMinBytes    = 1 << 20
)

// ErrSchemaTooLarge is returned by Minimal when the value a schema requires exceeds the
// generator's bounds (depth 32, 10000 values, 1 MiB).
var ErrSchemaTooLarge = errors.New("emulator: the schema requires a value beyond the generator's bounds")

// Minimal returns a small JSON value that satisfies a JSON Schema (draft 4 to 2020-12, and
// the OpenAPI subset Gemini uses, with upper-case type names): an object with its required
// properties only, arrays of minItems elements, enums and consts by their first value,
// strings of minLength (well-formed for the common formats), numbers at 1 or the nearest
// bound, the first non-null alternative of anyOf and oneOf, allOf merged, and local $refs
// ("#", "#/$defs/…", "#/definitions/…") followed. A schema without a type gives an object.
// Patterns, not, if/then/else and dependencies are not honoured. An empty schema gives {}.
//
// It never loops: depth, the number of values and the output size are bounded, and a
// schema that needs more gives ErrSchemaTooLarge.
func Minimal(schema json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(schema)) == 0 {
		return json.RawMessage("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	var root any
	if err := dec.Decode(&root); err != nil {
		return nil, errors.New("emulator: schema is not JSON: " + err.Error())
	}
	g := &generator{root: root, nodes: maxSchemaNodes, bytes: maxMinBytes}
	v, err := g.value(root, 0)
	if err != nil {
		return nil, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return out, nil
}

type generator struct {
	root  any
	nodes int // values left to build
	bytes int // output bytes left (approximate)
}

func (g *generator) spend(n int) error {
	g.nodes--
	g.bytes -= n
	if g.nodes < 0 || g.bytes < 0 {
		return ErrSchemaTooLarge
	}
	return nil
}

// value builds a value for schema s.
func (g *generator) value(s any, depth int) (any, error) {
	if depth > maxSchemaDepth {
		return nil, ErrSchemaTooLarge
	}
	if err := g.spend(4); err != nil {
		return nil, err
	}
	m, ok := s.(map[string]any)
	if !ok {
		return nil, nil // true, false or not a schema: null is as good as anything
	}
	if ref, ok := m["$ref"].(string); ok {
		if target, ok := g.resolve(ref); ok {
			rest := without(m, "$ref")
			if t, ok := target.(map[string]any); ok {
				merge(rest, t)
			}
			return g.value(rest, depth+1)
		}
	}
	if subs, ok := m["allOf"].([]any); ok {
		rest := without(m, "allOf")
		for _, sub := range subs {
			if sm, ok := g.deref(sub).(map[string]any); ok {
				merge(rest, sm)
			}
		}
		return g.value(rest, depth+1)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[key].([]any); ok && len(alts) > 0 {
			rest := without(m, key)
			if alt, ok := g.deref(firstNonNull(alts)).(map[string]any); ok {
				merge(rest, alt)
			}
			return g.value(rest, depth+1)
		}
	}
	if c, ok := m["const"]; ok {
		return c, nil
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0], nil
	}
	switch typeOf(m) {
	case "null":
		return nil, nil
	case "boolean":
		return false, nil
	case "integer":
		return json.Number(strconv.FormatFloat(number(m, true), 'f', -1, 64)), nil
	case "number":
		return json.Number(strconv.FormatFloat(number(m, false), 'f', -1, 64)), nil
	case "string":
		if count(m["minLength"]) > maxMinString {
			return nil, ErrSchemaTooLarge
		}
		s := str(m)
		return s, g.spend(len(s))
	case "array":
		return g.array(m, depth)
	}
	return g.object(m, depth)
}

// object builds an object with the required properties, and more when minProperties asks.
func (g *generator) object(m map[string]any, depth int) (any, error) {
	props, _ := m["properties"].(map[string]any)
	obj := map[string]any{}
	add := func(name string) error {
		if _, done := obj[name]; done {
			return nil
		}
		sub, ok := props[name]
		if !ok {
			sub = m["additionalProperties"]
		}
		v, err := g.value(sub, depth+1)
		if err != nil {
			return err
		}
		obj[name] = v
		return g.spend(len(name))
	}
	req, _ := m["required"].([]any)
	for _, r := range req {
		if name, ok := r.(string); ok {
			if err := add(name); err != nil {
				return nil, err
			}
		}
	}
	want := count(m["minProperties"])
	if want > maxMinItems {
		return nil, ErrSchemaTooLarge
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := 0; len(obj) < want && i < len(names); i++ {
		if err := add(names[i]); err != nil {
			return nil, err
		}
	}
	for i := 1; len(obj) < want; i++ {
		if err := add("p" + strconv.Itoa(i)); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// array builds minItems elements from prefixItems / items (tuple or single schema).
func (g *generator) array(m map[string]any, depth int) (any, error) {
	n := count(m["minItems"])
	if n > maxMinItems {
		return nil, ErrSchemaTooLarge
	}
	prefix, _ := m["prefixItems"].([]any)
	items := m["items"]
	if tuple, ok := items.([]any); ok {
		prefix, items = tuple, m["additionalItems"]
	}
	arr := make([]any, 0, n)
	for i := 0; i < n; i++ {
		sub := items
		if i < len(prefix) {
			sub = prefix[i]
		}
		v, err := g.value(sub, depth+1)
		if err != nil {
			return nil, err
		}
		if b, _ := m["uniqueItems"].(bool); b {
			v = distinct(v, i)
		}
		arr = append(arr, v)
	}
	return arr, nil
}

// distinct makes the i-th generated element differ from the others where it can (strings
// and numbers), for uniqueItems.
func distinct(v any, i int) any {
	if i == 0 {
		return v
	}
	switch x := v.(type) {
	case string:
		return x + strconv.Itoa(i)
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return json.Number(strconv.FormatFloat(f+float64(i), 'f', -1, 64))
		}
	}
	return v
}

// resolve follows a local reference: "#" or a JSON pointer "#/…".
func (g *generator) resolve(ref string) (any, bool) {
	if ref == "#" {
		return g.root, true
	}
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, false
	}
	cur := g.root
	for _, tok := range strings.Split(ptr, "/") {
		if u, err := url.PathUnescape(tok); err == nil {
			tok = u
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			if cur, ok = c[tok]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// deref follows a schema's own $ref once (for merging), or returns it as is.
func (g *generator) deref(s any) any {
	if m, ok := s.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok {
			if t, ok := g.resolve(ref); ok {
				return t
			}
		}
	}
	return s
}

// without copies m without key.
func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// merge adds src's keywords to dst: properties and required are united, any other
// keyword dst already has is kept.
func merge(dst, src map[string]any) {
	for k, v := range src {
		switch k {
		case "properties":
			dp, _ := dst[k].(map[string]any)
			sp, _ := v.(map[string]any)
			out := make(map[string]any, len(dp)+len(sp))
			for pk, pv := range sp {
				out[pk] = pv
			}
			for pk, pv := range dp {
				out[pk] = pv
			}
			dst[k] = out
		case "required":
			dr, _ := dst[k].([]any)
			sr, _ := v.([]any)
			dst[k] = append(append([]any{}, dr...), sr...)
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

// firstNonNull picks the first alternative that is not only {"type": "null"}.
func firstNonNull(alts []any) any {
	for _, a := range alts {
		if m, ok := a.(map[string]any); !ok || typeOf(m) != "null" {
			return a
		}
	}
	return alts[0]
}

// typeOf returns a schema's type, lower-cased: the first non-null one of a list, or the
// one its keywords imply, or "object".
func typeOf(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return strings.ToLower(t)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && !strings.EqualFold(s, "null") {
				return strings.ToLower(s)
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	has := func(keys ...string) bool {
		for _, k := range keys {
			if _, ok := m[k]; ok {
				return true
			}
		}
		return false
	}
	switch {
	case has("items", "prefixItems", "minItems", "maxItems", "uniqueItems"):
		return "array"
	case has("minLength", "maxLength", "pattern", "format"):
		return "string"
	case has("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return "object"
}

// count reads a non-negative integer keyword (minItems, minProperties …); 0 otherwise.
func count(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	f, err := n.Float64()
	if err != nil || f <= 0 || math.IsNaN(f) {
		return 0
	}
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(math.Ceil(f))
}

// num reads a numeric keyword.
func num(m map[string]any, key string) (float64, bool) {
	n, ok := m[key].(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// number picks 1 (not 0: a schema's bounds often live only in its description, as in
// gemini-cli's router "score from 1-100"), or the nearest value inside the bounds, a
// multiple of multipleOf when there is one.
func number(m map[string]any, integer bool) float64 {
	v := 1.0
	if lo, ok := num(m, "minimum"); ok && v < lo {
		v = lo
	}
	if hi, ok := num(m, "maximum"); ok && v > hi {
		v = hi
	}
	exclusive := func(key string) (float64, bool) {
		if b, ok := m[key].(bool); ok { // draft 4: a flag on minimum / maximum
			base := "minimum"
			if key == "exclusiveMaximum" {
				base = "maximum"
			}
			f, ok := num(m, base)
			return f, ok && b
		}
		return num(m, key)
	}
	step := 1.0
	if mo, ok := num(m, "multipleOf"); ok && mo > 0 {
		step = mo
	}
	if lo, ok := exclusive("exclusiveMinimum"); ok && v <= lo {
		v = lo + step
	}
	if hi, ok := exclusive("exclusiveMaximum"); ok && v >= hi {
		v = hi - step
	}
	if integer {
		v = math.Ceil(v)
	}
	if mo, ok := num(m, "multipleOf"); ok && mo > 0 && math.Mod(v, mo) != 0 {
		v = math.Ceil(v/mo) * mo
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return 0
	}
	return v
}

// formats gives a well-formed example for the common string formats.
var formats = map[string]string{
	"date-time":     "1970-01-01T00:00:00Z",
	"date":          "1970-01-01",
	"time":          "00:00:00Z",
	"duration":      "P1D",
	"email":         "a@example.com",
	"hostname":      "example.com",
	"ipv4":          "127.0.0.1",
	"ipv6":          "::1",
	"uri":           "https://example.com/",
	"uri-reference": "https://example.com/",
	"iri":           "https://example.com/",
	"url":           "https://example.com/",
	"uuid":          "00000000-0000-0000-0000-000000000000",
	"regex":         ".*",
	"json-pointer":  "",
}

// str builds a string: the format's example, padded to minLength.
func str(m map[string]any) string {
	f, _ := m["format"].(string)
	s := formats[f]
	want := count(m["minLength"])
	if n := len([]rune(s)); n < want {
		s += strings.Repeat("a", want-n)
	}
	return s
}
