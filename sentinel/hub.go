package sentinel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/record"
)

// maxEvents bounds the events a Hub keeps and reports; past it one KindDropped event is
// reported and the rest only advance the milestones.
const maxEvents = 4096

// ErrClosed is returned by Wait when the Hub is closed before the stage is seen.
var ErrClosed = errors.New("sentinel: hub closed")

// Options configure a Hub.
type Options struct {
	// Command is the program the agent runs as the stdio sentinel; it must end in a call to
	// Main. Default: os.Executable(), acpprobe itself. Made absolute.
	Command string
	// Args come before the sentinel's own flags. Default: ["mcp-sentinel"], the hidden
	// subcommand.
	Args []string
	// OnEvent, if set, receives every Event in the order recorded, from the Hub's
	// goroutines, one at a time, and never after Close has returned. It must not block for
	// long nor call Close.
	OnEvent func(record.MCPEvent)
}

// Hub serves the three sentinels of one probe run and records what reaches them. It is
// safe for concurrent use.
type Hub struct {
	opts    Options
	nonce   string
	check   string // the value of CheckEnv and CheckHeader
	markers map[record.MCPTransport]string
	stdio   *reports
	http    map[record.MCPTransport]*httpSentinel

	emit sync.Mutex // serialises record: milestones, events and callbacks stay in order

	mu       sync.Mutex
	events   []record.MCPEvent
	dropped  bool
	miles    map[record.MCPTransport]*record.MCPMilestones
	changed  chan struct{} // closed and replaced at every event (and at Close)
	closed   bool
	closeErr error
}

// Start serves the three sentinels: the stdio sentinels' report channel, the streamable
// HTTP and the SSE servers, each on its own ephemeral port of 127.0.0.1. Close ends them.
func Start(opts Options) (*Hub, error) {
	if opts.Command == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sentinel: cannot find acpprobe's own path: %w", err)
		}
		opts.Command = exe
	}
	cmd, err := filepath.Abs(opts.Command)
	if err != nil {
		return nil, fmt.Errorf("sentinel: %w", err)
	}
	opts.Command = cmd
	if opts.Args == nil {
		opts.Args = []string{"mcp-sentinel"}
	}
	h := &Hub{
		opts:    opts,
		nonce:   randomHex(4),
		check:   randomHex(16),
		markers: map[record.MCPTransport]string{},
		http:    map[record.MCPTransport]*httpSentinel{},
		miles:   map[record.MCPTransport]*record.MCPMilestones{},
		changed: make(chan struct{}),
	}
	for _, t := range record.MCPTransports {
		h.markers[t] = "acpprobe-mark-" + string(t) + "-" + randomHex(8)
		h.miles[t] = &record.MCPMilestones{}
	}
	if h.stdio, err = startReports(h); err != nil {
		return nil, err
	}
	for _, t := range []record.MCPTransport{record.MCPHTTP, record.MCPSSE} {
		s, err := startHTTP(h, t)
		if err != nil {
			h.Close()
			return nil, err
		}
		h.http[t] = s
	}
	return h, nil
}

// Ports returns the TCP ports of 127.0.0.1 the sentinels listen on, by transport: the
// streamable HTTP and SSE servers, and for Stdio the report channel its sentinel processes dial
// back to. A caller whose agent has a loopback of its own (a net-level sandbox) opens the
// same ports there and gives the listeners to Serve.
func (h *Hub) Ports() map[record.MCPTransport]int {
	return map[record.MCPTransport]int{
		record.MCPStdio: h.stdio.ln.Addr().(*net.TCPAddr).Port,
		record.MCPHTTP:  h.http[record.MCPHTTP].ln.Addr().(*net.TCPAddr).Port,
		record.MCPSSE:   h.http[record.MCPSSE].ln.Addr().(*net.TCPAddr).Port,
	}
}

// Serve also serves ln as the listener of t's sentinel (for Stdio, its report channel), until
// Close, exactly as the sentinel's own: the same token paths and the same recording. It is for
// a listener handed over from an agent's own loopback at the port Ports gives, where the
// addresses of Server then reach the sentinels too. Once the Hub is closed it closes ln and
// returns ErrClosed.
func (h *Hub) Serve(t record.MCPTransport, ln net.Listener) error {
	h.mu.Lock()
	defer h.mu.Unlock() // Close waits for what was started here: it marks the Hub closed first
	if h.closed {
		ln.Close()
		return ErrClosed
	}
	if t == record.MCPStdio {
		return h.stdio.serveListener(ln)
	}
	s := h.http[t]
	if s == nil {
		ln.Close()
		return fmt.Errorf("sentinel: no transport %q", t)
	}
	s.extra.Add(1)
	go func() {
		defer s.extra.Done()
		_ = s.srv.Serve(ln) // closes ln when it returns, at Close
	}()
	return nil
}

// Tool returns the name of the tool the sentinel of t exposes.
func (h *Hub) Tool(t record.MCPTransport) string { return ToolName(t, h.nonce) }

// Marker returns the per-run marker in the text the tool of t returns (see ResultText).
func (h *Hub) Marker(t record.MCPTransport) string { return h.markers[t] }

// Server returns the mcpServers entry that offers the sentinel of t to an agent.
func (h *Hub) Server(t record.MCPTransport) MCPServer {
	s := MCPServer{Transport: t, Name: ServerNamePrefix + string(t)}
	switch t {
	case record.MCPStdio:
		s.Command = h.opts.Command
		s.Args = append(slices.Clone(h.opts.Args),
			"--report", h.stdio.addr(), "--token", h.stdio.token,
			"--tool", h.Tool(t), "--marker", h.Marker(t), "--check", h.check)
		s.Env = []NameValue{{Name: CheckEnv, Value: h.check}}
	case record.MCPHTTP, record.MCPSSE:
		s.URL = h.http[t].url()
		s.Headers = []NameValue{{Name: CheckHeader, Value: h.check}}
	}
	return s
}

// Setup says what the sentinels of this Hub are: per transport, the server's name, its one
// tool and the marker in the tool's result. The probe records it, so that the milestones
// can be derived again from the record alone (record.MCPMilestones.Advance).
func (h *Hub) Setup() record.MCPSetup {
	var s record.MCPSetup
	for _, t := range record.MCPTransports {
		s.Sentinels = append(s.Sentinels, record.MCPSentinel{Transport: t, Name: ServerNamePrefix + string(t), Tool: h.Tool(t), Marker: h.Marker(t)})
	}
	return s
}

// Servers returns the entries of all three sentinels, in the order of Transports.
func (h *Hub) Servers() []MCPServer {
	var out []MCPServer
	for _, t := range record.MCPTransports {
		out = append(out, h.Server(t))
	}
	return out
}

// Events returns a copy of the events recorded so far.
func (h *Hub) Events() []record.MCPEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// Milestones returns how far agents got with the sentinel of t so far.
func (h *Hub) Milestones(t record.MCPTransport) record.MCPMilestones {
	h.mu.Lock()
	defer h.mu.Unlock()
	if m := h.miles[t]; m != nil {
		return *m
	}
	return record.MCPMilestones{}
}

// Wait blocks until the sentinel of t has seen stage, ctx ends (its error) or the Hub is
// closed (ErrClosed).
func (h *Hub) Wait(ctx context.Context, t record.MCPTransport, stage record.MCPStage) error {
	for {
		h.mu.Lock()
		seen := h.miles[t] != nil && h.miles[t].Has(stage)
		changed, closed := h.changed, h.closed
		h.mu.Unlock()
		switch {
		case seen:
			return nil
		case closed:
			return ErrClosed
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// Close stops the sentinels: the HTTP servers and their MCP sessions, the report channel
// and with it every stdio sentinel still running (they end when it goes). When Close
// returns, no goroutine of the Hub is left and OnEvent is not called again. It is safe to
// call more than once.
func (h *Hub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return h.closeErr
	}
	h.closed = true
	close(h.changed)
	h.mu.Unlock()

	var errs []error
	for _, t := range []record.MCPTransport{record.MCPHTTP, record.MCPSSE} {
		if s := h.http[t]; s != nil {
			errs = append(errs, s.close())
		}
	}
	if h.stdio != nil {
		errs = append(errs, h.stdio.close())
	}
	err := errors.Join(errs...)
	h.mu.Lock()
	h.closeErr = err
	h.mu.Unlock()
	return err
}

// record stamps ev, advances the milestones, keeps ev and hands it to OnEvent.
func (h *Hub) record(ev record.MCPEvent) {
	h.emit.Lock()
	defer h.emit.Unlock()
	ev.Time = time.Now()
	h.mu.Lock()
	h.advance(ev)
	report := true
	switch {
	case len(h.events) < maxEvents:
		h.events = append(h.events, ev)
	case !h.dropped:
		h.dropped = true
		ev = record.MCPEvent{Transport: ev.Transport, Kind: record.MCPDropped, Time: ev.Time,
			Error: fmt.Sprintf("more than %d events: later ones are not kept", maxEvents)}
		h.events = append(h.events, ev)
	default:
		report = false
	}
	if !h.closed {
		close(h.changed)
		h.changed = make(chan struct{})
	}
	h.mu.Unlock()
	if report && h.opts.OnEvent != nil {
		h.opts.OnEvent(ev)
	}
}

// advance updates the milestones of ev's transport; h.mu is held.
func (h *Hub) advance(ev record.MCPEvent) {
	if m := h.miles[ev.Transport]; m != nil {
		m.Advance(ev, h.Tool(ev.Transport))
	}
}

// peer returns the address of a connection's peer and whether it is loopback.
func peer(addr string) (string, bool) {
	ap, err := netip.ParseAddrPort(addr)
	return clip(addr), err == nil && ap.Addr().IsLoopback()
}

// listenLoopback listens on an ephemeral TCP port of 127.0.0.1.
func listenLoopback() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("sentinel: cannot listen on loopback: %w", err)
	}
	return ln, nil
}
