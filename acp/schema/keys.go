package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// UnknownKey is a key of a spec-typed object that its schema does not define and that is not
// `_meta` — the protocol reserves every such name, so no implementation may add one.
type UnknownKey struct {
	Pointer string // JSON pointer to the object holding the key
	Key     string
}

// UnknownKeys walks instance along the named $defs type and reports keys outside the
// properties of the object schemas that apply. Unions (anyOf/oneOf) are resolved by the
// branches the value matches (or, for an invalid value, by the branches whose constant
// discriminators it carries); objects the schema leaves open (maps, free-form values) and
// `_meta` contents are not judged.
func (s *Set) UnknownKeys(def string, instance json.RawMessage) ([]UnknownKey, error) {
	if !s.Has(def) {
		return nil, fmt.Errorf("schema %s has no type %s", s.Name, def)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return nil, fmt.Errorf("instance is not JSON: %w", err)
	}
	w := &walker{s: s, seen: map[string]bool{}}
	loc := "#/$defs/" + def
	w.walk(loc, inst, "")
	sort.Slice(w.out, func(i, j int) bool {
		if w.out[i].Pointer != w.out[j].Pointer {
			return w.out[i].Pointer < w.out[j].Pointer
		}
		return w.out[i].Key < w.out[j].Key
	})
	return w.out, nil
}

type walker struct {
	s    *Set
	out  []UnknownKey
	seen map[string]bool
}

// shape is what the applicable schemas say about one object.
type shape struct {
	props      map[string][]string // key → locations of its schemas
	siblings   map[string]bool     // keys defined by union branches that do not apply
	additional []string            // locations of additionalProperties schemas
	items      []string            // for arrays: locations of item schemas
	described  bool                // some applicable schema lists properties
	open       bool                // extra keys are allowed or cannot be judged
}

func (w *walker) walk(loc string, inst any, ptr string) {
	sh := &shape{props: map[string][]string{}, siblings: map[string]bool{}}
	w.collect(loc, inst, sh, 0)
	switch v := inst.(type) {
	case map[string]any:
		if sh.described && !sh.open {
			for k := range v {
				if k == "_meta" || len(sh.props[k]) > 0 || sh.siblings[k] {
					continue // a name the protocol defines (here or in another variant)
				}
				id := ptr + "\x00" + k
				if !w.seen[id] {
					w.seen[id] = true
					w.out = append(w.out, UnknownKey{Pointer: ptr, Key: k})
				}
			}
		}
		for k, val := range v {
			if k == "_meta" {
				continue
			}
			locs := sh.props[k]
			if len(locs) == 0 {
				locs = sh.additional
			}
			for _, l := range dedup(locs) {
				w.walk(l, val, ptr+"/"+escape(k))
			}
		}
	case []any:
		for i, el := range v {
			for _, l := range dedup(sh.items) {
				w.walk(l, el, ptr+"/"+strconv.Itoa(i))
			}
		}
	}
}

// collect gathers, into sh, what the schema at loc (and what it references or combines) says
// about inst.
func (w *walker) collect(loc string, inst any, sh *shape, depth int) {
	if depth > 64 {
		sh.open = true
		return
	}
	node, ok := w.s.node(loc).(map[string]any)
	if !ok {
		return
	}
	if ref, ok := node["$ref"].(string); ok {
		w.collect(ref, inst, sh, depth+1)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		sh.described = true
		for k := range props {
			sh.props[k] = append(sh.props[k], loc+"/properties/"+escape(k))
		}
	}
	if ap, ok := node["additionalProperties"]; ok {
		if b, isBool := ap.(bool); !isBool || b {
			sh.open = true
			if !isBool {
				sh.additional = append(sh.additional, loc+"/additionalProperties")
			}
		}
	}
	if _, ok := node["items"].(map[string]any); ok {
		sh.items = append(sh.items, loc+"/items")
	}
	if subs, ok := node["allOf"].([]any); ok {
		for i := range subs {
			w.collect(loc+"/allOf/"+strconv.Itoa(i), inst, sh, depth+1)
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		subs, ok := node[kw].([]any)
		if !ok {
			continue
		}
		var chosen []string
		for i := range subs {
			bl := loc + "/" + kw + "/" + strconv.Itoa(i)
			if w.s.valid(bl, inst) {
				chosen = append(chosen, bl)
			}
		}
		if len(chosen) == 0 {
			for i, sub := range subs {
				if discriminatorsMatch(sub, inst) {
					chosen = append(chosen, loc+"/"+kw+"/"+strconv.Itoa(i))
				}
			}
		}
		if len(chosen) == 0 {
			if _, isObj := inst.(map[string]any); isObj {
				sh.open = true // cannot tell which branch applies
			}
			continue
		}
		for _, bl := range chosen {
			w.collect(bl, inst, sh, depth+1)
		}
		// Keys of the other branches are protocol names with a value that does not fit
		// here (an unknown discriminator value, say): not custom keys.
		for i := range subs {
			other := &shape{props: map[string][]string{}, siblings: map[string]bool{}}
			w.collectNames(loc+"/"+kw+"/"+strconv.Itoa(i), other, depth+1)
			for k := range other.props {
				sh.siblings[k] = true
			}
		}
	}
}

// collectNames gathers the property names a schema defines, through $ref and allOf only.
func (w *walker) collectNames(loc string, sh *shape, depth int) {
	if depth > 64 {
		return
	}
	node, ok := w.s.node(loc).(map[string]any)
	if !ok {
		return
	}
	if ref, ok := node["$ref"].(string); ok {
		w.collectNames(ref, sh, depth+1)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for k := range props {
			sh.props[k] = append(sh.props[k], loc)
		}
	}
	if subs, ok := node["allOf"].([]any); ok {
		for i := range subs {
			w.collectNames(loc+"/allOf/"+strconv.Itoa(i), sh, depth+1)
		}
	}
}

// discriminatorsMatch reports whether a union branch has constant-valued properties and inst
// carries every one of them.
func discriminatorsMatch(branch any, inst any) bool {
	b, ok := branch.(map[string]any)
	obj, isObj := inst.(map[string]any)
	if !ok || !isObj {
		return false
	}
	props, _ := b["properties"].(map[string]any)
	found := false
	for k, p := range props {
		pm, _ := p.(map[string]any)
		c, has := pm["const"]
		if !has {
			continue
		}
		found = true
		if fmt.Sprint(obj[k]) != fmt.Sprint(c) {
			return false
		}
	}
	return found
}

// node resolves a location like "#/$defs/X/oneOf/2" in the document.
func (s *Set) node(loc string) any {
	if v, ok := s.nodes.Load(loc); ok {
		return v
	}
	v := s.resolve(loc)
	s.nodes.Store(loc, v)
	return v
}

func (s *Set) resolve(loc string) any {
	frag := strings.TrimPrefix(loc, "#")
	cur := s.doc
	if frag == "" {
		return cur
	}
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			cur = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil
			}
			cur = v[i]
		default:
			return nil
		}
	}
	return cur
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

func dedup(locs []string) []string {
	if len(locs) < 2 {
		return locs
	}
	seen := map[string]bool{}
	out := locs[:0:0]
	for _, l := range locs {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// Tolerated reports whether a violation of the named type lies in a field that the reference
// SDKs read leniently (x-deserialize-default-on-error, x-deserialize-skip-invalid-items,
// x-deserialize-default-on-null): a bad value there is defaulted or dropped, not fatal.
func (s *Set) Tolerated(def string, v Violation) bool {
	locs := []string{"#/$defs/" + def}
	if v.Pointer == "" {
		return false
	}
	for _, tok := range strings.Split(strings.TrimPrefix(v.Pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next []string
		for _, loc := range locs {
			for _, l := range s.expand(loc, 0) {
				node, _ := s.node(l).(map[string]any)
				if props, ok := node["properties"].(map[string]any); ok {
					if _, has := props[tok]; has {
						next = append(next, l+"/properties/"+escape(tok))
					}
				}
				if _, ok := node["items"].(map[string]any); ok {
					if _, err := strconv.Atoi(tok); err == nil {
						next = append(next, l+"/items")
					}
				}
			}
		}
		for _, l := range next {
			if lenient(s.node(l)) {
				return true
			}
		}
		if len(next) == 0 {
			return false
		}
		locs = next
	}
	return false
}

// expand returns loc and every location it reaches through $ref, allOf, anyOf and oneOf.
func (s *Set) expand(loc string, depth int) []string {
	if depth > 16 {
		return nil
	}
	out := []string{loc}
	node, _ := s.node(loc).(map[string]any)
	if ref, ok := node["$ref"].(string); ok {
		out = append(out, s.expand(ref, depth+1)...)
	}
	for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
		if subs, ok := node[kw].([]any); ok {
			for i := range subs {
				out = append(out, s.expand(loc+"/"+kw+"/"+strconv.Itoa(i), depth+1)...)
			}
		}
	}
	return out
}

func lenient(node any) bool {
	m, _ := node.(map[string]any)
	for _, k := range []string{"x-deserialize-default-on-error", "x-deserialize-skip-invalid-items", "x-deserialize-default-on-null"} {
		if b, _ := m[k].(bool); b {
			return true
		}
	}
	return false
}
