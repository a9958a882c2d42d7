package conformance

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// flood is a record of n agent notifications after a handshake whose initialize answer has no
// agentInfo (protocol.agent-info: a pass whose cost does not grow with the record).
func flood(n int) []jsonrpc.Frame {
	log := jsonrpc.NewLog()
	log.Event(string(record.Spawn.Kind), []byte(`{"command":"x","argv":["x"],"cwd":"/","protocolVersion":1,"requestTimeoutMs":1000,"startupTimeoutMs":1000}`))
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)})
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1}}`)})
	for i := range n {
		log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: fmt.Appendf(nil,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d"},"_meta":{"zed.dev":{"n":%d}}}}}`, i, i)})
	}
	log.Event(string(record.Done.Kind), nil)
	return log.Frames()
}

// scanning are the passes in a scope whose cost grows with the record.
func scanning(sc scope) []string {
	var out []string
	for _, p := range passes {
		if p.cost != fixed && p.scope&sc != 0 {
			out = append(out, p.name)
		}
	}
	return out
}

// TestEvaluateEndsAtItsDeadline: judging 200k notifications takes about a minute; under a
// deadline, Evaluate returns within a small multiple of it with what it judged, and says which
// passes did not finish. The passes whose cost does not grow with the record still judge it.
// A cancelled context stops it at once.
func TestEvaluateEndsAtItsDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("a large record")
	}
	n := 200_000
	if raceDetector {
		n = 30_000 // still minutes of judging under the race detector
	}
	facts := factsOf(t, record.Split(flood(n)), derive.Options{})
	const deadline = 300 * time.Millisecond

	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	out := Evaluate(ctx, facts)
	took := time.Since(start)
	t.Logf("under a %v deadline: %v, unjudged %v", deadline, took, out.Unjudged)
	if took > 5*deadline {
		t.Errorf("Evaluate took %v under a %v deadline", took, deadline)
	}
	if len(out.Unjudged) == 0 || !slices.Contains(out.Unjudged, "schema") {
		t.Errorf("unjudged %v: the schema pass cannot have judged %d messages in %v", out.Unjudged, n, deadline)
	}
	for _, name := range out.Unjudged {
		if !slices.Contains(scanning(driven), name) {
			t.Errorf("unjudged %q, a pass whose cost does not grow with the record", name)
		}
	}
	if len(out.Findings) == 0 || !slices.ContainsFunc(out.Findings, func(f report.Finding) bool { return f.ID == "protocol.agent-info" }) {
		t.Errorf("findings %v: protocol.agent-info is judged whatever the deadline", out.Findings)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	out = Evaluate(ctx, facts)
	took = time.Since(start)
	t.Logf("cancelled: %v, unjudged %v", took, out.Unjudged)
	if took > deadline {
		t.Errorf("a cancelled Evaluate took %v", took)
	}
	if !slices.Equal(out.Unjudged, scanning(driven)) {
		t.Errorf("cancelled: unjudged %v, want every pass that reads the record frame by frame %v", out.Unjudged, scanning(driven))
	}
}
