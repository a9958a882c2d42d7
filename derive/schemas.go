package derive

import (
	"encoding/json"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/report"
)

// Schemas are the schema sets a record is read and judged against: the chosen one and, for v1,
// the sets that may define what it does not.
type Schemas struct {
	// Set is the chosen set.
	Set *schema.Set
	// fallbacks type the methods the chosen set does not define (session/fork, …): its own
	// unstable drafts first, then older drafts since removed (nes/*, document/*).
	fallbacks []*schema.Set
	alts      []*schema.Set // sets that may define what the chosen one does not (unstable, newer, older drafts)
}

// alternatives are, for each v1 set, the sets that may define what it does not, in the order
// they are asked: its own unstable drafts first. The 1.21 drafts stay an alternative of the
// newer v1 because the newer drafts dropped some of theirs (NES, document/*,
// positionEncoding), which agents still advertise.
var alternatives = map[string][]string{
	schema.V1Next: {schema.V1NextUnstable, schema.V1Unstable},
	schema.V1:     {schema.V1Unstable, schema.V1Next, schema.V1NextUnstable},
}

// loadSchemas loads the set named (empty: schema.Default, or v2 when protocol version 2 was
// negotiated) and, for v1, its alternatives.
func loadSchemas(name string, r *report.Result) (*Schemas, error) {
	if name == "" {
		name = schema.Default
		if r.ProtocolVersion != nil && *r.ProtocolVersion == 2 {
			name = schema.V2
		}
	}
	set, err := schema.Load(name)
	if err != nil {
		return nil, err
	}
	s := &Schemas{Set: set}
	for _, alt := range alternatives[name] {
		a, err := schema.Load(alt)
		if err != nil {
			return nil, err
		}
		s.alts = append(s.alts, a)
		if strings.HasSuffix(alt, "-unstable") {
			s.fallbacks = append(s.fallbacks, a)
		}
	}
	return s, nil
}

// Ref names the chosen set for the report.
func (s *Schemas) Ref() *report.SchemaSet {
	return &report.SchemaSet{Name: s.Set.Name, Version: s.Set.Version}
}

// All are the chosen set and its alternatives.
func (s *Schemas) All() []*schema.Set { return append([]*schema.Set{s.Set}, s.alts...) }

// TypeFor finds the schema type of a method, falling back to the unstable drafts for methods
// that are only defined there (session/fork, …).
func (s *Schemas) TypeFor(method string, side schema.Side, part schema.Part) (*schema.Set, string) {
	for _, set := range append([]*schema.Set{s.Set}, s.fallbacks...) {
		if def, ok := set.TypeFor(method, side, part); ok {
			return set, def
		}
	}
	return nil, ""
}

// KnownMethod reports whether any schema set defines method, in any direction or form.
func (s *Schemas) KnownMethod(method string) bool {
	if acp.LegacyMethods[method] != "" {
		return true // removed from ACP, still implemented (capability.legacy-method)
	}
	for _, set := range s.All() {
		for _, side := range []schema.Side{schema.HandledByAgent, schema.HandledByClient} {
			for _, part := range []schema.Part{schema.Params, schema.Result, schema.Notification} {
				if _, ok := set.TypeFor(method, side, part); ok {
					return true
				}
			}
		}
	}
	return false
}

// AcceptedBy names the first alternative set (unstable, newer) in which value is valid.
func (s *Schemas) AcceptedBy(set *schema.Set, def string, value json.RawMessage) string {
	for _, alt := range s.alts {
		if alt == set || !alt.Has(def) {
			continue
		}
		if v, err := alt.Validate(def, value); err == nil && v == nil {
			return alt.Name
		}
	}
	return ""
}

// KeysKnownElsewhere maps each unknown key that an alternative set defines to that set's name.
func (s *Schemas) KeysKnownElsewhere(set *schema.Set, def string, value json.RawMessage, keys []schema.UnknownKey) map[schema.UnknownKey]string {
	out := map[schema.UnknownKey]string{}
	for _, alt := range s.alts {
		if alt == set || !alt.Has(def) {
			continue
		}
		altKeys, err := alt.UnknownKeys(def, value)
		if err != nil {
			continue
		}
		stillUnknown := map[schema.UnknownKey]bool{}
		for _, k := range altKeys {
			stillUnknown[k] = true
		}
		for _, k := range keys {
			if !stillUnknown[k] && out[k] == "" {
				out[k] = alt.Name
			}
		}
	}
	return out
}

// Places types the positions of messages for the extension inventory along the chosen set
// and its alternatives: a discriminator's value is known where any of them defines it at that
// place. For one goroutine (one inventory).
func (s *Schemas) Places() extensions.Schema { return places{schema.NewPlaces(s.All()...)} }

// places is schema.Places as the inventory asks it.
type places struct{ p *schema.Places }

func (p places) Body(m extensions.Message) extensions.Place {
	side, part := schema.HandledByClient, schema.Params
	if m.Direction == extensions.DirectionClientToAgent {
		side = schema.HandledByAgent
	}
	switch m.Kind {
	case "notification":
		part = schema.Notification
	case "response": // the answer of the other side's request
		part = schema.Result
		if m.Direction == extensions.DirectionAgentToClient {
			side = schema.HandledByAgent
		} else {
			side = schema.HandledByClient
		}
	}
	return extensions.Place(p.p.Body(m.Method, side, part))
}

func (p places) Object(at extensions.Place, obj map[string]any) (extensions.Place, []extensions.Discriminator) {
	q, unknown := p.p.Object(schema.Place(at), obj)
	var out []extensions.Discriminator
	for _, d := range unknown {
		out = append(out, extensions.Discriminator(d))
	}
	return extensions.Place(q), out
}

func (p places) Member(at extensions.Place, key string) extensions.Place {
	return extensions.Place(p.p.Member(schema.Place(at), key))
}

func (p places) Item(at extensions.Place) extensions.Place {
	return extensions.Place(p.p.Item(schema.Place(at)))
}
