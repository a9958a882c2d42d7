package sentinel

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The report channel: a stdio sentinel dials the Hub's loopback listener, sends a hello with
// the run's token, then one JSON Event per line for every message it reads on stdin. The
// Hub sends nothing; the sentinel ends when the channel does.
const (
	maxReporters  = 32               // stdio sentinels reporting at once
	maxReportLine = 64 << 10         // one report line (an Event: bounded strings, ≤ 16 KiB arguments)
	helloTimeout  = 10 * time.Second // for the hello after connecting
	reportTimeout = 10 * time.Second // for writing one report
	dialTimeout   = 5 * time.Second
	stopGrace     = 2 * time.Second // for the MCP session to end once the channel has
)

// hello opens a report channel.
type hello struct {
	Token      string `json:"token"`
	Pid        int    `json:"pid"`
	ConfigSeen bool   `json:"configSeen"`
}

// reports is the Hub's end of the report channel.
type reports struct {
	hub   *Hub
	token string
	ln    net.Listener

	mu      sync.Mutex
	closing bool
	extra   []net.Listener // given to Hub.Serve
	conns   map[net.Conn]bool
	wg      sync.WaitGroup
}

func startReports(h *Hub) (*reports, error) {
	ln, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	r := &reports{hub: h, token: randomHex(16), ln: ln, conns: map[net.Conn]bool{}}
	r.wg.Add(1)
	go r.accept(ln)
	return r, nil
}

// serveListener also accepts report channels on ln, until close.
func (r *reports) serveListener(ln net.Listener) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		ln.Close()
		return ErrClosed
	}
	r.extra = append(r.extra, ln)
	r.wg.Add(1)
	go r.accept(ln)
	return nil
}

func (r *reports) addr() string { return r.ln.Addr().String() }

func (r *reports) accept(ln net.Listener) {
	defer r.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed
		}
		r.mu.Lock()
		full := len(r.conns) >= maxReporters
		if r.closing || full {
			r.mu.Unlock()
			c.Close()
			if full {
				remote, loopback := peer(c.RemoteAddr().String())
				r.hub.record(record.MCPEvent{Transport: record.MCPStdio, Kind: record.MCPRejected, Remote: remote, Loopback: loopback,
					Error: fmt.Sprintf("more than %d stdio sentinels at once", maxReporters)})
			}
			continue
		}
		r.conns[c] = true
		r.wg.Add(1)
		r.mu.Unlock()
		go r.serve(c)
	}
}

// serve reads one sentinel's reports until its channel ends.
func (r *reports) serve(c net.Conn) {
	defer r.wg.Done()
	defer func() {
		r.mu.Lock()
		delete(r.conns, c)
		r.mu.Unlock()
		c.Close()
	}()
	remote, loopback := peer(c.RemoteAddr().String())
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(helloTimeout))
	line, _, err := readLine(br, maxReportLine)
	var h hello
	if err != nil || json.Unmarshal(line, &h) != nil || subtle.ConstantTimeCompare([]byte(h.Token), []byte(r.token)) != 1 {
		r.hub.record(record.MCPEvent{Transport: record.MCPStdio, Kind: record.MCPRejected, Remote: remote, Loopback: loopback,
			Error: "report channel opened without the run's token"})
		return
	}
	c.SetReadDeadline(time.Time{})
	r.hub.record(record.MCPEvent{Transport: record.MCPStdio, Kind: record.MCPSpawned, Remote: remote, Loopback: loopback, Pid: h.Pid, ConfigSeen: &h.ConfigSeen})
	for {
		line, _, err := readLine(br, maxReportLine)
		if err != nil {
			break
		}
		var ev record.MCPEvent
		if json.Unmarshal(line, &ev) != nil {
			break
		}
		switch ev.Kind {
		case record.MCPMessage, record.MCPResponse, record.MCPInvalid, record.MCPOversize:
			ev.Transport, ev.Remote, ev.Loopback, ev.Pid, ev.ConfigSeen = record.MCPStdio, remote, loopback, h.Pid, nil
			r.hub.record(ev)
		}
	}
	r.hub.record(record.MCPEvent{Transport: record.MCPStdio, Kind: record.MCPDisconnected, Remote: remote, Loopback: loopback, Pid: h.Pid})
}

// close ends every report channel, and so every stdio sentinel still running.
func (r *reports) close() error {
	r.mu.Lock()
	r.closing = true
	for c := range r.conns {
		c.Close()
	}
	for _, ln := range r.extra {
		ln.Close()
	}
	r.mu.Unlock()
	err := r.ln.Close()
	r.wg.Wait()
	return err
}

// Main runs a stdio sentinel: the hidden subcommand `acpprobe mcp-sentinel`, which the
// agent starts from the mcpServers entry of Hub.Server(Stdio). It serves MCP on stdin and
// stdout, reports every message it reads to the Hub over the loopback channel named by its
// flags, and returns its exit status when stdin ends (0), the channel ends or cannot be
// opened (1), or on bad flags (2). It never runs without the channel, so it cannot outlive
// the probe. After it returns the caller should exit: a read of stdin may still be pending.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("acpprobe mcp-sentinel", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	report := fs.String("report", "", "loopback address of the probe's report channel")
	token := fs.String("token", "", "the run's token for the report channel")
	tool := fs.String("tool", "", "name of the one tool")
	marker := fs.String("marker", "", "marker in the tool's result")
	check := fs.String("check", "", "expected value of "+CheckEnv)
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(stderr, "acpprobe mcp-sentinel:", err)
		return 2
	}
	ap, err := netip.ParseAddrPort(*report)
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "acpprobe mcp-sentinel: unexpected arguments %q\n", fs.Args())
		return 2
	case err != nil || !ap.Addr().IsLoopback():
		fmt.Fprintf(stderr, "acpprobe mcp-sentinel: --report must be a loopback address and port, not %q\n", *report)
		return 2
	case *token == "" || *tool == "" || *marker == "":
		fmt.Fprintln(stderr, "acpprobe mcp-sentinel: --token, --tool and --marker are required (this command is started by acpprobe)")
		return 2
	}
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", ap.String())
	if err != nil {
		fmt.Fprintln(stderr, "acpprobe mcp-sentinel: cannot reach the probe:", err)
		return 1
	}
	defer conn.Close()
	rep := &reporter{conn: conn}
	hi, _ := json.Marshal(hello{Token: *token, Pid: os.Getpid(), ConfigSeen: *check != "" && os.Getenv(CheckEnv) == *check})
	if err := rep.write(append(hi, '\n')); err != nil {
		fmt.Fprintln(stderr, "acpprobe mcp-sentinel: cannot report to the probe:", err)
		return 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the Hub sends nothing: any end of the channel ends the sentinel
		buf := make([]byte, 512)
		for {
			if _, err := conn.Read(buf); err != nil {
				cancel()
				return
			}
		}
	}()
	in := &stdinFilter{br: bufio.NewReader(stdin), report: rep.send, maxLine: maxMessage, maxTotal: maxStdinTotal}
	transport := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopCloser{stdout}, MaxLineLength: maxMessage + 2}
	done := make(chan struct{})
	go func() {
		newServer(record.MCPStdio, *tool, *marker).Run(ctx, transport)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		// The SDK's shutdown may wait on a write to a stdout nobody reads: the sentinel
		// must end with the channel all the same.
		select {
		case <-done:
		case <-time.After(stopGrace):
		}
	}
	if ctx.Err() != nil {
		return 1
	}
	return 0
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// reporter writes a stdio sentinel's reports.
type reporter struct{ conn net.Conn }

func (r *reporter) write(b []byte) error {
	r.conn.SetWriteDeadline(time.Now().Add(reportTimeout))
	_, err := r.conn.Write(b)
	return err
}

func (r *reporter) send(events []record.MCPEvent) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one line per event
	for _, ev := range events {
		if err := enc.Encode(ev); err != nil {
			return err
		}
	}
	return r.write(buf.Bytes())
}

// errInputLimit ends a stdio sentinel that was sent more than maxTotal bytes.
var errInputLimit = errors.New("stdin input limit reached")

// stdinFilter sits between stdin and the SDK: it reads bounded lines, reports every one, and
// passes on only the well-formed JSON-RPC messages (the SDK would end the session on
// anything else). Oversize lines are skipped; past maxTotal bytes the input ends.
type stdinFilter struct {
	br       *bufio.Reader
	report   func([]record.MCPEvent) error
	maxLine  int
	maxTotal int
	total    int
	pending  []byte
}

func (f *stdinFilter) Read(p []byte) (int, error) {
	for len(f.pending) == 0 {
		line, size, err := readLine(f.br, f.maxLine)
		f.total += size
		if f.total > f.maxTotal {
			f.report([]record.MCPEvent{{Kind: record.MCPInvalid, Size: f.total, Error: fmt.Sprintf("more than %d bytes on stdin: the sentinel stops", f.maxTotal)}})
			return 0, errInputLimit
		}
		switch {
		case errors.Is(err, errLineTooLong):
			if err := f.report([]record.MCPEvent{{Kind: record.MCPOversize, Size: size}}); err != nil {
				return 0, err
			}
			continue
		case err != nil:
			return 0, err
		case len(bytes.TrimSpace(line)) == 0:
			continue
		}
		events, ok := observe(line)
		if err := f.report(events); err != nil {
			return 0, err
		}
		if ok {
			f.pending = append(line, '\n')
		}
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}
