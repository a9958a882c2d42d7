package extensions

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func msg(seq int64, dir Direction, kind, method, body string) Message {
	return Message{Seq: seq, Direction: dir, Kind: kind, Method: method, Body: json.RawMessage(body)}
}

var known = Known{
	SessionUpdates: []string{"agent_message_chunk", "available_commands_update"},
	ContentTypes:   []string{"text", "image", "audio", "resource_link", "resource"},
	AuthTypes:      []string{"agent", "terminal"},
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
