package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/acpprobe/acpprobe/internal/schematable"
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
	n := s.node(def)
	if n == 0 {
		return nil, fmt.Errorf("schema %s has no type %s", s.Name, def)
	}
	inst, err := schematable.Decode(instance)
	if err != nil {
		return nil, fmt.Errorf("instance is not JSON: %w", err)
	}
	w := &walker{t: &s.s.table, seen: map[UnknownKey]bool{}}
	w.walk(n, inst, "")
	sort.Slice(w.out, func(i, j int) bool {
		if w.out[i].Pointer != w.out[j].Pointer {
			return w.out[i].Pointer < w.out[j].Pointer
		}
		return w.out[i].Key < w.out[j].Key
	})
	return w.out, nil
}

type walker struct {
	t    *schematable.Table
	out  []UnknownKey
	seen map[UnknownKey]bool
}

// shape is what the applicable schemas say about one value.
type shape struct {
	props      map[string][]int32 // key → its schemas
	siblings   map[string]bool    // keys defined by union branches that do not apply
	additional []int32            // additionalProperties schemas
	items      []int32            // for arrays: item schemas
	described  bool               // some applicable schema lists properties
	open       bool               // extra keys are allowed or cannot be judged
}

func (w *walker) walk(n int32, inst any, ptr string) {
	sh := &shape{props: map[string][]int32{}, siblings: map[string]bool{}}
	w.collect(n, inst, sh, 0)
	switch v := inst.(type) {
	case map[string]any:
		if sh.described && !sh.open {
			for k := range v {
				if k == "_meta" || len(sh.props[k]) > 0 || sh.siblings[k] {
					continue // a name the protocol defines (here or in another variant)
				}
				if id := (UnknownKey{ptr, k}); !w.seen[id] {
					w.seen[id] = true
					w.out = append(w.out, id)
				}
			}
		}
		for k, val := range v {
			if k == "_meta" {
				continue
			}
			schemas := sh.props[k]
			if len(schemas) == 0 {
				schemas = sh.additional
			}
			for _, sub := range dedup(schemas) {
				w.walk(sub, val, ptr+"/"+schematable.Escape(k))
			}
		}
	case []any:
		for i, el := range v {
			for _, sub := range dedup(sh.items) {
				w.walk(sub, el, ptr+"/"+strconv.Itoa(i))
			}
		}
	}
}

// collect gathers, into sh, what the schema n (and what it references or combines) says
// about inst.
func (w *walker) collect(n int32, inst any, sh *shape, depth int) {
	if depth > 64 {
		sh.open = true
		return
	}
	nd := &w.t.Nodes[n]
	if nd.Boolean != 0 {
		return
	}
	if nd.Ref != 0 {
		w.collect(nd.Ref, inst, sh, depth+1)
	}
	if len(nd.Props) > 0 {
		sh.described = true
		for _, p := range nd.Props {
			sh.props[p.Name] = append(sh.props[p.Name], p.Node)
		}
	}
	switch {
	case nd.Addl == schematable.AddlTrue:
		sh.open = true
	case nd.Addl > 0:
		sh.open = true
		sh.additional = append(sh.additional, nd.Addl)
	}
	if nd.Items != 0 && w.t.Nodes[nd.Items].Boolean == 0 {
		sh.items = append(sh.items, nd.Items)
	}
	for _, sub := range nd.AllOf {
		w.collect(sub, inst, sh, depth+1)
	}
	for _, subs := range [][]int32{nd.AnyOf, nd.OneOf} {
		if len(subs) == 0 {
			continue
		}
		var chosen []int32
		for _, sub := range subs {
			if w.t.Valid(sub, inst) {
				chosen = append(chosen, sub)
			}
		}
		if len(chosen) == 0 {
			for _, sub := range subs {
				if w.discriminatorsMatch(sub, inst) {
					chosen = append(chosen, sub)
				}
			}
		}
		if len(chosen) == 0 {
			if _, isObj := inst.(map[string]any); isObj {
				sh.open = true // cannot tell which branch applies
			}
			continue
		}
		for _, sub := range chosen {
			w.collect(sub, inst, sh, depth+1)
		}
		// Keys of the other branches are protocol names with a value that does not fit
		// here (an unknown discriminator value, say): not custom keys.
		for _, sub := range subs {
			w.collectNames(sub, sh.siblings, depth+1)
		}
	}
}

// collectNames gathers the property names a schema defines, through $ref and allOf only.
func (w *walker) collectNames(n int32, names map[string]bool, depth int) {
	if depth > 64 {
		return
	}
	nd := &w.t.Nodes[n]
	if nd.Ref != 0 {
		w.collectNames(nd.Ref, names, depth+1)
	}
	for _, p := range nd.Props {
		names[p.Name] = true
	}
	for _, sub := range nd.AllOf {
		w.collectNames(sub, names, depth+1)
	}
}

// discriminatorsMatch reports whether a union branch has constant-valued properties and inst
// carries every one of them.
func (w *walker) discriminatorsMatch(branch int32, inst any) bool {
	obj, isObj := inst.(map[string]any)
	if !isObj {
		return false
	}
	found := false
	for _, p := range w.t.Nodes[branch].Props {
		c := w.t.Nodes[p.Node].Const
		if c.Kind == schematable.KNone {
			continue
		}
		found = true
		if fmt.Sprint(obj[p.Name]) != sprint(c) {
			return false
		}
	}
	return found
}

// sprint is the constant as fmt.Sprint shows the decoded value it equals.
func sprint(c schematable.Value) string {
	if c.Kind == schematable.KNull {
		return "<nil>"
	}
	return c.Text
}

func dedup(nodes []int32) []int32 {
	if len(nodes) < 2 {
		return nodes
	}
	out := nodes[:0:0]
	for _, n := range nodes {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// Tolerated reports whether a violation of the named type lies in a field that the reference
// SDKs read leniently (x-deserialize-default-on-error, x-deserialize-skip-invalid-items,
// x-deserialize-default-on-null): a bad value there is defaulted or dropped, not fatal.
func (s *Set) Tolerated(def string, v Violation) bool {
	start := s.node(def)
	if v.Pointer == "" || start == 0 {
		return false
	}
	at := []int32{start}
	for _, tok := range strings.Split(strings.TrimPrefix(v.Pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		var next []int32
		for _, n := range at {
			for _, m := range expand(&s.s.table, n, 0) {
				nd := &s.s.table.Nodes[m]
				if p := nd.Prop(tok); p != 0 {
					next = append(next, p)
				}
				if nd.Items != 0 && s.s.table.Nodes[nd.Items].Boolean == 0 {
					if _, err := strconv.Atoi(tok); err == nil {
						next = append(next, nd.Items)
					}
				}
			}
		}
		for _, n := range next {
			if s.s.table.Nodes[n].Lenient {
				return true
			}
		}
		if len(next) == 0 {
			return false
		}
		at = next
	}
	return false
}

// expand returns n and every schema it reaches through $ref, allOf, anyOf and oneOf.
func expand(t *schematable.Table, n int32, depth int) []int32 {
	if depth > 16 {
		return nil
	}
	out := []int32{n}
	nd := &t.Nodes[n]
	if nd.Ref != 0 {
		out = append(out, expand(t, nd.Ref, depth+1)...)
	}
	for _, subs := range [][]int32{nd.AllOf, nd.AnyOf, nd.OneOf} {
		for _, sub := range subs {
			out = append(out, expand(t, sub, depth+1)...)
		}
	}
	return out
}
