package sentinel_test

import (
	"context"
	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sentinel"
)

// Example starts the three sentinels for one probe run. Their entries go into the
// mcpServers of ACP session/new; every event reaches OnEvent (the probe records it as a
// frame), and Wait tells how far the agent got.
func Example() {
	hub, err := sentinel.Start(sentinel.Options{OnEvent: func(ev record.MCPEvent) {
		// record ev in the session record
	}})
	if err != nil {
		panic(err)
	}
	defer hub.Close()
	for _, s := range hub.Servers() {
		fmt.Println(s.Transport, s.Name)
	}
	// ... send session/new {"cwd": cwd, "mcpServers": hub.Servers()}, then:
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	fmt.Println(hub.Wait(ctx, record.MCPHTTP, record.MCPListed), hub.Milestones(record.MCPHTTP).Has(record.MCPReached))
	// Output:
	// stdio acpprobe_stdio
	// http acpprobe_http
	// sse acpprobe_sse
	// context deadline exceeded false
}
