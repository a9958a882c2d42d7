// Package extensions is acpprobe's catalogue of vendor extensions to the Agent Client
// Protocol: the `_meta` keys, the `_`-prefixed extension methods and the other vendor values
// (such as authMethods[].type values outside the specification) that real agents and clients
// use.
//
// The catalogue is data: one JSON file per vendor namespace under catalogue/ in this
// package, embedded in the binary and read by Load. LoadDir adds a user directory of files in
// the same format (the CLI's --catalogue DIR). Every file is validated when it is loaded; a
// problem is reported as a ValidationError that names the file and the entry.
//
// # File format
//
// A vendor file is a JSON object with these members (unknown members are errors):
//
//	schema           "acpprobe.extensions/v1" (required)
//	namespace        the vendor namespace; the file must be named <namespace>.json
//	name, source     who the vendor is and where the data comes from (required)
//	namespaced       true when the namespace is a prefix on the wire ("ns/key", {"ns": {...}},
//	                 "_ns/method"); false for bare keys such as gemini's "api-key". A namespace
//	                 with a dot that names nested objects ("jetbrains.air": {"jetbrains":
//	                 {"air": {...}}}) is matched as such when no literal key of that name is there
//	underscoreKeys   true when the flat form of the vendor's keys carries the leading '_' of its
//	                 methods ("_claude/model"); namespaced vendors only
//	forms            the wire forms the vendor uses: "flat", "nested", "bare"
//	notes            free text: provenance details, inconsistencies in the source
//	groups           [{id, title, statedCount}] sections of the source document
//	metaKeys         [{name, group, direction, class, status, where, description, credential, source}]
//	                 (credential: the value is a secret, redacted wherever it appears)
//	methods          [{name, direction, kind, class, status, description, source, authStatus, servedBy}]
//	                 (authStatus: the request answers the agent's login state and changes nothing;
//	                 servedBy: the agentInfo.name of the agents known to serve it, which acpprobe's
//	                 auth oracle then asks)
//	nonKeys          [{token, group, bucket, why}]
//	authMethodTypes  [{type, fields, direction, class, status, where, description, source}]
//
// A metaKeys name is the local name ("requestId"); for a namespaced vendor the catalogued key
// is "<namespace>/<name>". A methods name is the full wire name ("_codebuddy.ai/question"); a
// vendor method that is named without the '_' the protocol asks of extension methods
// ("authentication/status") is catalogued as the wire shows it, so that it is named where it is
// seen; the conformance checks still report it (protocol.unknown-method, client.unknown-method).
// status may be omitted and then means "active". An entry's source, when given, cites where the
// entry comes from ("repository@version:path", "npm-package@version:dist/file.js"); the
// vendor's source covers the entries without one.
//
// The package imports only the standard library.
package extensions

import (
	"slices"
	"strings"
	"sync"
)

// SchemaVersion is the value every catalogue file must carry in its "schema" member.
const SchemaVersion = "acpprobe.extensions/v1"

// Direction says which side of an ACP connection sends a key, method or value.
type Direction string

// Directions.
const (
	// DirectionAgentToClient: sent by the agent (results, notifications, agent requests).
	DirectionAgentToClient Direction = "agent-to-client"
	// DirectionClientToAgent: sent by the client (request params, client notifications).
	DirectionClientToAgent Direction = "client-to-agent"
	// DirectionBoth: either side may send it.
	DirectionBoth Direction = "both"
	// DirectionNone: nobody sends it (retired names, names without a producer, placeholders).
	DirectionNone Direction = "none"
)

// Class says who may use a key, method or value, as its vendor classifies it.
type Class string

// Classes.
const (
	// ClassPublic: optional extension that third-party peers may read, send or ignore.
	ClassPublic Class = "public"
	// ClassPrivate: vendor-internal channel; third-party peers must not produce it and should
	// never see it on the standard plane.
	ClassPrivate Class = "private"
	// ClassNone: unclassified (only for placeholders).
	ClassNone Class = ""
)

// Status records the life of an entry beyond its class.
type Status string

// Statuses.
const (
	// StatusActive: in use (the default when a file omits status).
	StatusActive Status = "active"
	// StatusRetired: removed on both sides; catalogued so the name is recognised and not reused.
	StatusRetired Status = "retired"
	// StatusNoProducer: the name exists (e.g. in a test) but nothing ever sends it.
	StatusNoProducer Status = "no-producer"
	// StatusPlaceholder: a test-only name with no implementation, direction, kind or class.
	StatusPlaceholder Status = "placeholder"
	// StatusExample: an illustration from the ACP specification rather than observed behaviour.
	StatusExample Status = "example"
	// StatusLegacy: a pre-specification form, superseded but still seen in the wild.
	StatusLegacy Status = "legacy"
)

// Kind says whether an extension method is a JSON-RPC request or notification.
type Kind string

// Kinds.
const (
	// KindRequest: carries an id and must be answered.
	KindRequest Kind = "request"
	// KindNotification: no id, no answer.
	KindNotification Kind = "notification"
	// KindNone: unknown (only for placeholders).
	KindNone Kind = ""
)

// Form is a way a vendor's keys appear inside a `_meta` object.
type Form string

// Forms.
const (
	// FormFlat: `{"ns/key": value}`.
	FormFlat Form = "flat"
	// FormNested: `{"ns": {"key": value}}`.
	FormNested Form = "nested"
	// FormBare: `{"key": value}` with no namespace, meaningful only where the key is catalogued.
	FormBare Form = "bare"
)

// Bucket says why a token that looks like a namespaced key is not one.
type Bucket string

// Buckets.
const (
	// BucketNamespaceNotation: the namespace prefix itself or a wildcard spelling of a family.
	BucketNamespaceNotation Bucket = "namespace-notation"
	// BucketURLPath: the path of a web URL on the vendor's domain.
	BucketURLPath Bucket = "url-path"
)

// Vendor describes one catalogued namespace. Its entries are listed by Catalogue.MetaKeys,
// Methods, NonKeys and AuthMethodTypes, each carrying the vendor's Namespace.
type Vendor struct {
	// Namespace identifies the vendor, e.g. "codebuddy.ai", "claudeCode", "gemini".
	Namespace string
	// Name is a human name for the vendor or product.
	Name string
	// Source is the provenance of the data.
	Source string
	// Notes are free-text remarks: how the source was encoded, and its inconsistencies.
	Notes []string
	// Namespaced reports that Namespace is a prefix on the wire ("ns/key", {"ns": {…}},
	// "_ns/method"), so that an unknown name under it still belongs to the vendor.
	Namespaced bool
	// UnderscoreKeys reports that the flat form of the vendor's keys carries the leading '_'
	// of its methods ("_claude/model").
	UnderscoreKeys bool
	// Forms lists the wire forms the vendor uses for its keys.
	Forms []Form
	// Groups are the sections of the source document that entries refer to.
	Groups []Group
	// Files are the catalogue files that defined the vendor, embedded file first.
	Files []string
}

// Group is a section of a vendor's source document.
type Group struct {
	// ID is the section number or name, e.g. "3.1".
	ID string
	// Title is the section's title.
	Title string
	// StatedCount is the number of entries the source says the section holds (0: not stated).
	StatedCount int
}

// MetaKey is one catalogued `_meta` key.
type MetaKey struct {
	// Key is the catalogued key in flat form: "<namespace>/<name>" for a namespaced vendor
	// ("codebuddy.ai/requestId", "claudeCode/promptQueueing"), the bare name otherwise ("api-key").
	Key string
	// Name is the key's local name inside the namespace ("requestId").
	Name string
	// Vendor is the namespace of the vendor that defines the key.
	Vendor string
	// Group is the ID of the vendor Group the key belongs to, or "".
	Group string
	// Direction says which side sends the key.
	Direction Direction
	// Class says whether third parties may use the key.
	Class Class
	// Status records retired, producer-less, legacy or example keys.
	Status Status
	// Where lists the places the key is seen, e.g. "authMethods[]._meta",
	// "agentCapabilities._meta", "session/prompt params._meta", "any _meta".
	Where []string
	// Description says what the key carries, in one line.
	Description string
	// Credential marks a key whose value is a credential: redacted wherever it appears.
	Credential bool
	// Source cites where the entry comes from, when it is not the vendor's Source.
	Source string
}

// Method is one catalogued `_`-prefixed extension method or notification.
type Method struct {
	// Name is the wire method name, e.g. "_codebuddy.ai/question".
	Name string
	// Vendor is the namespace of the vendor that defines the method.
	Vendor string
	// Direction says which side sends the request or notification.
	Direction Direction
	// Kind says whether it is a request or a notification (KindNone for placeholders).
	Kind Kind
	// Class says whether third parties may use the method (ClassNone for placeholders).
	Class Class
	// Status records placeholders and examples.
	Status Status
	// Description says what the method does, in one line.
	Description string
	// Source cites where the entry comes from, when it is not the vendor's Source.
	Source string
	// AuthStatus marks a request that answers the agent's login state and changes nothing
	// (codex-acp's authentication/status): the auth oracle asks it of the agents in ServedBy,
	// as it asks the protocol's auth/status of an agent that advertises it.
	AuthStatus bool
	// ServedBy lists the agentInfo.name of the agents known to serve the method.
	ServedBy []string
}

// NonKey is a token that looks like a namespaced key in the vendor's source but is not one
// (a namespace prefix, a wildcard, a URL path). It is catalogued so that counts of tokens in a
// code base reconcile with the keys and methods.
type NonKey struct {
	// Token is the token as a text search finds it, e.g. "codebuddy.ai/docs".
	Token string
	// Vendor is the namespace of the vendor whose source lists the token.
	Vendor string
	// Group is the ID of the vendor Group the token belongs to, or "".
	Group string
	// Bucket says what kind of non-key it is.
	Bucket Bucket
	// Why explains why it is not a key.
	Why string
}

// AuthMethodType is a catalogued value of the authMethods[].type discriminator that the
// ACP specification does not define.
type AuthMethodType struct {
	// Type is the discriminator value, e.g. "env_var".
	Type string
	// Vendor is the namespace of the vendor that uses it.
	Vendor string
	// Fields are the members the type adds to the auth method, e.g. ["vars"].
	Fields []string
	// Direction says which side sends it.
	Direction Direction
	// Class says whether third parties may use it.
	Class Class
	// Status records legacy or example values.
	Status Status
	// Where lists the places the value is seen, e.g. "authMethods[].type".
	Where []string
	// Description says what the type means, in one line.
	Description string
	// Source cites where the entry comes from, when it is not the vendor's Source.
	Source string
}

// Catalogue is a loaded, validated set of vendors. It is immutable: every accessor returns
// copies, and a Catalogue may be shared between goroutines.
type Catalogue struct {
	vendors    []Vendor // sorted by Namespace
	byNS       map[string]int
	keys       []MetaKey // vendor order, then file order
	methods    []Method
	nonKeys    []NonKey
	authTypes  []AuthMethodType
	keyIdx     map[string]int
	methodIdx  map[string]int
	authIdx    map[string]int
	nonKeyIdx  map[string]int
	namespaced map[string]int // wire namespace -> vendor index
	// outer holds the first part of each namespace with a dot ("jetbrains" of jetbrains.air),
	// for the nested objects that may spell it.
	outer map[string]bool
}

// Vendors lists the catalogued vendors, sorted by namespace.
func (c *Catalogue) Vendors() []Vendor { return clones(c.vendors) }

// Vendor returns the vendor with the given namespace.
func (c *Catalogue) Vendor(namespace string) (Vendor, bool) {
	i, ok := c.byNS[namespace]
	if !ok {
		return Vendor{}, false
	}
	return c.vendors[i].clone(), true
}

// MetaKeys lists every catalogued `_meta` key, by vendor namespace and then in file order.
func (c *Catalogue) MetaKeys() []MetaKey { return clones(c.keys) }

// Methods lists every catalogued extension method, by vendor namespace and then in file order.
func (c *Catalogue) Methods() []Method { return clones(c.methods) }

// AuthStatusMethod finds the catalogued request that asks the agent named agentName (its
// agentInfo.name) for its login state without changing it (Method.AuthStatus), for an agent
// that does not advertise the protocol's auth/status.
func (c *Catalogue) AuthStatusMethod(agentName string) (Method, bool) {
	for _, m := range c.methods {
		if m.AuthStatus && agentName != "" && slices.Contains(m.ServedBy, agentName) {
			return m.clone(), true
		}
	}
	return Method{}, false
}

// NonKeys lists every catalogued non-key token, by vendor namespace and then in file order.
func (c *Catalogue) NonKeys() []NonKey { return slices.Clone(c.nonKeys) }

// AuthMethodTypes lists every catalogued non-spec auth method type.
func (c *Catalogue) AuthMethodTypes() []AuthMethodType { return clones(c.authTypes) }

// LookupMetaKey finds a catalogued `_meta` key by its path from the `_meta` object. One
// element is the flat form as it appears as a member name: "codebuddy.ai/requestId", or a
// bare key such as "api-key". Several elements are the nested form, the vendor's namespace
// object and then the key: LookupMetaKey("codebuddy.ai", "requestId") and
// LookupMetaKey("claudeCode", "promptQueueing"). Both forms find the same entry; a path
// is joined with "/" and matched exactly. A bare key is found wherever it appears; compare
// the entry's Where with the place it was seen.
func (c *Catalogue) LookupMetaKey(path ...string) (MetaKey, bool) {
	if len(path) == 0 {
		return MetaKey{}, false
	}
	i, ok := c.keyIdx[strings.Join(path, "/")]
	if !ok {
		return MetaKey{}, false
	}
	return c.keys[i].clone(), true
}

// LookupMethod finds a catalogued extension method by its wire name, e.g.
// "_codebuddy.ai/session/rollback".
func (c *Catalogue) LookupMethod(name string) (Method, bool) {
	i, ok := c.methodIdx[name]
	if !ok {
		return Method{}, false
	}
	return c.methods[i].clone(), true
}

// LookupNonKey finds a catalogued non-key token, e.g. "codebuddy.ai/docs".
func (c *Catalogue) LookupNonKey(token string) (NonKey, bool) {
	i, ok := c.nonKeyIdx[token]
	if !ok {
		return NonKey{}, false
	}
	return c.nonKeys[i], true
}

// LookupAuthMethodType finds a catalogued non-spec authMethods[].type value, e.g. "env_var".
func (c *Catalogue) LookupAuthMethodType(typ string) (AuthMethodType, bool) {
	i, ok := c.authIdx[typ]
	if !ok {
		return AuthMethodType{}, false
	}
	return c.authTypes[i].clone(), true
}

// catalogued reports whether a method of that name is catalogued.
func (c *Catalogue) catalogued(method string) bool {
	_, ok := c.methodIdx[method]
	return ok
}

// VendorFor says which catalogued vendor a `_meta` key or extension method name belongs to,
// also when the name itself is not catalogued, so that "unknown key inside a catalogued
// namespace" can be reported. It accepts a flat key ("codebuddy.ai/newKey"), a method
// ("_codebuddy.ai/newMethod"), the namespace object of the nested form ("codebuddy.ai",
// "claudeCode"), and catalogued bare keys ("api-key"). Names under a vendor that is not
// Namespaced (gemini, codex, legacy-auth) match only when catalogued.
func (c *Catalogue) VendorFor(keyOrMethod string) (Vendor, bool) {
	if i, ok := c.keyIdx[keyOrMethod]; ok {
		return c.Vendor(c.keys[i].Vendor)
	}
	if i, ok := c.methodIdx[keyOrMethod]; ok {
		return c.Vendor(c.methods[i].Vendor)
	}
	ns, _, _ := strings.Cut(strings.TrimPrefix(keyOrMethod, "_"), "/")
	if i, ok := c.namespaced[ns]; ok {
		return c.vendors[i].clone(), true
	}
	return Vendor{}, false
}

//go:generate go run ./internal/gen

// index fills c's lookup maps from its lists.
func (c *Catalogue) index() *Catalogue {
	c.byNS, c.namespaced, c.outer = map[string]int{}, map[string]int{}, map[string]bool{}
	for i, v := range c.vendors {
		c.byNS[v.Namespace] = i
		if v.Namespaced {
			c.namespaced[v.Namespace] = i
			if outer, _, dotted := strings.Cut(v.Namespace, "."); dotted {
				c.outer[outer] = true
			}
		}
	}
	c.keyIdx, c.methodIdx = make(map[string]int, len(c.keys)), make(map[string]int, len(c.methods))
	c.nonKeyIdx, c.authIdx = make(map[string]int, len(c.nonKeys)), make(map[string]int, len(c.authTypes))
	for i, k := range c.keys {
		c.keyIdx[k.Key] = i
	}
	for i, m := range c.methods {
		c.methodIdx[m.Name] = i
	}
	for i, n := range c.nonKeys {
		c.nonKeyIdx[n.Token] = i
	}
	for i, a := range c.authTypes {
		c.authIdx[a.Type] = i
	}
	return c
}

// Default returns the embedded catalogue. It is the one Load reads from catalogue/*.json,
// decoded and validated at build time (go generate: catalogue_gen.go), so that no command
// pays for reading it at start-up; TestDefaultIsCurrent keeps the two the same.
func Default() *Catalogue { return defaultCatalogue() }

// defaultCatalogue indexes the generated lists once, on first use.
var defaultCatalogue = sync.OnceValue(func() *Catalogue {
	c := &Catalogue{vendors: embeddedVendors, keys: embeddedKeys, methods: embeddedMethods,
		nonKeys: embeddedNonKeys, authTypes: embeddedAuthTypes}
	return c.index()
})

// LookupMetaKey is Default().LookupMetaKey.
func LookupMetaKey(path ...string) (MetaKey, bool) { return Default().LookupMetaKey(path...) }

// LookupMethod is Default().LookupMethod.
func LookupMethod(name string) (Method, bool) { return Default().LookupMethod(name) }

// LookupAuthMethodType is Default().LookupAuthMethodType.
func LookupAuthMethodType(typ string) (AuthMethodType, bool) {
	return Default().LookupAuthMethodType(typ)
}

// VendorFor is Default().VendorFor.
func VendorFor(keyOrMethod string) (Vendor, bool) { return Default().VendorFor(keyOrMethod) }

func (v Vendor) clone() Vendor {
	v.Notes = slices.Clone(v.Notes)
	v.Forms = slices.Clone(v.Forms)
	v.Groups = slices.Clone(v.Groups)
	v.Files = slices.Clone(v.Files)
	return v
}

// clones copies entries whose slices a caller could otherwise change in the catalogue.
func clones[T interface{ clone() T }](entries []T) []T {
	out := make([]T, len(entries))
	for i, e := range entries {
		out[i] = e.clone()
	}
	return out
}

func (m Method) clone() Method {
	m.ServedBy = slices.Clone(m.ServedBy)
	return m
}

func (k MetaKey) clone() MetaKey {
	k.Where = slices.Clone(k.Where)
	return k
}

func (a AuthMethodType) clone() AuthMethodType {
	a.Fields = slices.Clone(a.Fields)
	a.Where = slices.Clone(a.Where)
	return a
}
