package acpprobe_test

import (
	"context"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestAnalyzeInterruptible (issue 11, F1): Ctrl-C or the end of --timeout ends the analysis of
// a large record promptly, deriving included: cancelled part way, Analyze returns in a small
// fraction of the time deriving the whole record takes, and the result says its totals are
// partial. (Before, deriving ignored the context: ~1 s for 200k frames whatever happened.)
func TestAnalyzeInterruptible(t *testing.T) {
	if testing.Short() {
		t.Skip("a large record")
	}
	n := 200_000
	if raceDetector {
		n = 30_000
	}
	frames := floodFrames(n)
	if _, err := acpprobe.Analyze(context.Background(), floodFrames(1), acpprobe.AnalyzeOptions{}); err != nil {
		t.Fatal(err) // and the schemas are compiled
	}
	// The baseline: indexing and deriving the whole record, uncancelled.
	start := time.Now()
	full := derive.Connection(context.Background(), record.New(frames), nil)
	derive := time.Since(start)
	if full.Notifications.Total != n || full.Coverage != nil {
		t.Fatalf("uncancelled: %d notifications, coverage %+v", full.Notifications.Total, full.Coverage)
	}

	// Cancelled before it starts. Each cancelled run is timed three times and the fastest
	// counts: what is measured is the work left after the cancel, not the other tests'
	// load on two cores (under it, one run in ten took a third of the baseline).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var r *report.Result
	took := time.Duration(1<<63 - 1)
	for range 3 {
		start = time.Now()
		var err error
		r, err = acpprobe.Analyze(ctx, frames, acpprobe.AnalyzeOptions{})
		took = min(took, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d notifications: deriving %v; a cancelled Analyze %v", n, derive, took)
	if took > derive/4 {
		t.Errorf("a cancelled Analyze took %v, deriving the whole record %v: want under a quarter of it", took, derive)
	}
	if r.Coverage == nil || !r.Coverage.Partial || r.Notifications.Total >= n {
		t.Errorf("cancelled: coverage %+v, %d notifications: the totals must say they are partial", r.Coverage, r.Notifications.Total)
	}
	if r.AgentInfo == nil || r.AgentInfo.Name != "a" {
		t.Errorf("cancelled: agentInfo %+v: the handshake's facts are derived whatever the deadline", r.AgentInfo)
	}
	validResult(t, r)

	// Cancelled part way: the latency from the cancel to the return, against the whole.
	latency := time.Duration(1<<63 - 1)
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		cancelled := make(chan time.Time, 1)
		time.AfterFunc(derive/3, func() { cancelled <- time.Now(); cancel() })
		_, _ = acpprobe.Analyze(ctx, frames, acpprobe.AnalyzeOptions{})
		latency = min(latency, time.Since(<-cancelled))
	}
	t.Logf("cancelled after %v: returned %v later", derive/3, latency)
	if latency > derive/4 {
		t.Errorf("Analyze returned %v after its cancel, deriving the whole record takes %v: want under a quarter of it", latency, derive)
	}
}
