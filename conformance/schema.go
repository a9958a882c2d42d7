package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The message checks: each agent message against the schema type its method implies, and the
// methods the agent calls.
var (
	schemaInvalid            = &Check{ID: "schema.invalid", Tier: report.TierMandatory, Side: SideAgent, Title: "Message does not match the ACP schema", SpecRef: specSchema}
	schemaInvalidTolerated   = &Check{ID: "schema.invalid-tolerated", Tier: report.TierAdvisory, Side: SideAgent, Title: "Schema violation the reference SDKs tolerate (value dropped or defaulted)", SpecRef: specSchema}
	schemaNonSpecKey         = &Check{ID: "schema.non-spec-key", Tier: report.TierMandatory, Side: SideAgent, Title: "Custom key outside _meta in a spec type", SpecRef: specExtensibility}
	schemaLegacyField        = &Check{ID: "schema.legacy-field", Tier: report.TierInfo, Side: SideAgent, Title: "Legacy field removed from ACP", SpecRef: specSchema}
	schemaUnstable           = &Check{ID: "schema.unstable", Tier: report.TierInfo, Side: SideAgent, Title: "Uses a field or variant defined only in an unstable draft or another pinned schema", SpecRef: specSchema}
	protocolClientCapability = &Check{ID: "protocol.client-capability", Tier: report.TierMandatory, Side: SideAgent, Title: "Agent called a client method the client did not advertise", SpecRef: specInit}
	protocolUnknownMethod    = &Check{ID: "protocol.unknown-method", Tier: report.TierAdvisory, Side: SideAgent, Title: "Agent called a method that is neither ACP nor an _-prefixed extension", SpecRef: specExtensibility}
	protocolUnprefixedServed = &Check{ID: "protocol.unprefixed-method-served", Tier: report.TierAdvisory, Side: SideAgent, Title: "Agent serves a method that is neither ACP nor an _-prefixed extension", SpecRef: specExtensibility}
)

// schemaPass reads each decoded agent message, the index (a response is validated as the
// answer to its request's method) and the schema sets, in any session.
var schemaPass = pass{
	name:  "schema",
	scope: anyScope,
	checks: []*Check{schemaInvalid, schemaInvalidTolerated, schemaNonSpecKey, schemaLegacyField, schemaUnstable,
		protocolClientCapability, protocolUnknownMethod, protocolUnprefixedServed, protocolUpdateOptIn},
	cost: perFrameSlow,
	run:  func(in *inputs, out *findings) { (&messages{in: in, out: out}).run() },
}

// messages is one run of the schema pass.
type messages struct {
	in  *inputs
	out *findings
	x   *record.Index // the connection of the frame being judged
}

// legacyFields are non-spec keys with a history, named as legacy rather than as custom keys.
var legacyFields = map[string]string{
	"models": "`models`: SessionModelState was removed from ACP on 2026-06-01; model selection is a config option with category model",
}

func (j *messages) run() {
	for x, f := range j.in.scan(j.out) {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil {
			continue
		}
		j.x = x
		m := f.Msg
		switch m.Kind() {
		case jsonrpc.Response:
			reply := x.ReplyOf(f.Seq)
			if reply.Exchange == nil || !reply.First {
				continue
			}
			req := reply.Exchange.Request
			if m.Error != nil {
				j.validate(f, "Error", j.in.Schemas.Set, m.Error, "/error")
				continue
			}
			if m.Result == nil {
				continue
			}
			set, def := j.in.Schemas.TypeFor(req.Msg.Method, schema.HandledByAgent, schema.Result)
			if def != "" {
				j.validate(f, def, set, m.Result, "/result")
			} else if j.unprefixed(req.Msg.Method) {
				j.out.add(protocolUnprefixedServed, f.Seq, "/result", j.servedMessage(req.Msg.Method), nil)
			}
		case jsonrpc.Request:
			j.agentMethod(f, schema.Params)
		case jsonrpc.Notification:
			j.agentMethod(f, schema.Notification)
		}
	}
}

// unprefixed says whether method is neither ACP's (in any pinned schema) nor an extension
// method (`_`-prefixed) nor a protocol-level one (`$/`).
func (j *messages) unprefixed(method string) bool {
	return !strings.HasPrefix(method, "_") && !strings.HasPrefix(method, "$/") && !j.in.Schemas.KnownMethod(method)
}

// servedMessage says that the agent answered a request for method, which unprefixed names,
// with a result: it serves a custom method named without the `_`, whoever asked it (an editor
// in a tap, or acpprobe's auth oracle asking codex-acp's authentication/status).
func (j *messages) servedMessage(method string) string {
	if def, ok := j.in.Catalogue.LookupMethod(method); ok {
		return fmt.Sprintf("the agent answered %s with a result: a method of %s named without the _ that custom methods must start with", method, def.Vendor)
	}
	return fmt.Sprintf("the agent answered %s with a result: %s is not an ACP method, and custom methods must start with _", method, method)
}

// agentMethod judges a request or notification from the agent: a known method's params
// against the schema, an unknown one by its name.
func (j *messages) agentMethod(f jsonrpc.Frame, part schema.Part) {
	m := f.Msg
	set, def := j.in.Schemas.TypeFor(m.Method, schema.HandledByClient, part)
	if def == "" {
		if j.unprefixed(m.Method) {
			j.out.add(protocolUnknownMethod, f.Seq, "/method", fmt.Sprintf("%s is not an ACP client method; custom methods must start with _", m.Method), nil)
		}
		return
	}
	if part == schema.Notification {
		j.updateOptIn(f)
	}
	if part == schema.Params {
		if gate, advertised := j.in.Client.Gate(m.Method, acp.ParseObject(m.Params)); !advertised {
			j.out.add(protocolClientCapability, f.Seq, "/method", fmt.Sprintf("%s needs clientCapabilities.%s, which the client did not advertise in its initialize", m.Method, gate), nil)
		}
	}
	params := m.Params
	if params == nil {
		params = json.RawMessage("null")
	}
	j.validate(f, def, set, params, "/params")
}

// validate reports schema violations and non-spec keys of one value of a message. What only
// the unstable or a newer schema defines is reported as such (INFO), not as a violation.
func (j *messages) validate(f jsonrpc.Frame, def string, set *schema.Set, value json.RawMessage, prefix string) {
	violations, err := set.ValidateNamed(def, value)
	if err != nil {
		return
	}
	if len(violations) > 0 {
		if alt := j.in.Schemas.AcceptedBy(set, def, value); alt != "" {
			j.out.add(schemaUnstable, f.Seq, prefix+violations[0].Pointer,
				fmt.Sprintf("%s of %s is valid only in the %s schema, not in %s: %s", part(prefix), j.methodOf(f), alt, set.Name, summarize(violations)), nil)
			violations = nil
		}
	}
	var strict, tolerated []schema.Violation
	for _, v := range violations {
		if set.Tolerated(def, v) {
			tolerated = append(tolerated, v)
		} else {
			strict = append(strict, v)
		}
	}
	if len(strict) > 0 {
		j.out.add(schemaInvalid, f.Seq, prefix+strict[0].Pointer,
			fmt.Sprintf("%s of %s does not match %s (%s): %s", part(prefix), j.methodOf(f), def, set.Name, summarize(strict)), violationEvidence(strict, prefix))
	}
	if len(tolerated) > 0 {
		j.out.add(schemaInvalidTolerated, f.Seq, prefix+tolerated[0].Pointer,
			fmt.Sprintf("%s of %s does not match %s, in a field the reference SDKs read leniently: %s", part(prefix), j.methodOf(f), def, summarize(tolerated)), violationEvidence(tolerated, prefix))
	}
	keys, err := set.UnknownKeys(def, value)
	if err != nil || len(keys) == 0 {
		return
	}
	keys = j.legacyVariants(f, def, value, prefix, keys)
	// Legacy fields are named as such whatever the other sets say: only the other keys need
	// them (which spares compiling the alternative sets for the common legacy `models`).
	var others []schema.UnknownKey
	for _, k := range keys {
		if legacyFields[k.Key] == "" || k.Pointer != "" {
			others = append(others, k)
		}
	}
	var knownElsewhere map[schema.UnknownKey]string
	if len(others) > 0 {
		knownElsewhere = j.in.Schemas.KeysKnownElsewhere(set, def, value, others)
	}
	for _, k := range keys {
		where := prefix + k.Pointer + "/" + k.Key
		switch {
		case legacyFields[k.Key] != "" && k.Pointer == "":
			j.out.add(schemaLegacyField, f.Seq, where, fmt.Sprintf("%s carries the legacy field %s", j.methodOf(f), legacyFields[k.Key]), nil)
		case knownElsewhere[k] != "":
			j.out.add(schemaUnstable, f.Seq, where, fmt.Sprintf("%q at %s is defined only in the %s schema, not in %s", k.Key, orRoot(prefix+k.Pointer), knownElsewhere[k], set.Name), nil)
		default:
			j.out.add(schemaNonSpecKey, f.Seq, where,
				fmt.Sprintf("%q is not a field of %s at %s; custom data belongs under _meta", k.Key, def, orRoot(prefix+k.Pointer)), nil)
		}
	}
}

// legacyVariant is a union variant that left the protocol but is still seen.
type legacyVariant struct {
	def, container, discriminator, value, why string
}

var legacyVariants = []legacyVariant{
	{"InitializeResponse", "authMethods", "type", "env_var",
		"the env_var auth method type {vars} was an unstable draft (Go SDK 0.13) and is not part of ACP v1; v1 clients see an `agent` method with an unknown type"},
}

// legacyVariants reports items of a known legacy variant once each, and drops the unknown
// keys inside them (they belong to the legacy variant, not to a custom extension).
func (j *messages) legacyVariants(f jsonrpc.Frame, def string, value json.RawMessage, prefix string, keys []schema.UnknownKey) []schema.UnknownKey {
	var inside []string
	for _, lv := range legacyVariants {
		if lv.def != def {
			continue
		}
		for i, item := range acp.ParseObject(value).Array(lv.container) {
			if acp.ParseObject(item).String(lv.discriminator) != lv.value {
				continue
			}
			p := fmt.Sprintf("/%s/%d", lv.container, i)
			inside = append(inside, p)
			j.out.add(schemaLegacyField, f.Seq, prefix+p+"/"+lv.discriminator, fmt.Sprintf("%s item %d uses %s %q: %s", lv.container, i, lv.discriminator, lv.value, lv.why), nil)
		}
	}
	if inside == nil {
		return keys
	}
	var out []schema.UnknownKey
next:
	for _, k := range keys {
		for _, p := range inside {
			if k.Pointer == p || strings.HasPrefix(k.Pointer, p+"/") {
				continue next
			}
		}
		out = append(out, k)
	}
	return out
}

// methodOf names the method a frame belongs to (for a response: its request's method).
func (j *messages) methodOf(f jsonrpc.Frame) string {
	if f.Msg.Method != "" {
		return f.Msg.Method
	}
	if ex := j.x.ReplyOf(f.Seq).Exchange; ex != nil {
		return "the " + ex.Method() + " response"
	}
	return "the response"
}

func part(prefix string) string { return strings.TrimPrefix(prefix, "/") }

func summarize(vs []schema.Violation) string {
	var parts []string
	for i, v := range vs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(vs)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("at %s: %s", orRoot(v.Pointer), v.Message))
	}
	return strings.Join(parts, "; ")
}

func violationEvidence(vs []schema.Violation, prefix string) any {
	type item struct {
		Pointer string `json:"pointer"`
		Message string `json:"message"`
		Keyword string `json:"keyword"`
	}
	var out []item
	for i, v := range vs {
		if i == 20 {
			break
		}
		out = append(out, item{prefix + v.Pointer, v.Message, v.Keyword})
	}
	return out
}
