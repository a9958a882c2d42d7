package extensions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func msg(seq int64, dir Direction, kind, method, body string) Message {
	return Message{Seq: seq, Direction: dir, Kind: kind, Method: method, Body: json.RawMessage(body)}
}

// testSchema types positions by a table of places, each naming its members' places, its
// items' place and the discriminators checked there; branch choice is left out (every member
// of a place has one place). The real typing is schema.Places, tested with the pinned schemas
// in derive.
type testSchema struct {
	bodies map[string]Place // method -> the place of its params or result
	places []testPlace      // by Place; 0 is untyped
}

type testPlace struct {
	members map[string]Place
	item    Place
	discs   map[Discriminator][]string // -> the values defined
}

func (s testSchema) Body(m Message) Place { return s.bodies[m.Method] }

func (s testSchema) Object(p Place, obj map[string]any) (Place, []Discriminator) {
	var out []Discriminator
	for d, values := range s.places[p].discs {
		if v, ok := obj[d.Prop].(string); ok && !slices.Contains(values, v) {
			out = append(out, d)
		}
	}
	return p, out
}

func (s testSchema) Member(p Place, key string) Place { return s.places[p].members[key] }
func (s testSchema) Item(p Place) Place               { return s.places[p].item }

// known types initialize's authMethods[] and session/update's update and its content, with
// some of the protocol's values.
var known = testSchema{
	bodies: map[string]Place{"initialize": 1, "session/update": 3},
	places: []testPlace{
		{},
		{members: map[string]Place{"authMethods": 2}},
		{item: 6, members: map[string]Place{}},
		{members: map[string]Place{"update": 4}},
		{members: map[string]Place{"content": 5}, discs: map[Discriminator][]string{{"SessionUpdate", "sessionUpdate"}: {"agent_message_chunk", "available_commands_update"}}},
		{discs: map[Discriminator][]string{{"ContentBlock", "type"}: {"text", "image", "audio", "resource_link", "resource"}}},
		{discs: map[Discriminator][]string{{"AuthMethod", "type"}: {"agent", "terminal"}}},
	},
}

func TestInventory(t *testing.T) {
	c := Default()
	inv := c.Take(slices.Values([]Message{
		msg(1, DirectionAgentToClient, "response", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,
			"agentCapabilities":{"_meta":{"claudeCode":{"promptQueueing":true}}},
			"authMethods":[{"id":"k","name":"K","type":"env_var","vars":[{"name":"K"}]},{"id":"g","name":"G","_meta":{"api-key":{"provider":"google"}}},{"id":"x","name":"X","type":"magic"}],
			"_meta":{"codebuddy.ai/runtimeAdmission":{},"codebuddy.ai/brandNewKey":1,"zed.dev":{"debugMode":true},"myvendor":{"a":1}}}}`),
		msg(2, DirectionAgentToClient, "notification", "_codebuddy.ai/checkpoint", `{"jsonrpc":"2.0","method":"_codebuddy.ai/checkpoint","params":{}}`),
		msg(3, DirectionAgentToClient, "notification", "_codebuddy.ai/checkpoint", `{"jsonrpc":"2.0","method":"_codebuddy.ai/checkpoint","params":{}}`),
		msg(4, DirectionAgentToClient, "notification", "session/update", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",
			"update":{"sessionUpdate":"weather_report","content":{"type":"hologram","text":"x"}},"_meta":{"codebuddy.ai/runtimeSessionBindingV2":{"owner":"o"}}}}`),
		msg(5, DirectionClientToAgent, "request", "_codebuddy.ai/admitControl", `{"jsonrpc":"2.0","id":9,"method":"_codebuddy.ai/admitControl","params":{"_meta":{"codebuddy.ai/requestId":"r","codebuddy.ai/authSession":"s"}}}`),
	}), known)
	keys := map[string]SeenKey{}
	for _, k := range inv.MetaKeys {
		keys[k.Key] = k
	}
	for key, want := range map[string]struct {
		form   Form
		vendor string
		known  bool
		class  Class
	}{
		"claudeCode/promptQueueing":            {FormNested, "claudeCode", true, ClassPublic},
		"api-key":                              {FormBare, "gemini", true, ClassPublic},
		"codebuddy.ai/runtimeAdmission":        {FormFlat, "codebuddy.ai", true, ClassPublic},
		"codebuddy.ai/brandNewKey":             {FormFlat, "codebuddy.ai", false, ""},
		"zed.dev/debugMode":                    {FormNested, "zed.dev", true, ClassPublic},
		"myvendor":                             {FormBare, "", false, ""},
		"codebuddy.ai/runtimeSessionBindingV2": {FormFlat, "codebuddy.ai", true, ClassPrivate},
		"codebuddy.ai/authSession":             {FormFlat, "codebuddy.ai", true, ClassPrivate},
	} {
		k, ok := keys[key]
		if !ok {
			t.Errorf("key %s not inventoried (have %v)", key, keys)
			continue
		}
		if k.Form != want.form || k.Vendor != want.vendor || k.Known != want.known || k.Class != want.class {
			t.Errorf("%s = %+v, want %+v", key, k, want)
		}
	}
	if len(inv.Methods) != 2 || inv.Methods[1].Name != "_codebuddy.ai/checkpoint" || inv.Methods[1].Count != 2 || !inv.Methods[1].Known || inv.Methods[1].ObservedKind != KindNotification {
		t.Errorf("methods = %+v", inv.Methods)
	}
	var variants []string
	for _, v := range inv.UnknownVariants {
		variants = append(variants, v.Field+"="+v.Value+map[bool]string{true: " (catalogued)", false: ""}[v.Known])
	}
	if got := strings.Join(variants, ", "); got != "authMethod.type=env_var (catalogued), authMethod.type=magic, content.type=hologram, sessionUpdate=weather_report" {
		t.Errorf("variants = %s", got)
	}

	var agent []string
	for _, is := range inv.AgentIssues(false) {
		agent = append(agent, is.Rule+" "+is.Name)
	}
	if got := strings.Join(agent, ", "); got != "unknown-key codebuddy.ai/brandNewKey, private-key codebuddy.ai/runtimeSessionBindingV2" {
		t.Errorf("agent issues = %s", got)
	}
	if got := inv.AgentIssues(true); len(got) != 1 {
		t.Errorf("on a private plane only the unknown key remains: %+v", got)
	}
	var client []string
	for _, is := range inv.ClientIssues() {
		client = append(client, is.Rule+" "+is.Name)
	}
	if got := strings.Join(client, ", "); got != "client-private-key codebuddy.ai/authSession, client-private-call _codebuddy.ai/admitControl" {
		t.Errorf("client issues = %s", got)
	}
	if !inv.SentPrivate(DirectionClientToAgent) || inv.SentPrivate(DirectionBoth) {
		t.Error("SentPrivate")
	}
}

// Rule 6.3: correlation ids on session/prompt are fine from a client; others are not.
func TestClientCorrelationKeys(t *testing.T) {
	inv := Default().Take(slices.Values([]Message{
		msg(1, DirectionClientToAgent, "request", "session/prompt", `{"params":{"_meta":{"codebuddy.ai/traceparent":"00-x","codebuddy.ai/requestId":"r"}}}`),
		msg(2, DirectionClientToAgent, "request", "session/new", `{"params":{"_meta":{"codebuddy.ai/traceId":"t"}}}`),
	}), known)
	issues := inv.ClientIssues()
	if len(issues) != 1 || issues[0].Rule != RuleDirection || issues[0].Name != "codebuddy.ai/traceId" {
		t.Errorf("issues = %+v", issues)
	}
}

func TestMetadataDemand(t *testing.T) {
	c := Default()
	for msg, want := range map[string]string{
		"ACP Session request is missing sessionAdmissionV2 metadata": "codebuddy.ai/sessionAdmissionV2",
		"missing _meta['codebuddy.ai/sessionAdmissionV2'] metadata":  "codebuddy.ai/sessionAdmissionV2",
		"request requires authSession metadata":                      "codebuddy.ai/authSession",
		"missing widget metadata":                                    "widget",
	} {
		if got, ok := c.MetadataDemand(msg); !ok || got != want {
			t.Errorf("MetadataDemand(%q) = %q, %v; want %q", msg, got, ok, want)
		}
	}
	for _, msg := range []string{"Authentication required", "missing field `type`", "Internal error"} {
		if got, ok := c.MetadataDemand(msg); ok {
			t.Errorf("MetadataDemand(%q) = %q", msg, got)
		}
	}
	creds := strings.Join(c.CredentialKeys(), ",")
	for _, k := range []string{"authSession", "accessToken", "runtimeTransportCredential", "runtimeBindingToken"} {
		if !strings.Contains(creds, k) {
			t.Errorf("credential keys %s lack %s", creds, k)
		}
	}
}

// A rule about one side points at where that side sent the name, even when the other side sent
// it first and more often.
func TestIssuesPointAtTheirSide(t *testing.T) {
	var msgs []Message
	for i := int64(1); i <= 7; i++ { // the agent sends a private key seven times first
		msgs = append(msgs, msg(i, DirectionAgentToClient, "notification", "session/update", `{"params":{"_meta":{"codebuddy.ai/authSession":"a"}}}`))
	}
	msgs = append(msgs, msg(8, DirectionClientToAgent, "request", "session/new", `{"params":{"_meta":{"codebuddy.ai/authSession":"c"}}}`))
	inv := Default().Take(slices.Values(msgs), known)
	issues := inv.ClientIssues()
	if len(issues) != 1 || issues[0].Rule != RuleClientPrivateKey || issues[0].Seq != 8 {
		t.Errorf("client issues = %+v, want the client's own sighting (seq 8)", issues)
	}
}

// Without a schema nothing is typed: keys and methods are inventoried, no value is a variant.
// A discriminator of a union the inventory has no name for is named by its union.
func TestVariantsNeedASchema(t *testing.T) {
	msgs := []Message{
		msg(1, DirectionAgentToClient, "notification", "session/update", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"weather_report","content":{"type":"hologram"}},"_meta":{"zed.dev":{"debugMode":true}}}}`),
	}
	inv := Default().Take(slices.Values(msgs), nil)
	if len(inv.UnknownVariants) != 0 || len(inv.MetaKeys) != 1 {
		t.Errorf("without a schema: %d variants (want none), %d keys (want 1)", len(inv.UnknownVariants), len(inv.MetaKeys))
	}
	for d, want := range map[Discriminator]string{
		{"SessionUpdate", "sessionUpdate"}: "sessionUpdate", {"ContentBlock", "type"}: "content.type", {"AuthMethod", "type"}: "authMethod.type",
		{"ToolCallContent", "type"}: "toolCallContent.type", {"", "kind"}: "kind",
	} {
		if got := field(d); got != want {
			t.Errorf("field(%v) = %q, want %q", d, got, want)
		}
	}
}

// An answer that echoes a variant the asker sent, at a place typed alike, does not count it.
func TestEchoedVariant(t *testing.T) {
	s := testSchema{bodies: map[string]Place{"session/prompt": 1}, places: []testPlace{{},
		{members: map[string]Place{"prompt": 2}}, {item: 3},
		{discs: map[Discriminator][]string{{"ContentBlock", "type"}: {"text"}}}}}
	own := Default().Take(slices.Values([]Message{msg(1, DirectionClientToAgent, "request", "session/prompt", `{"id":1,"method":"session/prompt","params":{"prompt":[{"type":"hologram"}]}}`)}), s)
	answer := msg(2, DirectionAgentToClient, "response", "session/prompt", `{"id":1,"result":{"prompt":[{"type":"hologram"},{"type":"ufo"}]}}`)
	answer.Echoed = own
	inv := Default().Take(slices.Values([]Message{answer}), s)
	if len(own.UnknownVariants) != 1 || len(inv.UnknownVariants) != 1 || inv.UnknownVariants[0].Value != "ufo" {
		t.Errorf("the client's %+v; the answer's %+v (want ufo alone)", own.UnknownVariants, inv.UnknownVariants)
	}
}

// A namespace with a dot is found as nested objects ({"jetbrains": {"air": {…}}}), the rest of
// the outer object kept as a bare key; a vendor's underscored flat keys and its catalogued
// methods named without the '_' are named; an uncatalogued method without the '_' is not
// inventoried (the conformance checks report it).
func TestNestedNamespacesAndUnprefixedMethods(t *testing.T) {
	inv := Default().Take(slices.Values([]Message{
		msg(1, DirectionAgentToClient, "response", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"jetbrains":{"air":{"version":1,"goal":{"version":1}},"other":1},"steering":{"supported":true}}}}`),
		msg(2, DirectionAgentToClient, "notification", "session/update", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"_meta":{"_claude/model":"m","jetbrains":{"air":5}}}}}`),
		msg(3, DirectionAgentToClient, "notification", "qwen/notify/session/model-update", `{"jsonrpc":"2.0","method":"qwen/notify/session/model-update","params":{}}`),
		msg(4, DirectionAgentToClient, "notification", "foo/bar", `{"jsonrpc":"2.0","method":"foo/bar","params":{"_meta":{"session":{"x":1}}}}`),
	}), nil)
	got := inventoryLines(inv, func(k SeenKey) string {
		return fmt.Sprintf("%s %s %s %v %d %s", k.Key, k.Form, k.Vendor, k.Known, k.Count, k.Where[0].Pointer)
	})
	want := []string{
		"_claude/model flat claude true 1 /params/update/_meta/_claude~1model",
		"jetbrains bare  false 2 /result/_meta/jetbrains",
		"jetbrains.air/goal nested jetbrains.air true 1 /result/_meta/jetbrains/air/goal",
		"jetbrains.air/version nested jetbrains.air true 1 /result/_meta/jetbrains/air/version",
		"session bare  false 1 /params/_meta/session", // session's keys are flat only
		"steering bare jetbrains true 1 /result/_meta/steering",
		"method qwen/notify/session/model-update qwen true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("inventory:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The inventory says, per vendor, how much of its catalogued surface the session used: a key
// seen in two forms counts once, an unknown name under its namespace and a private key are
// named.
func TestVendorUses(t *testing.T) {
	c := Default()
	inv := c.Take(slices.Values([]Message{
		msg(1, DirectionAgentToClient, "notification", "session/update", `{"method":"session/update","params":{"_meta":{"codebuddy.ai/requestId":"r","codebuddy.ai":{"requestId":"r","timestamp":1},"codebuddy.ai/noSuchKey":1}}}`),
		msg(2, DirectionAgentToClient, "response", "session/new", `{"result":{"_meta":{"codebuddy.ai/runtimeSessionBindingV2":{}}}}`),
		msg(3, DirectionAgentToClient, "notification", "_codebuddy.ai/command", `{"method":"_codebuddy.ai/command","params":{}}`),
	}), nil)
	v, ok := c.Vendor("codebuddy.ai")
	if !ok {
		t.Fatal("no codebuddy.ai vendor")
	}
	var keys, methods int
	for _, k := range c.MetaKeys() {
		if k.Vendor == v.Namespace {
			keys++
		}
	}
	for _, m := range c.Methods() {
		if m.Vendor == v.Namespace {
			methods++
		}
	}
	if len(inv.Vendors) != 1 {
		t.Fatalf("vendors %+v, want codebuddy.ai alone", inv.Vendors)
	}
	u := inv.Vendors[0]
	want := VendorUse{Vendor: "codebuddy.ai", KeysSeen: 3, KeysCatalogued: keys, MethodsSeen: 1, MethodsCatalogued: methods,
		Unknown: []string{"codebuddy.ai/noSuchKey"}, Private: []string{"codebuddy.ai/runtimeSessionBindingV2"}}
	if fmt.Sprint(u) != fmt.Sprint(want) {
		t.Errorf("use %+v\nwant %+v", u, want)
	}
	if keys != 142 {
		t.Errorf("codebuddy.ai has %d catalogued keys, want the page's 142", keys)
	}
}

// What the sources of claude-agent-acp and codex-acp document (their docs/*.md and the shipped
// bundles the catalogue cites), on the wire as those documents show it: every key and method
// is known, and is its vendor's.
func TestDocumentedAdapterSurface(t *testing.T) {
	inv := Default().Take(slices.Values([]Message{
		msg(1, DirectionAgentToClient, "response", "initialize", `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"_meta":{"rateLimits":{}}},"_meta":{"claudeCode":{"rewindSession":{"modes":["files"]}},"systemPrompt":{"version":1,"append":true}}}}`),
		msg(2, DirectionAgentToClient, "request", "session/request_permission", `{"jsonrpc":"2.0","id":2,"method":"session/request_permission","params":{"_meta":{"permission":{"version":1,"title":"t"},"is_mcp_tool_approval":true}}}`),
		msg(3, DirectionAgentToClient, "notification", "session/update", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"_meta":{"codex":{"goal":null}}}}}`),
		msg(4, DirectionAgentToClient, "request", "elicitation/create", `{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{"_meta":{"codex":{"autoResolutionMs":1000}}}}`),
		msg(5, DirectionAgentToClient, "response", "session/prompt", `{"jsonrpc":"2.0","id":4,"result":{"_meta":{"codex":{"turnConfiguration":{"version":1}}}}}`),
		msg(6, DirectionAgentToClient, "notification", "session/update", `{"jsonrpc":"2.0","method":"session/update","params":{"update":{"content":[{"type":"diff","_meta":{"diff_git_patch":{"text":"p"},"kind":"update"}}]}}}`),
		msg(7, DirectionAgentToClient, "notification", "_account/rate_limits_update", `{"jsonrpc":"2.0","method":"_account/rate_limits_update","params":{"rateLimits":{}}}`),
		msg(8, DirectionClientToAgent, "request", "_session/rewind_points", `{"jsonrpc":"2.0","id":5,"method":"_session/rewind_points","params":{"sessionId":"s"}}`),
		msg(9, DirectionClientToAgent, "request", "initialize", `{"jsonrpc":"2.0","id":6,"method":"initialize","params":{"clientCapabilities":{"_meta":{"continueOnReject":true}}}}`),
		msg(10, DirectionClientToAgent, "request", "session/new", `{"jsonrpc":"2.0","id":7,"method":"session/new","params":{"_meta":{"mcpStartupAwaitTimeoutMs":3000}}}`),
		msg(11, DirectionAgentToClient, "request", "_session/async_question/request", `{"jsonrpc":"2.0","id":8,"method":"_session/async_question/request","params":{"sessionId":"s","questions":[]}}`),
		msg(12, DirectionAgentToClient, "notification", "_session/queue/changed", `{"jsonrpc":"2.0","method":"_session/queue/changed","params":{"sessionId":"s","_meta":{"queue":{}}}}`),
		msg(13, DirectionAgentToClient, "notification", "_session/list_changed", `{"jsonrpc":"2.0","method":"_session/list_changed","params":{"cwd":"/w","_meta":{"mcp_output_delta":{"data":"d"}}}}`),
	}), nil)
	got := inventoryLines(inv, func(k SeenKey) string { return fmt.Sprintf("%s %s %v", k.Key, k.Vendor, k.Known) })
	want := []string{
		"claudeCode/rewindSession claudeCode true",
		"codex/autoResolutionMs codex true",
		"codex/goal codex true",
		"codex/turnConfiguration codex true",
		"continueOnReject codex-acp true",
		"diff_git_patch codex-acp true",
		"is_mcp_tool_approval codex-acp true",
		"kind diff true",
		"mcpStartupAwaitTimeoutMs codex-acp true",
		"mcp_output_delta jetbrains true",
		"permission claude-agent-acp true",
		"queue codex-acp true",
		"rateLimits codex-acp true",
		"systemPrompt codex-acp true",
		"method _account/rate_limits_update account true",
		"method _session/async_question/request session true",
		"method _session/list_changed session true",
		"method _session/queue/changed session true",
		"method _session/rewind_points session true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("inventory:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// inventoryLines is one line per key of inv, as key formats it, then one per method: its name,
// vendor and whether it is known.
func inventoryLines(inv *Inventory, key func(SeenKey) string) []string {
	var got []string
	for _, k := range inv.MetaKeys {
		got = append(got, key(k))
	}
	for _, m := range inv.Methods {
		got = append(got, fmt.Sprintf("method %s %s %v", m.Name, m.Vendor, m.Known))
	}
	return got
}
