package conformance

import (
	"context"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// seen lists an inventory's names with the directions and lines they were seen in.
func seen(inv *extensions.Inventory) []string {
	var out []string
	where := func(ws []extensions.Sighting) string {
		var b strings.Builder
		for _, w := range ws {
			b.WriteString(" " + string(w.Direction) + "@" + w.Pointer)
		}
		return b.String()
	}
	for _, k := range inv.MetaKeys {
		out = append(out, "key "+k.Key+where(k.Where))
	}
	for _, m := range inv.Methods {
		out = append(out, "method "+m.Name+where(m.Where))
	}
	for _, v := range inv.UnknownVariants {
		out = append(out, "variant "+v.Field+"="+v.Value+where(v.Where))
	}
	return out
}

// TestOwnTrafficIsNotAnExtension: in a session acpprobe drove, what acpprobe sent (its
// _acpprobe/… methods, the prompt shapes' content types) and agent answers that merely echo it
// are not vendor extensions; the agent's own extensions are. In a tap, the editor's are —
// unless the editor is acpprobe itself, probing through the tap.
func TestOwnTrafficIsNotAnExtension(t *testing.T) {
	const frames = `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"},"_meta":{"zed.dev":{"debugMode":true}}}}
! step {"name":"extension-methods"}
> {"jsonrpc":"2.0","method":"_acpprobe/unknown-notification","params":{}}
> {"jsonrpc":"2.0","id":2,"method":"_acpprobe/unknown-method","params":{}}
< {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}}
! step {"name":"prompt-shapes"}
> {"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"prompt":[{"type":"acpprobe_unknown"}],"sessionId":"acpprobe-nonexistent-session"}}
< {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"Invalid params","data":{"prompt":[{"type":"acpprobe_unknown"}],"content":[{"type":"hologram"}]}}}
< {"jsonrpc":"2.0","method":"_zed/agent_note","params":{"content":[{"type":"acpprobe_unknown"}]}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"acpprobe_unknown"}}}}
! teardown {"step":"ladder"}
! eof
! exit {"code":0,"signal":"","afterStdinCloseMs":1,"by":"stdin"}
! done
`
	driven := recordtest.Frames(t, frames)
	// The agent's own update carrying acpprobe_unknown as a content block is a variant; what an
	// error's data or a vendor method's params hold is at no place the protocol puts a union.
	want := []string{
		"key zed.dev/debugMode agent-to-client@/result/_meta/zed.dev/debugMode",
		"method _zed/agent_note agent-to-client@/method",
		"variant content.type=acpprobe_unknown agent-to-client@/params/update/content/type",
	}
	if got := seen(inventoryOf(t, driven)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("driven:\n got %q\nwant %q", got, want)
	}

	want = []string{
		"key zed.dev/debugMode agent-to-client@/result/_meta/zed.dev/debugMode",
		"method _acpprobe/unknown-method client-to-agent@/method",
		"method _acpprobe/unknown-notification client-to-agent@/method",
		"method _zed/agent_note agent-to-client@/method",
		"variant content.type=acpprobe_unknown client-to-agent@/params/prompt/0/type agent-to-client@/params/update/content/type",
	}
	if got := seen(inventoryOf(t, asTap(t, driven))); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tap:\n got %q\nwant %q", got, want)
	}

	// acpprobe through a tap: its initialize names it.
	probed := asTap(t, driven)
	for i, f := range probed {
		if f.Dir == jsonrpc.DirClient {
			probed[i] = jsonrpc.Frame{Seq: f.Seq, Dir: f.Dir, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientInfo":{"name":"acpprobe","version":"0.1.0"}}}`)}
			probed[i].Msg, _ = jsonrpc.Decode(probed[i].Raw)
			break
		}
	}
	want = []string{
		"key zed.dev/debugMode agent-to-client@/result/_meta/zed.dev/debugMode",
		"method _zed/agent_note agent-to-client@/method",
		"variant content.type=acpprobe_unknown agent-to-client@/params/update/content/type",
	}
	if got := seen(inventoryOf(t, probed)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("acpprobe through a tap:\n got %q\nwant %q", got, want)
	}
}

// inventoryOf is the extension inventory of a record, as Analyze reports it.
func inventoryOf(t *testing.T, frames []jsonrpc.Frame) *extensions.Inventory {
	t.Helper()
	facts := factsOf(t, record.Split(frames), derive.Options{})
	Evaluate(context.Background(), facts)
	return facts.Inventory()
}
