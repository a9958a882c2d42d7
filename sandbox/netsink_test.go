//go:build linux

package sandbox_test

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// TestNetSink: with the sink, the agent's lookup is recorded and fails at once (NXDOMAIN), its
// connection to port 443 of an outside address is recorded (and closed), and one to another
// port is refused; nothing leaves the namespace.
func TestNetSink(t *testing.T) {
	if c := sandbox.Available(); !c.Net {
		t.Skipf("net level unavailable here: %s", c.NetUnavailable)
	}
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir()), Net: true, NetSink: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.ServeNetwork(ctx) }()
	start := time.Now()
	rep := runIn(t, s, "sink")
	took := time.Since(start)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	// A second command (check's extra connections) gets namespaces of its own, without the
	// sink: its lookup and connections fail at once, and nothing is added to what was seen.
	start = time.Now()
	again := runIn(t, s, "sink")
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the second command took %v: its lookups and connections must fail at once", took)
	}
	if again.Net["lookup"] == "" || again.Net["443"] == "connected" {
		t.Errorf("the second command: lookup %q, 443 %q; want both to fail (no sink)", again.Net["lookup"], again.Net["443"])
	}
	n := s.Network()
	if !n.Observed {
		t.Fatalf("network %+v: not observed", n)
	}
	if !strings.Contains(rep.Net["lookup"], "no such host") {
		t.Errorf("lookup: %q, want no such host (NXDOMAIN)", rep.Net["lookup"])
	}
	if rep.Net["443"] != "connected" || !strings.Contains(rep.Net["8080"], "connection refused") {
		t.Errorf("connections: 443 %q, 8080 %q; want the sink to take 443 and the kernel to refuse 8080", rep.Net["443"], rep.Net["8080"])
	}
	if len(n.Lookups) == 0 || n.Lookups[0] != "acpprobe-sink-test.example" {
		t.Errorf("lookups %q", n.Lookups)
	}
	if want := []record.Connect{{Host: "192.0.2.7", Port: 443, Count: 1}}; !reflect.DeepEqual(n.Connects, want) {
		t.Errorf("connects %+v, want %+v", n.Connects, want)
	}
	if took > 5*time.Second {
		t.Errorf("the agent took %v: its lookups and connections must fail at once", took)
	}
}
