package extensions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// nested is a message whose params nest depth objects, each with a type and a sessionUpdate
// that the union at its place does not define, under "prompt" (recursive, the places of
// recursive: the walk checks them at every level).
func nested(depth int) Message {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":`)
	for range depth {
		b.WriteString(`{"type":"x","sessionUpdate":"y","prompt":`)
	}
	b.WriteString(`{}`)
	b.WriteString(strings.Repeat(`}`, depth))
	b.WriteString(`}`)
	return Message{Seq: 1, Direction: DirectionAgentToClient, Kind: "notification", Method: "session/update", Body: json.RawMessage(b.String())}
}

// recursive types every object under session/update's params, and under its prompt (member or
// item), as a place with a ContentBlock type and a SessionUpdate discriminator.
var recursive = testSchema{
	bodies: map[string]Place{"session/update": 1},
	places: []testPlace{{}, {members: map[string]Place{"prompt": 1}, item: 1, discs: map[Discriminator][]string{
		{"ContentBlock", "type"}: {"text"}, {"SessionUpdate", "sessionUpdate"}: {"agent_message_chunk"}}}},
}

// flat is a message with as many of the same objects side by side, one level deep.
func flat(n int) Message {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":{"prompt":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(`,`)
		}
		b.WriteString(`{"type":"x","sessionUpdate":"y","prompt":{}}`)
	}
	b.WriteString(`]}}`)
	return Message{Seq: 1, Direction: DirectionAgentToClient, Kind: "notification", Method: "session/update", Body: json.RawMessage(b.String())}
}

// TestTakeIsLinearInDepth: taking a message nested 9000 deep costs about what taking the same
// objects side by side costs (measured in the same run, side by side: no absolute threshold).
// Building each level's JSON pointer anew made the deep one quadratic: 65× the flat one.
func TestTakeIsLinearInDepth(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	const n = 9000 // encoding/json nests at most 10000 deep
	deep, wide := nested(n), flat(n)
	if len(deep.Body) > len(wide.Body) {
		t.Fatalf("the deep message (%d bytes) should not be larger than the flat one (%d)", len(deep.Body), len(wide.Body))
	}
	c := Default()
	// The walk typed every level.
	inv := c.Take(slices.Values([]Message{deep}), recursive)
	var counts []string
	for _, v := range inv.UnknownVariants {
		counts = append(counts, fmt.Sprintf("%s=%s %d", v.Field, v.Value, v.Count))
	}
	if want := fmt.Sprintf("content.type=x %d, sessionUpdate=y %d", n, n); strings.Join(counts, ", ") != want {
		t.Fatalf("deep: %s, want %s", strings.Join(counts, ", "), want)
	}
	// The fastest of five runs each, alternating: a busy machine slows some runs, not the
	// shape of the cost.
	fastest := func(m Message) time.Duration {
		start := time.Now()
		c.Take(slices.Values([]Message{m}), recursive)
		return time.Since(start)
	}
	var d, w time.Duration
	for i := range 5 {
		if x := fastest(deep); i == 0 || x < d {
			d = x
		}
		if x := fastest(wide); i == 0 || x < w {
			w = x
		}
	}
	ratio := float64(d) / float64(w)
	t.Logf("deep %v, flat %v: ratio %.2f", d, w, ratio)
	if ratio > 3 {
		t.Errorf("a message nested %d deep takes %.1f× the time of the same objects side by side", n, ratio)
	}
}

// TestDeepPointersAreCut: a place nested deeper than maxPointer bytes of pointer is kept with
// its pointer cut, so a message nested n deep with a name at every level gives an inventory
// proportional to the message, not n².
func TestDeepPointersAreCut(t *testing.T) {
	const n = 3000
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","method":"session/update","params":`)
	for i := range n {
		fmt.Fprintf(&b, `{"_meta":{"k%d":1},"a":`, i)
	}
	b.WriteString(`{}` + strings.Repeat(`}`, n) + `}`)
	inv := Default().Take(slices.Values([]Message{{Seq: 1, Direction: DirectionAgentToClient, Kind: "notification", Method: "session/update", Body: json.RawMessage(b.String())}}), known)
	if len(inv.MetaKeys) != n {
		t.Fatalf("%d keys, want %d", len(inv.MetaKeys), n)
	}
	total := 0
	for _, k := range inv.MetaKeys {
		p := k.Where[0].Pointer
		total += len(p)
		if len(p) > maxPointer+len("/…") || (len(p) > maxPointer && !strings.HasSuffix(p, "/…")) {
			t.Fatalf("%s: pointer of %d bytes: %.40s…", k.Key, len(p), p)
		}
	}
	if k := inv.MetaKeys[0]; k.Key != "k0" || k.Where[0].Pointer != "/params/_meta/k0" {
		t.Errorf("the first key: %s at %s", k.Key, k.Where[0].Pointer)
	}
	if total > 20*b.Len() {
		t.Errorf("%d bytes of pointers for a %d-byte message", total, b.Len())
	}
}
