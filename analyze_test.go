package acpprobe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// floodFrames is the record of a session in which the agent sent n notifications.
func floodFrames(n int) []jsonrpc.Frame {
	log := jsonrpc.NewLog()
	log.Event(string(record.Spawn.Kind), []byte(`{"command":"x","argv":["x"],"cwd":"/","probedAt":"2026-11-30T12:00:00Z","protocolVersion":1,"requestTimeoutMs":1000,"startupTimeoutMs":1000}`))
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`)})
	log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"}}}`)})
	for i := range n {
		log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: fmt.Appendf(nil,
			`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d"}}}}`, i)})
	}
	log.Event(string(record.Done.Kind), nil)
	return log.Frames()
}

// TestAnalyzeWithinItsDeadline: the analysis of a large record under a deadline returns within
// a small multiple of it, with coverage saying which passes did not judge the whole record
// and whether the totals are partial; a cancelled context stops the judging at once.
func TestAnalyzeWithinItsDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("a large record")
	}
	n := 200_000
	if raceDetector {
		n = 30_000
	}
	frames := floodFrames(n)
	// What Analyze derives whatever the deadline (the handshake, the events; the walks over
	// the record stop at it).
	start := time.Now()
	derive.Connection(context.Background(), record.New(record.Split(frames).Main), nil)
	deriving := time.Since(start)
	if _, err := acpprobe.Analyze(context.Background(), floodFrames(1), acpprobe.AnalyzeOptions{}); err != nil {
		t.Fatal(err) // and the schemas are compiled
	}

	const deadline = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start = time.Now()
	r, err := acpprobe.Analyze(ctx, frames, acpprobe.AnalyzeOptions{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d notifications: deriving %v; analysis under a %v deadline %v", n, deriving, deadline, took)
	if took > 2*deriving+5*deadline {
		t.Errorf("Analyze took %v under a %v deadline (deriving alone: %v)", took, deadline, deriving)
	}
	c := r.Coverage
	if c == nil || len(c.Unjudged) == 0 || !strings.Contains(c.Note, "schema") || !strings.Contains(c.Note, "time") {
		t.Fatalf("coverage %+v: it must say which passes did not judge the whole record", c)
	}
	// Deriving stops at the deadline too (TestAnalyzeInterruptible): the totals are whole, or
	// say they are not.
	if whole := r.Notifications.Total == n; whole == c.Partial {
		t.Errorf("notifications %d of %d, coverage.partial %v", r.Notifications.Total, n, c.Partial)
	}
	validResult(t, r)

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	start = time.Now()
	r, err = acpprobe.Analyze(ctx, frames, acpprobe.AnalyzeOptions{})
	took = time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cancelled: %v", took)
	if took > 2*deriving+deadline || r.Coverage == nil || len(r.Coverage.Unjudged) == 0 {
		t.Errorf("a cancelled Analyze took %v (deriving alone: %v), coverage %+v", took, deriving, r.Coverage)
	}
}

// validResult checks a result against report/result.schema.json.
func validResult(t *testing.T, r *report.Result) {
	t.Helper()
	b, _ := json.Marshal(r)
	if err := report.ValidateResult(b); err != nil {
		t.Errorf("the result does not match result.schema.json: %v", err)
	}
}

// TestAnalysisBudget: Run gives the analysis what is left of the total budget, never less than
// a second.
func TestAnalysisBudget(t *testing.T) {
	for _, c := range []struct {
		timeout, spent, want time.Duration
	}{
		{30 * time.Second, 10 * time.Second, 20 * time.Second},
		{30 * time.Second, 29500 * time.Millisecond, time.Second},
		{10 * time.Second, 40 * time.Second, time.Second},
		{0, 5 * time.Second, probe.DefaultTimeout - 5*time.Second},
	} {
		if got := acpprobe.AnalysisBudget(c.timeout, c.spent); got != c.want {
			t.Errorf("AnalysisBudget(%v, %v) = %v, want %v", c.timeout, c.spent, got, c.want)
		}
	}
}
