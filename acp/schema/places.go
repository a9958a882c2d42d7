package schema

import (
	"slices"
	"strconv"
	"strings"

	"github.com/acpprobe/acpprobe/internal/schematable"
)

// Place is a position in a message as Places types it: the schemas that apply there, in each of
// the sets walked. Place 0 is a position no schema describes (an unknown key, a free-form
// value, the data of an error, a method no set defines).
type Place int32

// Discriminator names a union's constant-valued property, at a place where the union is: a
// content block's type (ContentBlock), a tool call content's type (ToolCallContent), an update's
// sessionUpdate (SessionUpdate).
type Discriminator struct {
	Union string // the union's $defs name
	Prop  string
}

// defaultVariants names the variant that a union's branch without a constant stands for, where
// v1 says it only in prose ("When no `type` is present, the method is treated as `agent`"); v2
// makes both constants. An agent that spells the default out has not sent an unknown variant.
var defaultVariants = map[Discriminator]string{
	{"AuthMethod", "type"}: "agent",
	{"McpServer", "type"}:  "stdio",
}

// Places types the positions of messages along their method's type in one or more sets at
// once, so that a discriminator is judged against the union at its own position (a `diff` is a
// ToolCallContent type inside a tool call, no ContentBlock type inside a prompt), and a value
// that some set defines there is known.
//
// A walk asks Body for the place of a message's params or result, then, going down, Object for
// each object (the branches of its unions, chosen by its discriminators, and which of them the
// unions there do not define), Member for each member and Item for each array element. Each
// answer is memoised, so a walk costs a few map look-ups per value: linear in the message.
// The memo holds only what the schemas define (places, their defined keys, the known values of
// their discriminators; an unknown key or value is answered without being kept), so it is
// bounded by the schemas, whatever the messages. A Places is for one goroutine.
type Places struct {
	sets   []*Set
	states []*state         // by Place; states[0] is the untyped place
	ids    map[string]Place // a state's canonical key -> its place
	roots  map[root]Place   // the place of each method's types
	unions map[node]*union
	key    []byte // scratch for canonical keys
}

// root names a method's type.
type root struct {
	method string
	side   Side
	part   Part
}

// node is one schema node of one set (its index in Places.sets).
type node struct{ set, n int32 }

// state is what applies at a place: per set, the object and array schemas (shapes) and the
// discriminated unions not yet resolved; and the memoised steps from it.
type state struct {
	shapes    [][]int32  // by set
	unions    [][]*union // by set
	hasUnions bool
	members   map[string]Place
	other     Place // the place of a key no shape defines (additionalProperties)
	item      Place
	otherDone bool
	itemDone  bool
	resolved  map[uint64]resolution
}

// resolution is an object's place once its unions are resolved, and the discriminators whose
// value no union there defines.
type resolution struct {
	place   Place
	unknown []Discriminator
}

// union is a union whose branches carry a constant for prop: its branches by value, and those
// without a constant (the variant of an absent discriminator).
type union struct {
	name     string
	prop     string
	values   []string  // sorted
	branches [][]int32 // by value
	defaults []int32
	dflt     string // the value the defaults stand for (defaultVariants), or ""
}

// Outcomes of a union's discriminator in one object (otherwise the index of its value).
const (
	outcomeAbsent  = 255 // no discriminator: the defaults apply
	outcomeUnknown = 254 // a string no branch defines: no branch applies
	outcomeOther   = 253 // not a string: no branch applies, nothing to say
	maxOutcomes    = 250
)

// NewPlaces types positions along sets (each one counts: a value is known where any of them
// defines it).
func NewPlaces(sets ...*Set) *Places {
	return &Places{sets: sets, states: []*state{{}}, ids: map[string]Place{}, roots: map[root]Place{}, unions: map[node]*union{}}
}

// Body is the place of part of method, handled by side: the message's params or result.
func (ps *Places) Body(method string, side Side, part Part) Place {
	k := root{method, side, part}
	if p, ok := ps.roots[k]; ok {
		return p
	}
	roots := make([][]int32, len(ps.sets))
	found := false
	for i, s := range ps.sets {
		if def, ok := s.TypeFor(method, side, part); ok {
			roots[i], found = []int32{s.node(def)}, true
		}
	}
	if !found {
		return 0 // not kept: method is the peer's to choose
	}
	p := ps.place(roots)
	ps.roots[k] = p
	return p
}

// Object resolves the place of an object, obj, at p: the branches of the unions there that its
// discriminators choose. It also names the discriminators whose value (a string) no union
// there, in any set, defines; the slice is shared, not to be changed.
func (ps *Places) Object(p Place, obj map[string]any) (Place, []Discriminator) {
	return ps.object(p, obj, 0)
}

func (ps *Places) object(p Place, obj map[string]any, depth int) (Place, []Discriminator) {
	st := ps.states[p]
	if !st.hasUnions {
		return p, nil
	}
	var memo uint64
	n := 0
	prop, v, present := "", any(nil), false // the sets' unions at a place share their property
	for _, us := range st.unions {
		for _, u := range us {
			if n == 0 || u.prop != prop {
				prop = u.prop
				v, present = obj[prop]
			}
			memo = memo<<8 | uint64(u.outcome(v, present))
			n++
		}
	}
	if n <= 8 {
		if r, ok := st.resolved[memo]; ok {
			return r.place, r.unknown
		}
	}
	r := ps.resolve(st, obj, depth)
	if n <= 8 {
		if st.resolved == nil {
			st.resolved = map[uint64]resolution{}
		}
		st.resolved[memo] = r
	}
	return r.place, r.unknown
}

// resolve chooses the branches of st's unions for obj and resolves what they bring in turn
// (a union inside a branch), up to a depth no schema here reaches.
func (ps *Places) resolve(st *state, obj map[string]any, depth int) resolution {
	parts := make([][]int32, len(ps.sets))
	var seen, known []Discriminator
	for set := range ps.sets {
		parts[set] = slices.Clone(st.shapes[set])
		for _, info := range st.unions[set] {
			d := Discriminator{info.name, info.prop}
			var chosen []int32
			v, present := obj[info.prop]
			switch o := info.outcome(v, present); {
			case o == outcomeAbsent:
				chosen = info.defaults
			case o == outcomeUnknown:
				if !slices.ContainsFunc(seen, func(s Discriminator) bool { return s.Prop == d.Prop }) {
					seen = append(seen, d)
				}
			case o < maxOutcomes:
				if o == len(info.values) {
					chosen = info.defaults // the default variant, spelt out
				} else {
					chosen = info.branches[o]
				}
				known = append(known, d)
			}
			parts[set] = append(parts[set], chosen...)
		}
	}
	var unknown []Discriminator
	for _, d := range seen {
		if !slices.ContainsFunc(known, func(k Discriminator) bool { return k.Prop == d.Prop }) {
			unknown = append(unknown, d)
		}
	}
	p := ps.place(parts)
	if depth < 16 && ps.states[p].hasUnions {
		q, more := ps.object(p, obj, depth+1)
		return resolution{q, append(unknown, more...)}
	}
	return resolution{p, unknown}
}

// outcome is what an object's discriminator, v (present or not), says of u: the index of its
// value, or an outcome* constant.
func (u *union) outcome(v any, present bool) int {
	if !present {
		return outcomeAbsent
	}
	s, isString := v.(string)
	if !isString {
		return outcomeOther
	}
	if i, found := slices.BinarySearch(u.values, s); found {
		return i
	}
	if u.dflt != "" && s == u.dflt && len(u.values) < maxOutcomes {
		return len(u.values)
	}
	return outcomeUnknown
}

// Member is the place of the member key of an object at p (resolved by Object).
func (ps *Places) Member(p Place, key string) Place {
	st := ps.states[p]
	if q, ok := st.members[key]; ok {
		return q
	}
	parts := make([][]int32, len(ps.sets))
	defined := false
	for set, shapes := range st.shapes {
		t := &ps.sets[set].s.table
		for _, s := range shapes {
			if prop := t.Nodes[s].Prop(key); prop != 0 {
				parts[set], defined = append(parts[set], prop), true
			}
		}
	}
	if !defined {
		return ps.other(st) // not kept: key is the peer's to choose
	}
	for set, shapes := range st.shapes {
		if len(parts[set]) == 0 {
			parts[set] = additional(&ps.sets[set].s.table, shapes)
		}
	}
	q := ps.place(parts)
	if st.members == nil {
		st.members = map[string]Place{}
	}
	st.members[key] = q
	return q
}

// other is the place of the members of an object at st that no shape names.
func (ps *Places) other(st *state) Place {
	if !st.otherDone {
		parts := make([][]int32, len(ps.sets))
		for set, shapes := range st.shapes {
			parts[set] = additional(&ps.sets[set].s.table, shapes)
		}
		st.other, st.otherDone = ps.place(parts), true
	}
	return st.other
}

// additional are the additionalProperties schemas of shapes.
func additional(t *schematable.Table, shapes []int32) []int32 {
	var out []int32
	for _, s := range shapes {
		if a := t.Nodes[s].Addl; a > 0 {
			out = append(out, a)
		}
	}
	return out
}

// Item is the place of an element of an array at p.
func (ps *Places) Item(p Place) Place {
	st := ps.states[p]
	if !st.itemDone {
		parts := make([][]int32, len(ps.sets))
		for set, shapes := range st.shapes {
			t := &ps.sets[set].s.table
			for _, s := range shapes {
				if it := t.Nodes[s].Items; it != 0 && t.Nodes[it].Boolean == 0 {
					parts[set] = append(parts[set], it)
				}
			}
		}
		st.item, st.itemDone = ps.place(parts), true
	}
	return st.item
}

// place expands the nodes of each set (through $ref, allOf and the unions that discriminate
// nothing) into the shapes and discriminated unions that apply, and interns the result.
func (ps *Places) place(roots [][]int32) Place {
	shapes := make([][]int32, len(ps.sets))
	unions := make([][]int32, len(ps.sets))
	empty := true
	for set, nodes := range roots {
		seen := map[int32]bool{}
		for _, n := range nodes {
			ps.expand(int32(set), n, seen, &shapes[set], &unions[set], 0)
		}
		slices.Sort(shapes[set])
		slices.Sort(unions[set])
		if len(shapes[set])+len(unions[set]) > 0 {
			empty = false
		}
	}
	if empty {
		return 0
	}
	b := ps.key[:0]
	for set := range ps.sets {
		for _, n := range shapes[set] {
			b = strconv.AppendInt(append(b, 's'), int64(n), 10)
		}
		for _, n := range unions[set] {
			b = strconv.AppendInt(append(b, 'u'), int64(n), 10)
		}
		b = append(b, '|')
	}
	ps.key = b
	if p, ok := ps.ids[string(b)]; ok {
		return p
	}
	st := &state{shapes: shapes, unions: make([][]*union, len(ps.sets))}
	for set, us := range unions {
		for _, u := range us {
			st.unions[set] = append(st.unions[set], ps.union(set, u))
		}
		st.hasUnions = st.hasUnions || len(us) > 0
	}
	p := Place(len(ps.states))
	ps.states = append(ps.states, st)
	ps.ids[string(b)] = p
	return p
}

func (ps *Places) expand(set, n int32, seen map[int32]bool, shapes, unions *[]int32, depth int) {
	if n == 0 || seen[n] || depth > 64 {
		return
	}
	seen[n] = true
	nd := &ps.sets[set].s.table.Nodes[n]
	if nd.Boolean != 0 {
		return
	}
	if len(nd.Props) > 0 || nd.Items != 0 || nd.Addl > 0 {
		*shapes = append(*shapes, n)
	}
	if nd.Ref != 0 {
		ps.expand(set, nd.Ref, seen, shapes, unions, depth+1)
	}
	for _, sub := range nd.AllOf {
		ps.expand(set, sub, seen, shapes, unions, depth+1)
	}
	if len(nd.AnyOf)+len(nd.OneOf) == 0 {
		return
	}
	if ps.union(int(set), n) != nil {
		*unions = append(*unions, n)
		return
	}
	for _, sub := range slices.Concat(nd.AnyOf, nd.OneOf) {
		ps.expand(set, sub, seen, shapes, unions, depth+1)
	}
}

// union describes the union at node n of set (nil when its branches carry no constant: a
// nullable type, a choice of shapes, which expand takes whole).
func (ps *Places) union(set int, n int32) *union {
	k := node{int32(set), n}
	if u, ok := ps.unions[k]; ok {
		return u
	}
	t := &ps.sets[set].s.table
	nd := &t.Nodes[n]
	branches := slices.Concat(nd.AnyOf, nd.OneOf)
	consts := make([]map[string]string, len(branches))
	count := map[string]int{}
	for i, b := range branches {
		consts[i] = map[string]string{}
		branchConsts(t, b, consts[i], 0)
		for p := range consts[i] {
			count[p]++
		}
	}
	var u *union
	if prop := mostCommon(count); prop != "" {
		u = &union{name: defName(nd.Loc), prop: prop}
		byValue := map[string][]int32{}
		for i, b := range branches {
			if v, ok := consts[i][prop]; ok {
				byValue[v] = append(byValue[v], b)
			} else {
				u.defaults = append(u.defaults, b)
			}
		}
		for v := range byValue {
			u.values = append(u.values, v)
		}
		slices.Sort(u.values)
		for _, v := range u.values {
			u.branches = append(u.branches, byValue[v])
		}
		if len(u.values) >= maxOutcomes {
			u.values, u.branches = u.values[:maxOutcomes-1], u.branches[:maxOutcomes-1]
		}
		if len(u.defaults) > 0 {
			u.dflt = defaultVariants[Discriminator{u.name, prop}]
		}
	}
	ps.unions[k] = u
	return u
}

// branchConsts gathers the string constants of a branch's properties, through $ref and allOf.
func branchConsts(t *schematable.Table, n int32, out map[string]string, depth int) {
	if n == 0 || depth > 16 {
		return
	}
	nd := &t.Nodes[n]
	for _, p := range nd.Props {
		if c := t.Nodes[p.Node].Const; c.Kind == schematable.KString {
			if _, dup := out[p.Name]; !dup {
				out[p.Name] = c.Text
			}
		}
	}
	branchConsts(t, nd.Ref, out, depth+1)
	for _, sub := range nd.AllOf {
		branchConsts(t, sub, out, depth+1)
	}
}

// mostCommon is the property most branches give a constant (the first by name among equals).
func mostCommon(count map[string]int) string {
	best := ""
	for p, c := range count {
		if c > count[best] || (c == count[best] && p < best) {
			best = p
		}
	}
	return best
}

// defName is the $defs name a location is in ("#/$defs/ContentBlock" → ContentBlock).
func defName(loc string) string {
	_, rest, ok := strings.Cut(loc, "#/$defs/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}
