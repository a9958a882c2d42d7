package extensions

import (
	"encoding/json"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Message is one message of a session, as the inventory sees it.
type Message struct {
	Seq int64
	// Direction is who sent it: DirectionAgentToClient or DirectionClientToAgent.
	Direction Direction
	// Method is the method of a request or notification, or of the request a response answers.
	Method string
	// Kind is "request", "notification" or "response".
	Kind string
	// Body is the whole message as sent.
	Body json.RawMessage
	// Echoed, when set, holds what the other side sent: names of this message that it holds
	// are not taken (an answer that merely echoes the asker's own traffic, such as a prompt
	// quoted back in a validation error).
	Echoed *Inventory
}

// Schema types the positions of a message for the inventory, so that a discriminator is judged
// against the union the protocol puts at its position: `diff` is a type of ToolCallContent (in
// a tool call's content), no type of ContentBlock (in a prompt, a message chunk). derive
// implements it with the pinned schema sets (acp/schema.Places). A nil Schema types nothing,
// and no value is reported as an unknown variant.
type Schema interface {
	// Body is the place of a message's params (a request or notification) or result (a
	// response); 0 when no schema describes it.
	Body(m Message) Place
	// Object resolves the place of an object at p (the branches its discriminators choose) and
	// names the discriminators whose value no union there defines.
	Object(p Place, obj map[string]any) (Place, []Discriminator)
	// Member is the place of member key of an object at p (as Object resolved it).
	Member(p Place, key string) Place
	// Item is the place of an element of an array at p.
	Item(p Place) Place
}

// Place is a position in a message as a Schema types it; 0 is a position no schema describes
// (inside _meta, an unknown key, a free-form value, an error's data, a vendor method).
type Place int32

// Discriminator is a union's constant-valued property: Union is the schema type
// (ToolCallContent), Prop the property (type).
type Discriminator struct{ Union, Prop string }

// field is the name the inventory gives a discriminator: the three it has always watched keep
// their names; any other is its union, first letter lower, and the property
// (toolCallContent.type).
func field(d Discriminator) string {
	switch d {
	case Discriminator{"SessionUpdate", "sessionUpdate"}:
		return "sessionUpdate"
	case Discriminator{"ContentBlock", "type"}:
		return "content.type"
	case Discriminator{"AuthMethod", "type"}:
		return "authMethod.type"
	}
	if d.Union == "" {
		return d.Prop
	}
	return strings.ToLower(d.Union[:1]) + d.Union[1:] + "." + d.Prop
}

// Sighting is one place a name was seen, and which side sent it.
type Sighting struct {
	Seq int64 `json:"seq"`
	// Pointer is the JSON pointer of the place; one deeper than maxPointer (256) bytes is cut,
	// ending in "/…".
	Pointer   string    `json:"pointer"`
	Method    string    `json:"method,omitempty"`
	Direction Direction `json:"direction"`
}

// maxSightings bounds the places kept per name and direction (Count has them all).
const maxSightings = 5

// SeenKey is a `_meta` key observed in the session, classified against the catalogue.
type SeenKey struct {
	// Key is the flat form ("codebuddy.ai/requestId", "claudeCode/promptQueueing", "api-key").
	Key string `json:"key"`
	// Form is how it appeared: flat ("ns/key"), nested ({"ns": {"key": …}}) or bare.
	Form   Form   `json:"form"`
	Vendor string `json:"vendor,omitempty"`
	// Known is true when the catalogue lists the key.
	Known             bool        `json:"known"`
	Class             Class       `json:"class,omitempty"`
	Status            Status      `json:"status,omitempty"`
	ExpectedDirection Direction   `json:"expectedDirection,omitempty"`
	Observed          []Direction `json:"observed"`
	Count             int         `json:"count"`
	Where             []Sighting  `json:"where"`
}

// SeenMethod is a `_`-prefixed method or notification observed in the session.
type SeenMethod struct {
	Name              string      `json:"name"`
	Vendor            string      `json:"vendor,omitempty"`
	Known             bool        `json:"known"`
	Class             Class       `json:"class,omitempty"`
	Status            Status      `json:"status,omitempty"`
	ExpectedKind      Kind        `json:"expectedKind,omitempty"`
	ObservedKind      Kind        `json:"observedKind"`
	ExpectedDirection Direction   `json:"expectedDirection,omitempty"`
	Observed          []Direction `json:"observed"`
	Count             int         `json:"count"`
	Where             []Sighting  `json:"where"`
}

// SeenVariant is a value of a protocol union that the protocol does not define at the place it
// was seen (in the chosen schema set or any of its alternatives).
type SeenVariant struct {
	// Field is what carries it: sessionUpdate (SessionUpdate), content.type (ContentBlock),
	// authMethod.type (AuthMethod), or the union's name and property (toolCallContent.type).
	Field string `json:"field"`
	Value string `json:"value"`
	// Vendor and Known tell whether the catalogue knows the value (e.g. env_var).
	Vendor string     `json:"vendor,omitempty"`
	Known  bool       `json:"known"`
	Count  int        `json:"count"`
	Where  []Sighting `json:"where"`
}

// Inventory is every vendor extension a session showed.
type Inventory struct {
	MetaKeys        []SeenKey     `json:"metaKeys"`
	Methods         []SeenMethod  `json:"methods"`
	UnknownVariants []SeenVariant `json:"unknownVariants"`
	// Vendors says, per catalogued vendor the session used, how much of its catalogued surface
	// was seen, and what of it should not have been: the live classification of seed 001.
	Vendors []VendorUse `json:"vendors"`
}

// VendorUse is what a session used of one vendor's catalogued surface.
type VendorUse struct {
	Vendor string `json:"vendor"`
	// KeysSeen of KeysCatalogued distinct catalogued _meta keys were seen, and MethodsSeen of
	// MethodsCatalogued methods.
	KeysSeen          int `json:"keysSeen"`
	KeysCatalogued    int `json:"keysCatalogued"`
	MethodsSeen       int `json:"methodsSeen"`
	MethodsCatalogued int `json:"methodsCatalogued"`
	// Unknown are the names in its namespace the catalogue does not list; Private the private
	// keys and methods the session carried (never on the standard plane to a third-party
	// client).
	Unknown []string `json:"unknown"`
	Private []string `json:"private"`
}

// Take walks every message and collects each `_meta` key (flat and nested forms), every
// `_`-prefixed method, and every value of a union's discriminator (sessionUpdate, a content
// block's or an auth method's type, …) that the union at its place does not define, as schema
// types the places; all classified against the catalogue. The caller may stop the sequence
// early (a deadline): the inventory then holds what was taken.
func (c *Catalogue) Take(msgs iter.Seq[Message], schema Schema) *Inventory {
	t := &taker{c: c, schema: schema, keys: map[string]*SeenKey{}, methods: map[string]*SeenMethod{}, variants: map[string]*SeenVariant{}}
	for m := range msgs {
		t.message(m)
	}
	return t.inventory()
}

type taker struct {
	c        *Catalogue
	schema   Schema
	keys     map[string]*SeenKey
	methods  map[string]*SeenMethod
	variants map[string]*SeenVariant
	// path holds the escaped tokens of the JSON pointer of the value being walked.
	path []string
	// body is the place of the message's params or result.
	body Place
}

func (t *taker) message(m Message) {
	if m.Kind != "response" && (strings.HasPrefix(m.Method, "_") || t.c.catalogued(m.Method)) {
		t.method(m)
	}
	var body any
	if json.Unmarshal(m.Body, &body) != nil {
		return
	}
	t.path, t.body = t.path[:0], 0
	if t.schema != nil {
		t.body = t.schema.Body(m)
	}
	t.walk(m, body, 0)
}

func (t *taker) method(m Message) {
	if m.Echoed.hasMethod(m.Method) {
		return
	}
	sm := t.methods[m.Method]
	if sm == nil {
		sm = &SeenMethod{Name: m.Method, ObservedKind: Kind(m.Kind)}
		if def, ok := t.c.LookupMethod(m.Method); ok {
			sm.Known, sm.Vendor, sm.Class, sm.Status, sm.ExpectedKind, sm.ExpectedDirection = true, def.Vendor, def.Class, def.Status, def.Kind, def.Direction
		} else if v, ok := t.c.VendorFor(m.Method); ok {
			sm.Vendor = v.Namespace
		}
		t.methods[m.Method] = sm
	}
	sm.Count++
	sm.Observed = addDirection(sm.Observed, m.Direction)
	sm.Where = t.sight(sm.Where, m, "/method")
}

// walk visits every value, at place p, the members of an object in the order of their names
// (so that the places kept, and their order, do not depend on map order): _meta objects are
// inventoried, discriminators checked against the union at their place. t.path holds the
// tokens of v's pointer. Each value costs a few look-ups of the schema's memo, so the walk is
// linear in the message however deep it nests; the pointer itself is written out only for a
// place that is kept.
func (t *taker) walk(m Message, v any, p Place) {
	switch x := v.(type) {
	case map[string]any:
		var unknown []Discriminator
		if p != 0 {
			p, unknown = t.schema.Object(p, x)
		}
		top := len(t.path) == 0
		for _, k := range sortedKeys(x) {
			child := x[k]
			t.path = append(t.path, escape(k))
			if k == "_meta" {
				if meta, ok := child.(map[string]any); ok {
					t.meta(m, meta)
				}
			} else {
				for _, d := range unknown {
					if d.Prop == k {
						t.variant(m, field(d), child)
					}
				}
				var at Place
				switch {
				case top && k == bodyKey(m):
					at = t.body
				case p != 0:
					at = t.schema.Member(p, k)
				}
				t.walk(m, child, at)
			}
			t.path = t.path[:len(t.path)-1]
		}
	case []any:
		var at Place
		if p != 0 {
			at = t.schema.Item(p)
		}
		for i, child := range x {
			t.path = append(t.path, strconv.Itoa(i))
			t.walk(m, child, at)
			t.path = t.path[:len(t.path)-1]
		}
	}
}

// bodyKey is the member of a message that Schema.Body types.
func bodyKey(m Message) string {
	if m.Kind == "response" {
		return "result"
	}
	return "params"
}

// variant records a discriminator value at t.path that the union there does not define.
func (t *taker) variant(m Message, field string, value any) {
	s, ok := value.(string)
	if !ok {
		return
	}
	id := field + "=" + s
	if m.Echoed.hasVariant(id) {
		return
	}
	sv := t.variants[id]
	if sv == nil {
		sv = &SeenVariant{Field: field, Value: s}
		if field == "authMethod.type" {
			if def, ok := t.c.LookupAuthMethodType(s); ok {
				sv.Known, sv.Vendor = true, def.Vendor
			}
		}
		t.variants[id] = sv
	}
	sv.Count++
	sv.Where = t.sight(sv.Where, m, "")
}

// meta inventories the keys of one _meta object (at t.path).
func (t *taker) meta(m Message, meta map[string]any) {
	for _, k := range sortedKeys(meta) {
		v := meta[k]
		t.path = append(t.path, escape(k))
		inner, isObj := v.(map[string]any)
		switch {
		case isObj && !strings.Contains(k, "/") && t.namespace(k):
			t.nested(m, k, inner)
		case isObj && !strings.Contains(k, "/") && t.nestedNamespaces(m, k, inner):
		default:
			form := FormBare
			if strings.Contains(k, "/") {
				form = FormFlat
			}
			t.key(m, k, form)
		}
		t.path = t.path[:len(t.path)-1]
	}
}

// nested inventories the members of the namespace object ns (at t.path) as its keys.
func (t *taker) nested(m Message, ns string, obj map[string]any) {
	for _, k := range sortedKeys(obj) {
		t.path = append(t.path, escape(k))
		t.key(m, ns+"/"+k, FormNested)
		t.path = t.path[:len(t.path)-1]
	}
}

// nestedNamespaces inventories the members of obj, the _meta member k (at t.path), that are
// the objects of a catalogued namespace with a dot ({"jetbrains": {"air": {…}}} is
// jetbrains.air's), and k itself, bare, for what else it holds. It reports false, taking
// nothing, when no member of obj is such a namespace.
func (t *taker) nestedNamespaces(m Message, k string, obj map[string]any) bool {
	if !t.c.outer[k] {
		return false
	}
	found, rest := false, false
	for _, ik := range sortedKeys(obj) {
		inner, isObj := obj[ik].(map[string]any)
		if v, ok := t.c.VendorFor(k + "." + ik); !isObj || !ok || !v.Namespaced || v.Namespace != k+"."+ik || !v.nested() {
			rest = true
			continue
		}
		found = true
		t.path = append(t.path, escape(ik))
		t.nested(m, k+"."+ik, inner)
		t.path = t.path[:len(t.path)-1]
	}
	if found && rest {
		t.key(m, k, FormBare)
	}
	return found
}

// namespace reports whether a _meta member names a vendor namespace object: a catalogued
// namespaced vendor that uses the nested form, or a dotted domain such as zed.dev.
func (t *taker) namespace(k string) bool {
	if v, ok := t.c.VendorFor(k); ok && v.Namespaced && v.Namespace == k {
		return v.nested()
	}
	return domainLike().MatchString(k)
}

// nested reports whether the vendor's keys may come in the nested form (its forms say so, or
// it lists none).
func (v Vendor) nested() bool { return len(v.Forms) == 0 || slices.Contains(v.Forms, FormNested) }

var domainLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+$`) })

// key records a _meta key seen at t.path.
func (t *taker) key(m Message, key string, form Form) {
	if m.Echoed.hasKey(key) {
		return
	}
	sk := t.keys[key]
	if sk == nil {
		sk = &SeenKey{Key: key, Form: form}
		if def, ok := t.c.LookupMetaKey(key); ok {
			sk.Known, sk.Vendor, sk.Class, sk.Status, sk.ExpectedDirection = true, def.Vendor, def.Class, def.Status, def.Direction
		} else if v, ok := t.c.VendorFor(key); ok && (form != FormBare || v.nested()) {
			sk.Vendor = v.Namespace // a bare key is a vendor's only where it may nest its keys
		}
		t.keys[key] = sk
	}
	sk.Count++
	sk.Observed = addDirection(sk.Observed, m.Direction)
	sk.Where = t.sight(sk.Where, m, "")
}

func (t *taker) inventory() *Inventory {
	inv := &Inventory{MetaKeys: []SeenKey{}, Methods: []SeenMethod{}, UnknownVariants: []SeenVariant{}}
	for _, k := range sortedKeys(t.keys) {
		inv.MetaKeys = append(inv.MetaKeys, *t.keys[k])
	}
	for _, k := range sortedKeys(t.methods) {
		inv.Methods = append(inv.Methods, *t.methods[k])
	}
	for _, k := range sortedKeys(t.variants) {
		inv.UnknownVariants = append(inv.UnknownVariants, *t.variants[k])
	}
	inv.Vendors = t.c.uses(inv)
	return inv
}

// uses is, per vendor of the catalogue that the inventory names, what it used (VendorUse), in
// catalogue order.
func (c *Catalogue) uses(inv *Inventory) []VendorUse {
	byVendor := map[string]*VendorUse{}
	use := func(vendor string) *VendorUse {
		u := byVendor[vendor]
		if u == nil {
			u = &VendorUse{Vendor: vendor, Unknown: []string{}, Private: []string{}}
			byVendor[vendor] = u
		}
		return u
	}
	seenKeys := map[string]bool{}
	for _, k := range inv.MetaKeys {
		if k.Vendor == "" {
			continue
		}
		u := use(k.Vendor)
		switch {
		case !k.Known:
			u.Unknown = append(u.Unknown, k.Key)
		case !seenKeys[k.Key]: // one key may be seen in two forms
			seenKeys[k.Key] = true
			u.KeysSeen++
		}
		if k.Class == ClassPrivate && !slices.Contains(u.Private, k.Key) {
			u.Private = append(u.Private, k.Key)
		}
	}
	for _, m := range inv.Methods {
		if m.Vendor == "" {
			continue
		}
		u := use(m.Vendor)
		if m.Known {
			u.MethodsSeen++
		} else {
			u.Unknown = append(u.Unknown, m.Name)
		}
		if m.Class == ClassPrivate {
			u.Private = append(u.Private, m.Name)
		}
	}
	for _, k := range c.keys {
		if u := byVendor[k.Vendor]; u != nil {
			u.KeysCatalogued++
		}
	}
	for _, m := range c.methods {
		if u := byVendor[m.Vendor]; u != nil {
			u.MethodsCatalogued++
		}
	}
	out := []VendorUse{}
	for _, v := range c.vendors {
		if u := byVendor[v.Namespace]; u != nil {
			out = append(out, *u)
		}
	}
	return out
}

// hasKey, hasMethod and hasVariant report whether an inventory (nil: an empty one) holds a
// name; its lists are sorted by name (variants by field=value).
func (inv *Inventory) hasKey(key string) bool {
	if inv == nil {
		return false
	}
	_, found := slices.BinarySearchFunc(inv.MetaKeys, key, func(k SeenKey, key string) int { return strings.Compare(k.Key, key) })
	return found
}

func (inv *Inventory) hasMethod(name string) bool {
	if inv == nil {
		return false
	}
	_, found := slices.BinarySearchFunc(inv.Methods, name, func(m SeenMethod, name string) int { return strings.Compare(m.Name, name) })
	return found
}

func (inv *Inventory) hasVariant(id string) bool {
	if inv == nil {
		return false
	}
	_, found := slices.BinarySearchFunc(inv.UnknownVariants, id, func(v SeenVariant, id string) int { return strings.Compare(v.Field+"="+v.Value, id) })
	return found
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// addDirection adds d to the directions a name was seen in, kept sorted (not in the order of
// arrival, which timing decides).
func addDirection(ds []Direction, d Direction) []Direction {
	i, found := slices.BinarySearch(ds, d)
	if found {
		return ds
	}
	return slices.Insert(ds, i, d)
}

// sight adds a place of message m to ws: pointer, or t.path when pointer is "". It keeps the
// first maxSightings places of each direction, so that a rule about one side can always point
// at where that side sent the name; the pointer is written out only for a place kept.
func (t *taker) sight(ws []Sighting, m Message, pointer string) []Sighting {
	n := 0
	for _, w := range ws {
		if w.Direction == m.Direction {
			n++
		}
	}
	if n >= maxSightings {
		return ws
	}
	if pointer == "" {
		pointer = t.pointer()
	}
	return append(ws, Sighting{Seq: m.Seq, Pointer: pointer, Method: m.Method, Direction: m.Direction})
}

// maxPointer bounds a sighting's pointer: a place nested deeper is cut, ending in "/…", so that
// the inventory stays proportional to the message however deep it nests.
const maxPointer = 256

// pointer writes out t.path as a JSON pointer (cut at maxPointer).
func (t *taker) pointer() string {
	var b strings.Builder
	for _, tok := range t.path {
		if b.Len()+1+len(tok) > maxPointer {
			b.WriteString("/…")
			break
		}
		b.WriteString("/")
		b.WriteString(tok)
	}
	return b.String()
}

// firstFrom is the first place side d sent the name.
func firstFrom(ws []Sighting, d Direction) Sighting {
	for _, w := range ws {
		if w.Direction == d {
			return w
		}
	}
	return Sighting{}
}

func escape(tok string) string {
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}
