package extensions

import (
	"encoding/json"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
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

// Known lists the protocol's own values of the union discriminators the inventory watches, so
// that any other value is reported as an unknown variant.
type Known struct {
	SessionUpdates []string // update.sessionUpdate values
	ContentTypes   []string // content block type values
	AuthTypes      []string // authMethods[].type values ("" = absent, the agent type)
}

// Sighting is one place a name was seen, and which side sent it.
type Sighting struct {
	Seq       int64     `json:"seq"`
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

// SeenVariant is a value of a protocol union that the protocol does not define.
type SeenVariant struct {
	// Field is what carries it: sessionUpdate, content.type or authMethod.type.
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
}

// Take walks every message and collects each `_meta` key (flat and nested forms), every
// `_`-prefixed method, and every unknown sessionUpdate, content type and auth method type,
// classified against the catalogue. The caller may stop the sequence early (a deadline): the
// inventory then holds what was taken.
func (c *Catalogue) Take(msgs iter.Seq[Message], known Known) *Inventory {
	t := &taker{c: c, known: known, keys: map[string]*SeenKey{}, methods: map[string]*SeenMethod{}, variants: map[string]*SeenVariant{}}
	for m := range msgs {
		t.message(m)
	}
	return t.inventory()
}

type taker struct {
	c        *Catalogue
	known    Known
	keys     map[string]*SeenKey
	methods  map[string]*SeenMethod
	variants map[string]*SeenVariant
}

func (t *taker) message(m Message) {
	if strings.HasPrefix(m.Method, "_") && m.Kind != "response" {
		t.method(m)
	}
	var body any
	if json.Unmarshal(m.Body, &body) != nil {
		return
	}
	t.walk(m, body, "")
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
	sm.Where = addSighting(sm.Where, Sighting{Seq: m.Seq, Pointer: "/method", Method: m.Method, Direction: m.Direction})
}

// walk visits every value, the members of an object in the order of their names (so that the
// places kept, and their order, do not depend on map order): _meta objects are inventoried,
// discriminators checked.
func (t *taker) walk(m Message, v any, ptr string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(x) {
			child := x[k]
			p := ptr + "/" + escape(k)
			if k == "_meta" {
				if meta, ok := child.(map[string]any); ok {
					t.meta(m, meta, p)
				}
				continue
			}
			switch k {
			case "sessionUpdate":
				t.variant(m, "sessionUpdate", child, t.known.SessionUpdates, p)
			case "type":
				t.typeField(m, x, child, ptr, p)
			}
			t.walk(m, child, p)
		}
	case []any:
		for i, child := range x {
			t.walk(m, child, ptr+"/"+strconv.Itoa(i))
		}
	}
}

// typeField checks the type of a content block (a value under "content" or in a prompt) and
// of an auth method.
func (t *taker) typeField(m Message, obj map[string]any, value any, objPtr, ptr string) {
	switch {
	case strings.Contains(objPtr, "/authMethods/"):
		t.variant(m, "authMethod.type", value, t.known.AuthTypes, ptr)
	case strings.HasSuffix(objPtr, "/content") || strings.Contains(objPtr, "/prompt/") || strings.Contains(objPtr, "/content/"):
		if _, isToolContent := obj["content"]; isToolContent {
			return // a tool call content wrapper, not a content block
		}
		t.variant(m, "content.type", value, t.known.ContentTypes, ptr)
	}
}

func (t *taker) variant(m Message, field string, value any, known []string, ptr string) {
	s, ok := value.(string)
	if !ok || len(known) == 0 {
		return
	}
	for _, k := range known {
		if k == s {
			return
		}
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
	sv.Where = addSighting(sv.Where, Sighting{Seq: m.Seq, Pointer: ptr, Method: m.Method, Direction: m.Direction})
}

// meta inventories the keys of one _meta object.
func (t *taker) meta(m Message, meta map[string]any, ptr string) {
	for _, k := range sortedKeys(meta) {
		v := meta[k]
		p := ptr + "/" + escape(k)
		if inner, isObj := v.(map[string]any); isObj && !strings.Contains(k, "/") && t.namespace(k) {
			for _, ik := range sortedKeys(inner) {
				t.key(m, k+"/"+ik, FormNested, p+"/"+escape(ik))
			}
			continue
		}
		form := FormBare
		if strings.Contains(k, "/") {
			form = FormFlat
		}
		t.key(m, k, form, p)
	}
}

// namespace reports whether a _meta member names a vendor namespace object: a catalogued
// namespaced vendor, or a dotted domain such as zed.dev.
func (t *taker) namespace(k string) bool {
	if v, ok := t.c.VendorFor(k); ok && v.Namespaced && v.Namespace == k {
		return true
	}
	return domainLike.MatchString(k)
}

var domainLike = regexp.MustCompile(`^[a-z0-9-]+(\.[a-z0-9-]+)+$`)

func (t *taker) key(m Message, key string, form Form, ptr string) {
	if m.Echoed.hasKey(key) {
		return
	}
	sk := t.keys[key]
	if sk == nil {
		sk = &SeenKey{Key: key, Form: form}
		if def, ok := t.c.LookupMetaKey(key); ok {
			sk.Known, sk.Vendor, sk.Class, sk.Status, sk.ExpectedDirection = true, def.Vendor, def.Class, def.Status, def.Direction
		} else if v, ok := t.c.VendorFor(key); ok {
			sk.Vendor = v.Namespace
		}
		t.keys[key] = sk
	}
	sk.Count++
	sk.Observed = addDirection(sk.Observed, m.Direction)
	sk.Where = addSighting(sk.Where, Sighting{Seq: m.Seq, Pointer: ptr, Method: m.Method, Direction: m.Direction})
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
	return inv
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

// addSighting keeps the first maxSightings places of each direction, so that a rule about one
// side can always point at where that side sent the name.
func addSighting(ws []Sighting, s Sighting) []Sighting {
	n := 0
	for _, w := range ws {
		if w.Direction == s.Direction {
			n++
		}
	}
	if n >= maxSightings {
		return ws
	}
	return append(ws, s)
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
