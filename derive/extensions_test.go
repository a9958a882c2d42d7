package derive

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// variantsOf lists an inventory's unknown variants as field=value@pointer…
func variantsOf(inv *extensions.Inventory) []string {
	var out []string
	for _, v := range inv.UnknownVariants {
		s := v.Field + "=" + v.Value
		for _, w := range v.Where {
			s += "@" + w.Pointer
		}
		out = append(out, s)
	}
	return out
}

// TestVariantsByPosition: a discriminator is an unknown variant only where the union the schema
// puts at its position does not define it. `diff` is a ToolCallContent type (tool_call,
// tool_call_update, request_permission: claude-agent-acp 0.101.0 sent it 616 times in one
// turn run, and every one was reported unknown when one union of ContentBlock types stood for
// every position), but no ContentBlock type; a value at a place no union is (inside _meta,
// under a key the schema does not define, in an error's data, in a vendor method) is no
// variant at all. Values the newer schema defines (notice) are known.
func TestVariantsByPosition(t *testing.T) {
	frames := recordtest.Frames(t, `! spawn {"command":"a","argv":["a"],"cwd":"/","probedAt":"2026-12-01T19:29:57Z","protocolVersion":1}
> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"authMethods":[{"id":"a","name":"A"},{"id":"b","name":"B","type":"agent"},{"id":"t","name":"T","type":"terminal"},{"id":"e","name":"E","type":"env_var","vars":[{"name":"K"}]},{"id":"m","name":"M","type":"magic"}]}}
> {"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"s","prompt":[{"type":"text","text":"x"},{"type":"hologram"},{"type":"diff","path":"/p","newText":""}]}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"Write","kind":"edit","status":"pending","content":[{"type":"diff","path":"/p","oldText":null,"newText":"x"}],"_meta":{"claudeCode":{"toolResponse":{"type":"update"}}}}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","content":[{"type":"diff","path":"/p","oldText":"x","newText":"y"},{"type":"terminal","terminalId":"t1"},{"type":"content","content":{"type":"text","text":"ok"}},{"type":"content","content":{"type":"hologram"}},{"type":"hologram"}]}}}
< {"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c1","content":[{"type":"diff","path":"/p","oldText":null,"newText":"x"}]},"options":[{"optionId":"o","name":"Yes","kind":"allow_once"}]}}
> {"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"o"}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"diff","path":"/p","newText":""}}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"hologram"}}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","message":"hi"}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"weather_report","content":{"type":"hologram"}}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x","_meta":{"v":{"type":"hologram","sessionUpdate":"nope"}}},"extra":{"content":[{"type":"hologram"}],"sessionUpdate":"nope"}}}}
< {"jsonrpc":"2.0","method":"_zed/agent_note","params":{"content":[{"type":"hologram"}],"update":{"sessionUpdate":"nope"}}}
< {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid params","data":{"prompt":[{"type":"ufo"}]}}}
`)
	facts, err := Run(context.Background(), record.Split(frames), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ext, _ := facts.Extensions(context.Background())
	want := []string{
		"authMethod.type=env_var@/result/authMethods/3/type",
		"authMethod.type=magic@/result/authMethods/4/type",
		"content.type=diff@/params/update/content/type",
		"content.type=hologram@/params/update/content/3/content/type@/params/update/content/type",
		"sessionUpdate=weather_report@/params/update/sessionUpdate",
		"toolCallContent.type=hologram@/params/update/content/4/type",
	}
	if got := variantsOf(ext.Inventory); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the agent's variants:\n got %q\nwant %q", got, want)
	}
	if v := ext.Inventory.UnknownVariants[0]; !v.Known || v.Vendor == "" {
		t.Errorf("env_var is catalogued: %+v", v)
	}
	// The report's schema takes a union's own field name.
	facts.Result.Extensions = ext.Inventory
	if b, err := json.Marshal(facts.Result); err != nil || report.ValidateResult(b) != nil {
		t.Errorf("the result does not match result.schema.json: %v %v", err, report.ValidateResult(b))
	}
	// What the client sent: a prompt's hologram and diff are no ContentBlock types.
	want = []string{"content.type=diff@/params/prompt/2/type", "content.type=hologram@/params/prompt/1/type"}
	if got := variantsOf(ext.Client); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the client's variants:\n got %q\nwant %q", got, want)
	}
}
