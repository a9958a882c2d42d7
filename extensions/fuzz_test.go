package extensions

import (
	"encoding/json"
	"slices"
	"testing"
)

// FuzzTake classifies arbitrary messages: it never panics, every key it reports was seen at
// least once, and the rules never name something that is not in the inventory.
func FuzzTake(f *testing.F) {
	f.Add([]byte(`{"result":{"_meta":{"codebuddy.ai/runtimeSessionBindingV2":{},"zed.dev":{"debugMode":true},"x":{"y":1}},"authMethods":[{"type":"env_var"}]}}`), true)
	f.Add([]byte(`{"method":"_codebuddy.ai/admitControl","params":{"_meta":{"codebuddy.ai/authSession":"s","api-key":1}}}`), false)
	f.Add([]byte(`{"params":{"update":{"sessionUpdate":"weird","content":{"type":"hologram"}}}}`), true)
	c := Default()
	f.Fuzz(func(t *testing.T, body []byte, fromAgent bool) {
		dir, kind := DirectionClientToAgent, "request"
		if fromAgent {
			dir, kind = DirectionAgentToClient, "notification"
		}
		var probe struct{ Method string }
		_ = json.Unmarshal(body, &probe)
		inv := c.Take(slices.Values([]Message{{Seq: 1, Direction: dir, Kind: kind, Method: probe.Method, Body: body}}), known)
		names := map[string]bool{}
		for _, k := range inv.MetaKeys {
			if k.Count < 1 || len(k.Where) == 0 {
				t.Fatalf("key without a sighting: %+v", k)
			}
			names[k.Key] = true
		}
		for _, m := range inv.Methods {
			names[m.Name] = true
		}
		for _, is := range append(inv.AgentIssues(false), inv.ClientIssues()...) {
			if !names[is.Name] {
				t.Fatalf("issue about %q, which is not in the inventory", is.Name)
			}
		}
	})
}
