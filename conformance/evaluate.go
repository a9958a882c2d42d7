package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// Options tune an evaluation.
type Options struct {
	// Schema is the schema set to validate against (schema.V1, V1Unstable, V2); empty means v1,
	// or v2 when protocol version 2 was negotiated.
	Schema string
	// Deep holds the frames of the second, initialize-only connection of --deep (see
	// record.Split), which asked for a version no agent supports.
	Deep []jsonrpc.Frame
	// Catalogue classifies vendor extensions (extensions.Default() when nil).
	Catalogue *extensions.Catalogue
}

// Outcome is what an evaluation adds to a result: the findings, most severe first, and the
// facts the checks derive on the way (the vendor extension inventory, the prompt shapes).
type Outcome struct {
	Findings     []probe.Finding
	Extensions   *extensions.Inventory
	PromptShapes *probe.PromptShapes
}

// maxPerCheck bounds the findings of one check; the last one says how many more there were.
const maxPerCheck = 10

// legacyFields are non-spec keys with a history, named as legacy rather than as custom keys.
var legacyFields = map[string]string{
	"models": "`models`: SessionModelState was removed from ACP on 2026-06-01; model selection is a config option with category model",
}

// Evaluate judges a recorded session: its index and the result derived from it (which it does
// not modify). An error means the schema set could not be loaded.
func Evaluate(x *record.Index, r *probe.Result, opts Options) (Outcome, error) {
	name := opts.Schema
	if name == "" {
		name = schema.V1
		if r.ProtocolVersion != nil && *r.ProtocolVersion == 2 {
			name = schema.V2
		}
	}
	set, err := schema.Load(name)
	if err != nil {
		return Outcome{}, err
	}
	e := &evaluator{x: x, frames: x.Frames(), r: r, set: set, counts: map[string]int{}, opts: opts}
	if name == schema.V1 {
		if e.unstable, err = schema.Load(schema.V1Unstable); err != nil {
			return Outcome{}, err
		}
		next, err := schema.Load(schema.V1Next)
		if err != nil {
			return Outcome{}, err
		}
		e.alts = []*schema.Set{e.unstable, next}
	}
	e.framing()
	e.envelope()
	e.messages()
	e.protocol()
	e.active()
	e.capabilityTruth()
	e.state()
	e.deep()
	e.vendorExtensions()
	return Outcome{Findings: e.sorted(), Extensions: e.inventory, PromptShapes: e.shapes}, nil
}

type evaluator struct {
	x        *record.Index
	frames   []jsonrpc.Frame
	r        *probe.Result
	set      *schema.Set
	unstable *schema.Set   // fallback for unstable methods when validating against v1
	alts     []*schema.Set // sets that may define what the chosen one does not (unstable, newer)
	opts     Options

	out    []probe.Finding
	counts map[string]int
	unsure bool // method detection is unreliable (set by active)

	inventory *extensions.Inventory
	shapes    *probe.PromptShapes
}

func (e *evaluator) add(id string, seq int64, pointer, message string, evidence any) {
	c, ok := byID[id]
	if !ok {
		panic("conformance: unknown check id " + id)
	}
	e.counts[id]++
	n := e.counts[id]
	if n > maxPerCheck {
		last := &e.out[e.lastIndex(id)]
		last.Message = strings.TrimSuffix(last.Message, fmt.Sprintf(" (and %d more like this)", n-maxPerCheck-1)) +
			fmt.Sprintf(" (and %d more like this)", n-maxPerCheck)
		return
	}
	f := probe.Finding{ID: id, Tier: c.Tier, Title: c.Title, Message: message, Pointer: pointer, Seq: seq, SpecRef: c.SpecRef}
	if evidence != nil {
		f.Evidence, _ = json.Marshal(evidence)
	}
	e.out = append(e.out, f)
}

func (e *evaluator) lastIndex(id string) int {
	for i := len(e.out) - 1; i >= 0; i-- {
		if e.out[i].ID == id {
			return i
		}
	}
	return -1
}

func (e *evaluator) sorted() []probe.Finding {
	out := e.out
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Tier.Rank() != out[j].Tier.Rank() {
			return out[i].Tier.Rank() < out[j].Tier.Rank()
		}
		return out[i].Seq < out[j].Seq
	})
	if out == nil {
		out = []probe.Finding{}
	}
	return out
}

// framing checks each line the agent wrote on stdout.
func (e *evaluator) framing() {
	for _, f := range e.frames {
		if f.Dir != jsonrpc.DirAgent {
			continue
		}
		if f.Unterminated {
			e.add("framing.unterminated", f.Seq, "", "the agent's output ended in the middle of a line", firstBytes(f.Raw))
		}
		switch {
		case f.Oversize:
			e.add("framing.oversize", f.Seq, "", fmt.Sprintf("a %d-byte line exceeded the maximum line size and was skipped", f.Size), firstBytes(f.Raw))
			continue
		case f.Size == 0:
			e.add("framing.empty-line", f.Seq, "", "an empty line; each line must carry one JSON-RPC message", nil)
			continue
		}
		if jsonrpc.HasBOM(f.Raw) {
			e.add("framing.bom", f.Seq, "", "the line starts with a byte order mark (EF BB BF), which JSON text must not", firstBytes(f.Raw))
		}
		if !utf8.Valid(f.Raw) {
			e.add("framing.invalid-utf8", f.Seq, "", "the line is not valid UTF-8; ACP messages are UTF-8 JSON", firstBytes(f.Raw))
		}
		if f.Msg != nil || jsonrpc.HasBOM(f.Raw) {
			continue
		}
		if errors.Is(f.DecodeErr, jsonrpc.ErrNotObject) && bytes.HasPrefix(bytes.TrimLeft(f.Raw, " \t"), []byte("[")) {
			e.add("framing.batch", f.Seq, "", "a JSON array (batch) on one line; ACP v1 defines one message per line", firstBytes(f.Raw))
			continue
		}
		e.add("framing.stdout-non-json", f.Seq, "", "the agent must not write anything but ACP messages on stdout (logs belong on stderr)", firstBytes(f.Raw))
	}
}

// envelope checks the JSON-RPC envelope of each agent message.
func (e *evaluator) envelope() {
	for _, f := range e.frames {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil {
			continue
		}
		m := f.Msg
		if !m.VersionOK() {
			e.add("envelope.jsonrpc-version", f.Seq, "/jsonrpc", fmt.Sprintf(`"jsonrpc" is %s, want "2.0"`, rawOr(m.JSONRPC, "missing")), nil)
		}
		switch m.Kind() {
		case jsonrpc.Invalid:
			e.add("envelope.invalid-message", f.Seq, "", invalidWhy(m), nil)
		case jsonrpc.Response:
			if m.Result != nil && m.Error != nil {
				e.add("envelope.result-and-error", f.Seq, "", "a response carries either result or error, never both", nil)
			}
			reply := e.x.ReplyOf(f.Seq)
			switch {
			case reply.Exchange == nil:
				e.add("envelope.unknown-id", f.Seq, "/id", fmt.Sprintf("response to id %s, which the client never sent", m.ID), nil)
			case !reply.First:
				e.add("envelope.duplicate-response", f.Seq, "/id", fmt.Sprintf("id %s was already answered at line %d", m.ID, reply.Exchange.Answer.Seq), nil)
			default:
				req := reply.Exchange.Request
				if !bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(req.Msg.ID)) {
					e.add("envelope.id-rewritten", f.Seq, "/id", fmt.Sprintf("the request had id %s, the response %s", req.Msg.ID, m.ID), nil)
				}
			}
		case jsonrpc.Request:
			if _, isNotification := e.set.TypeFor(m.Method, schema.HandledByClient, schema.Notification); isNotification {
				e.add("envelope.notification-with-id", f.Seq, "/id", fmt.Sprintf("%s is a notification and must not carry an id (%s)", m.Method, m.ID), nil)
			}
		}
	}
}

func invalidWhy(m *jsonrpc.Message) string {
	switch {
	case m.HasMethod && m.Method == "":
		return `"method" is not a non-empty string`
	case m.ID != nil && m.Result == nil && m.Error == nil:
		return "an id without method, result or error"
	case m.ID == nil && (m.Result != nil || m.Error != nil):
		return "a response (result or error) without an id"
	default:
		return "neither method nor id"
	}
}

// messages validates every agent message against the schema type its method implies.
func (e *evaluator) messages() {
	for _, f := range e.frames {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil {
			continue
		}
		m := f.Msg
		switch m.Kind() {
		case jsonrpc.Response:
			reply := e.x.ReplyOf(f.Seq)
			if reply.Exchange == nil || !reply.First {
				continue
			}
			req := reply.Exchange.Request
			if m.Error != nil {
				e.validate(f, "Error", e.set, m.Error, "/error")
				continue
			}
			if m.Result == nil {
				continue
			}
			set, def := e.typeFor(req.Msg.Method, schema.HandledByAgent, schema.Result)
			if def != "" {
				e.validate(f, def, set, m.Result, "/result")
			}
		case jsonrpc.Request:
			e.agentMethod(f, schema.Params)
		case jsonrpc.Notification:
			e.agentMethod(f, schema.Notification)
		}
	}
}

// agentMethod judges a request or notification from the agent: a known method's params
// against the schema, an unknown one by its name.
func (e *evaluator) agentMethod(f jsonrpc.Frame, part schema.Part) {
	m := f.Msg
	set, def := e.typeFor(m.Method, schema.HandledByClient, part)
	if def == "" {
		if !strings.HasPrefix(m.Method, "_") && !strings.HasPrefix(m.Method, "$/") && !e.knownMethod(m.Method) {
			{
				e.add("protocol.unknown-method", f.Seq, "/method", fmt.Sprintf("%s is not an ACP client method; custom methods must start with _", m.Method), nil)
			}
		}
		return
	}
	if part == schema.Params {
		if gate := clientGate(m.Method); gate != "" {
			e.add("protocol.client-capability", f.Seq, "/method", fmt.Sprintf("%s needs clientCapabilities.%s, which the client did not advertise", m.Method, gate), nil)
		}
	}
	params := m.Params
	if params == nil {
		params = json.RawMessage("null")
	}
	e.validate(f, def, set, params, "/params")
}

// knownMethod reports whether any schema set defines method, in any direction or form.
func (e *evaluator) knownMethod(method string) bool {
	if method == acp.MethodSetModel {
		return true // removed from ACP in 2026-06, still implemented widely (capability.legacy-method)
	}
	for _, set := range append([]*schema.Set{e.set}, e.alts...) {
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

// clientGate names the client capability a client method needs (all of them are off in the
// probe's initialize).
func clientGate(method string) string {
	switch {
	case method == acp.MethodReadTextFile:
		return "fs.readTextFile"
	case method == acp.MethodWriteTextFile:
		return "fs.writeTextFile"
	case strings.HasPrefix(method, "terminal/"):
		return "terminal"
	case method == acp.MethodElicitationCreate:
		return "elicitation"
	}
	return ""
}

// typeFor finds the schema type of a method, falling back to the unstable set for methods
// that are only defined there (session/fork, …).
func (e *evaluator) typeFor(method string, side schema.Side, part schema.Part) (*schema.Set, string) {
	if def, ok := e.set.TypeFor(method, side, part); ok {
		return e.set, def
	}
	if e.unstable != nil {
		if def, ok := e.unstable.TypeFor(method, side, part); ok {
			return e.unstable, def
		}
	}
	return nil, ""
}

// validate reports schema violations and non-spec keys of one value of a message. What only
// the unstable or a newer schema defines is reported as such (INFO), not as a violation.
func (e *evaluator) validate(f jsonrpc.Frame, def string, set *schema.Set, value json.RawMessage, prefix string) {
	violations, err := set.Validate(def, value)
	if err != nil {
		return
	}
	if len(violations) > 0 {
		if alt := e.acceptedBy(set, def, value); alt != "" {
			e.add("schema.unstable", f.Seq, prefix+violations[0].Pointer,
				fmt.Sprintf("%s of %s is valid only in the %s schema, not in %s: %s", part(prefix), methodOf(f, e), alt, set.Name, summarize(violations)), nil)
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
		e.add("schema.invalid", f.Seq, prefix+strict[0].Pointer,
			fmt.Sprintf("%s of %s does not match %s (%s): %s", part(prefix), methodOf(f, e), def, set.Name, summarize(strict)), violationEvidence(strict, prefix))
	}
	if len(tolerated) > 0 {
		e.add("schema.invalid-tolerated", f.Seq, prefix+tolerated[0].Pointer,
			fmt.Sprintf("%s of %s does not match %s, in a field the reference SDKs read leniently: %s", part(prefix), methodOf(f, e), def, summarize(tolerated)), violationEvidence(tolerated, prefix))
	}
	keys, err := set.UnknownKeys(def, value)
	if err != nil || len(keys) == 0 {
		return
	}
	keys = e.legacyVariants(f, def, value, prefix, keys)
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
		knownElsewhere = e.keysKnownElsewhere(set, def, value, others)
	}
	for _, k := range keys {
		where := prefix + k.Pointer + "/" + k.Key
		switch {
		case legacyFields[k.Key] != "" && k.Pointer == "":
			e.add("schema.legacy-field", f.Seq, where, fmt.Sprintf("%s carries the legacy field %s", methodOf(f, e), legacyFields[k.Key]), nil)
		case knownElsewhere[k] != "":
			e.add("schema.unstable", f.Seq, where, fmt.Sprintf("%q at %s is defined only in the %s schema, not in %s", k.Key, orRoot(prefix+k.Pointer), knownElsewhere[k], set.Name), nil)
		default:
			e.add("schema.non-spec-key", f.Seq, where,
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
func (e *evaluator) legacyVariants(f jsonrpc.Frame, def string, value json.RawMessage, prefix string, keys []schema.UnknownKey) []schema.UnknownKey {
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
			e.add("schema.legacy-field", f.Seq, prefix+p+"/"+lv.discriminator, fmt.Sprintf("%s item %d uses %s %q: %s", lv.container, i, lv.discriminator, lv.value, lv.why), nil)
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

// acceptedBy names the first alternative set (unstable, newer) in which value is valid.
func (e *evaluator) acceptedBy(set *schema.Set, def string, value json.RawMessage) string {
	for _, alt := range e.alts {
		if alt == set || !alt.Has(def) {
			continue
		}
		if v, err := alt.Validate(def, value); err == nil && v == nil {
			return alt.Name
		}
	}
	return ""
}

// keysKnownElsewhere maps each unknown key that an alternative set defines to that set's name.
func (e *evaluator) keysKnownElsewhere(set *schema.Set, def string, value json.RawMessage, keys []schema.UnknownKey) map[schema.UnknownKey]string {
	out := map[schema.UnknownKey]string{}
	for _, alt := range e.alts {
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

func part(prefix string) string { return strings.TrimPrefix(prefix, "/") }

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// methodOf names the method a frame belongs to (for a response: its request's method).
func methodOf(f jsonrpc.Frame, e *evaluator) string {
	if f.Msg.Method != "" {
		return f.Msg.Method
	}
	if ex := e.x.ReplyOf(f.Seq).Exchange; ex != nil {
		return "the " + ex.Method() + " response"
	}
	return "the response"
}

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

// protocol checks behaviour visible in any probe: agentInfo, exit after stdin closes, stderr.
func (e *evaluator) protocol() {
	r := e.r
	if initSeq := e.answerSeq(acp.MethodInitialize); initSeq != 0 && r.AgentInfo == nil && string(r.Raw.Initialize) != "null" {
		e.add("protocol.agent-info", initSeq, "/result/agentInfo", "initialize should carry agentInfo {name, version} (it will be required in a future version)", nil)
	}
	if x := r.Exit; x != nil {
		if x.By == "sigterm" || x.By == "sigkill" {
			e.add("protocol.stdin-exit", e.x.EventSeq(record.Exit.Kind), "", fmt.Sprintf("the agent was still running a grace after its stdin closed and had to be stopped with %s", strings.ToUpper(x.By)), nil)
		}
		if x.GroupKilled {
			e.add("protocol.leftover-processes", e.x.EventSeq(record.Exit.Kind), "", "processes of the agent's process group were still running after it ended and were killed", nil)
		}
	}
	if r.StderrBytes > 64<<10 {
		e.add("protocol.stderr-volume", 0, "", fmt.Sprintf("%d bytes of stderr during a handshake-only session", r.StderrBytes), nil)
	}
}

// answerSeq is the seq of the agent's answer to the first client request for method (0 if
// there was no request or no answer).
func (e *evaluator) answerSeq(method string) int64 {
	if ex := e.x.First(method); ex != nil && ex.Answer != nil {
		return ex.Answer.Seq
	}
	return 0
}

// capabilityTruth compares what the agent advertises with what its methods answer.
func (e *evaluator) capabilityTruth() {
	r := e.r
	if string(r.Raw.Initialize) == "null" {
		return
	}
	c := r.Capabilities
	sessionKnown := string(r.Raw.NewSession) != "null"
	pairs := []struct {
		method     string
		advertised bool
		what       string
		judge      bool // whether absence of the advertisement can be judged
	}{
		{acp.MethodSessionLoad, c.LoadSession, "agentCapabilities.loadSession", true},
		{acp.MethodSessionList, c.SessionCapabilities.List, "sessionCapabilities.list", true},
		{acp.MethodSessionResume, c.SessionCapabilities.Resume, "sessionCapabilities.resume", true},
		{acp.MethodSessionClose, c.SessionCapabilities.Close, "sessionCapabilities.close", true},
		{acp.MethodSessionFork, c.SessionCapabilities.Fork, "sessionCapabilities.fork (unstable)", true},
		{acp.MethodSessionDelete, c.SessionCapabilities.Delete, "sessionCapabilities.delete", true},
		{acp.MethodSetConfigOption, len(r.ConfigOptions) > 0, "configOptions in session/new", sessionKnown},
		{acp.MethodSetMode, len(r.Modes) > 0, "modes in session/new", sessionKnown},
	}
	for _, p := range pairs {
		m, ok := r.Methods[p.method]
		if !ok {
			continue
		}
		switch {
		case p.advertised && m.Support == probe.Unsupported:
			e.add("capability.advertised-unsupported", e.methodSeq(p.method), "",
				fmt.Sprintf("the agent advertises %s but answers %s with -32601 method not found", p.what, p.method), nil)
		case !p.advertised && p.judge && m.Support == probe.Supported && !e.unsure:
			e.add("capability.unadvertised-method", e.methodSeq(p.method), "",
				fmt.Sprintf("%s answers (%s) although %s is not advertised; clients will not use it", p.method, supportText(m), p.what), nil)
		}
	}
	if m, ok := r.Methods[acp.MethodSetModel]; ok && m.Support == probe.Supported && !e.unsure {
		e.add("capability.legacy-method", e.methodSeq(acp.MethodSetModel), "",
			fmt.Sprintf("session/set_model answers (%s); it was removed from ACP on 2026-06-01 in favour of the model config option", supportText(m)), nil)
	}
}

func supportText(m probe.MethodSupport) string {
	if m.Code == nil {
		return "with a result"
	}
	return fmt.Sprintf("%d %s", *m.Code, m.Message)
}

// methodSeq is the seq of the answer to the method-detection request for method (the first
// request for it: detection runs before any step or teardown).
func (e *evaluator) methodSeq(method string) int64 {
	if seq := e.answerSeq(method); seq != 0 {
		return seq
	}
	if ex := e.x.First(method); ex != nil {
		return ex.Request.Seq
	}
	return 0
}

// state checks the session state: modes against the mode option, legacy models against the
// model option, current values against options.
func (e *evaluator) state() {
	r := e.r
	seq := e.answerSeq(acp.MethodSessionNew)
	if opt := acp.ModeOption(r.ConfigOptions); opt != nil && len(r.Modes) > 0 {
		var modeIDs []string
		for _, m := range r.Modes {
			modeIDs = append(modeIDs, m.ID)
		}
		values := opt.Values()
		var diffs []string
		if opt.Current() != r.CurrentModeID {
			diffs = append(diffs, fmt.Sprintf("current mode %q vs option %s = %q", r.CurrentModeID, opt.ID, opt.Current()))
		}
		if strings.Join(sortedCopy(modeIDs), ",") != strings.Join(sortedCopy(values), ",") {
			diffs = append(diffs, fmt.Sprintf("modes [%s] vs option values [%s]", strings.Join(modeIDs, ", "), strings.Join(values, ", ")))
		}
		if len(diffs) > 0 {
			e.add("state.modes-config-sync", seq, "/result/modes", "modes and the mode config option should stay in sync: "+strings.Join(diffs, "; "), nil)
		}
	}
	if r.ModelConfig != nil && len(r.LegacyModels) > 0 {
		accepted := map[string]bool{}
		for _, v := range r.ModelConfig.Values {
			accepted[v] = true
		}
		var rejected []string
		for _, m := range r.LegacyModels {
			if !accepted[m.ID] {
				rejected = append(rejected, m.ID)
			}
		}
		if len(rejected) > 0 {
			e.add("state.legacy-models-not-settable", seq, "/result/models/availableModels",
				fmt.Sprintf("%d of %d legacy model ids are not values of config option %s, so set_config_option will not accept them: %s",
					len(rejected), len(r.LegacyModels), r.ModelConfig.ConfigID, strings.Join(rejected, ", ")), rejected)
		}
	}
	for i, o := range r.ConfigOptions {
		if o.Type != "select" || len(o.Options) == 0 {
			continue
		}
		found := false
		for _, v := range o.Values() {
			if v == o.Current() {
				found = true
			}
		}
		if !found {
			e.add("state.config-current-value", seq, fmt.Sprintf("/result/configOptions/%d/currentValue", i),
				fmt.Sprintf("config option %s has current value %s, which is not one of its options", o.ID, o.CurrentValue), nil)
		}
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sort.Strings(c)
	return c
}

// deep judges the second connection of --deep, which asked for an unsupported version.
func (e *evaluator) deep() {
	if e.opts.Deep == nil {
		return
	}
	dx := record.New(e.opts.Deep)
	deep := probe.Derive(dx, e.opts.Catalogue)
	asked := dx.Spawn().ProtocolVersion
	switch {
	case deep.Error != nil && deep.ProtocolVersion == nil:
		e.add("protocol.version-negotiation", 0, "", fmt.Sprintf("asked for protocolVersion %d, the agent did not answer with a version (%s: %s)", asked, deep.Error.Code, deep.Error.Message), nil)
	case deep.ProtocolVersion != nil && *deep.ProtocolVersion == asked:
		e.add("protocol.version-negotiation", 0, "", fmt.Sprintf("asked for protocolVersion %d, which does not exist, the agent echoed it instead of answering the latest version it supports", asked), nil)
	case deep.ProtocolVersion != nil && e.r.ProtocolVersion != nil && *deep.ProtocolVersion != *e.r.ProtocolVersion && *deep.ProtocolVersion < *e.r.ProtocolVersion:
		e.add("protocol.version-negotiation", 0, "", fmt.Sprintf("asked for protocolVersion %d, the agent answered %d, older than the %d it speaks", asked, *deep.ProtocolVersion, *e.r.ProtocolVersion), nil)
	}
}

// firstBytes shows the start of a line, quoted so that invalid bytes are visible.
func firstBytes(raw []byte) string {
	const n = 80
	if len(raw) > n {
		return strconv.Quote(string(raw[:n])) + "…"
	}
	return strconv.Quote(string(raw))
}

func rawOr(raw json.RawMessage, missing string) string {
	if raw == nil {
		return missing
	}
	return string(raw)
}

// Warm loads the v1 schema sets (stable, unstable, newer: unstable fields such as
// sessionCapabilities.fork are common) and compiles the types of the handshake answers, so that a
// later Evaluate finds them ready. It is safe to run concurrently with Evaluate.
func Warm() {
	for _, name := range []string{schema.V1, schema.V1Unstable, schema.V1Next} {
		s, err := schema.Load(name)
		if err != nil {
			return
		}
		for _, def := range []string{"InitializeResponse", "NewSessionResponse", "SessionNotification"} {
			_, _ = s.Validate(def, json.RawMessage(`{}`))
		}
	}
}
