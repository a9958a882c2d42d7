package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// unknownAt walks a message's params (or result) along ps and lists each discriminator that the
// union at its place does not define, as union.prop=value@pointer.
func unknownAt(t *testing.T, ps *Places, method string, side Side, part Part, params string) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(params), &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(p Place, v any, ptr string)
	walk = func(p Place, v any, ptr string) {
		switch x := v.(type) {
		case map[string]any:
			p, unknown := ps.Object(p, x)
			for _, d := range unknown {
				out = append(out, fmt.Sprintf("%s.%s=%v@%s", d.Union, d.Prop, x[d.Prop], ptr))
			}
			for k, child := range x {
				if k != "_meta" {
					walk(ps.Member(p, k), child, ptr+"/"+k)
				}
			}
		case []any:
			for i, child := range x {
				walk(ps.Item(p), child, fmt.Sprintf("%s/%d", ptr, i))
			}
		}
	}
	walk(ps.Body(method, side, part), v, "")
	slices.Sort(out)
	return out
}

func TestPlaces(t *testing.T) {
	ps := NewPlaces(mustLoad(t, V1), mustLoad(t, V1Next))
	for _, tc := range []struct {
		method string
		side   Side
		part   Part
		params string
		want   string
	}{
		// diff is a ToolCallContent type in a tool call, and no ContentBlock type in a chunk.
		{"session/update", HandledByClient, Notification, `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t",
			"content":[{"type":"diff","path":"/p","newText":""},{"type":"content","content":{"type":"diff"}},{"type":"hologram"}]}}`,
			"ContentBlock.type=diff@/update/content/1/content ToolCallContent.type=hologram@/update/content/2"},
		{"session/update", HandledByClient, Notification, `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"diff"}}}`,
			"ContentBlock.type=diff@/update/content"},
		// notice is defined by the newer set only; nothing under an unknown update is typed.
		{"session/update", HandledByClient, Notification, `{"sessionId":"s","update":{"sessionUpdate":"notice","message":"m"}}`, ""},
		{"session/update", HandledByClient, Notification, `{"sessionId":"s","update":{"sessionUpdate":"weather","content":{"type":"x"}}}`,
			"SessionUpdate.sessionUpdate=weather@/update"},
		// AuthMethod: no type, the default spelt out, a constant, an unknown value.
		{"initialize", HandledByAgent, Result, `{"protocolVersion":1,"authMethods":[{"id":"a","name":"A"},{"id":"b","name":"B","type":"agent"},{"id":"c","name":"C","type":"terminal"},{"id":"d","name":"D","type":"magic"}]}`,
			"AuthMethod.type=magic@/authMethods/3"},
		{"session/prompt", HandledByAgent, Params, `{"sessionId":"s","prompt":[{"type":"text","text":"x"},{"type":"resource","resource":{"uri":"u","text":"t"}},{"type":"hologram"}]}`,
			"ContentBlock.type=hologram@/prompt/2"},
		// No union is there: an unknown key, a free-form value, a method no set defines.
		{"session/update", HandledByClient, Notification, `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","rawInput":{"type":"x"},"extra":{"content":[{"type":"x"}]}}}`, ""},
		{"_vendor/note", HandledByClient, Notification, `{"content":[{"type":"x"}]}`, ""},
	} {
		if got := strings.Join(unknownAt(t, ps, tc.method, tc.side, tc.part, tc.params), " "); got != tc.want {
			t.Errorf("%s %.60s…:\n got %s\nwant %s", tc.method, tc.params, got, tc.want)
		}
	}
}

// memoSize is how many places and memoised steps ps holds.
func (ps *Places) memoSize() int {
	n := len(ps.states) + len(ps.roots) + len(ps.unions)
	for _, st := range ps.states {
		n += len(st.members) + len(st.resolved)
	}
	return n
}

// TestPlacesMemoIsBoundedBySchema attacks the memo's bound: messages with thousands of keys,
// discriminator values and methods no schema defines leave it as a typical message left it, so
// what a walk keeps is bounded by the schemas, not by what an agent sends.
func TestPlacesMemoIsBoundedBySchema(t *testing.T) {
	ps := NewPlaces(mustLoad(t, V1), mustLoad(t, V1Unstable), mustLoad(t, V1Next), mustLoad(t, V1NextUnstable))
	typical := `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c","title":"t","content":[{"type":"diff","path":"/p","newText":""}]}}`
	var before int
	for i := range 3000 {
		if i == 1 { // the first round is the shapes' own: what any message of them keeps
			before = ps.memoSize()
		}
		keys := fmt.Sprintf(`{"sessionId":"s","k%d":{"type":"x"},"update":{"sessionUpdate":"u%d","content":{"type":"t%d"},"k%d":1}}`, i, i, i, i)
		unknownAt(t, ps, "session/update", HandledByClient, Notification, keys)
		unknownAt(t, ps, "session/update", HandledByClient, Notification, strings.Replace(typical, `"type":"diff"`, fmt.Sprintf(`"type":"d%d","k%d":{}`, i, i), 1))
		unknownAt(t, ps, fmt.Sprintf("_vendor/m%d", i), HandledByClient, Notification, typical)
	}
	if after := ps.memoSize(); after != before {
		t.Errorf("the memo grew from %d to %d entries on names no schema defines", before, after)
	}
}
