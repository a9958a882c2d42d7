package turn

import (
	"context"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/sentinel"
)

// At the net level the agent's 127.0.0.1 is its own: the emulator and the sentinels, which
// listen on the caller's loopback, are reached there through listeners the sandbox opens at
// the same ports inside the agent's network namespace and hands over once the agent started
// (sandbox.Options.Ports, Sandbox.Listeners). The addresses the agent is given (the profile's
// base URL, the mcpServers entries, the stdio sentinel's report channel) stay as they are.
// The network sink records anything else the agent tries.

// netOptions are the sandbox options o asks for, with, at the net level, the network sink on
// and, as its only Ports, those of the emulator and the sentinels (in the order of
// sentinel.Transports) to open inside; see serveInside.
func netOptions(o sandbox.Options, srv *emulator.Server, hub *sentinel.Hub) sandbox.Options {
	if !o.Net {
		return o
	}
	o.NetSink = true
	o.Ports = []int{srv.Port()}
	if hub != nil {
		ports := hub.Ports()
		for _, t := range record.MCPTransports {
			o.Ports = append(o.Ports, ports[t])
		}
	}
	return o
}

// serveInside, at the net level, serves the emulator and the sentinels on the listeners box
// hands over once the agent has started (the ports netOptions set),
// until the returned function is called: once the run is over, before the servers close.
// Elsewhere it does nothing. A helper that fails before the handoff sends nothing; the agent
// then did not start, and the probe's record says so.
func serveInside(ctx context.Context, box *sandbox.Sandbox, srv *emulator.Server, hub *sentinel.Hub) (stop func()) {
	if box.Level() != record.LevelNet {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lns, err := box.Listeners(ctx)
		if err != nil {
			return
		}
		srv.Serve(lns[0])
		if hub != nil {
			for i, t := range record.MCPTransports {
				_ = hub.Serve(t, lns[1+i]) // ErrClosed: the mcp scenario is already over
			}
		}
	}()
	return func() { cancel(); <-done }
}
