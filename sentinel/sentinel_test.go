package sentinel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sentinel"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary re-executes itself as the stdio sentinel: Hub's default command is
// os.Executable() with the argument "mcp-sentinel", as acpprobe's hidden subcommand.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "mcp-sentinel" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := sentinel.Main(ctx, os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// recorder collects a Hub's events through OnEvent and lets a test wait for one.
type recorder struct {
	mu     sync.Mutex
	events []record.MCPEvent
	added  chan struct{}
}

func newRecorder() *recorder { return &recorder{added: make(chan struct{}, 1)} }

func (r *recorder) add(ev record.MCPEvent) {
	r.mu.Lock()
	r.events = append(r.events, ev)
	r.mu.Unlock()
	select {
	case r.added <- struct{}{}:
	default:
	}
}

func (r *recorder) all() []record.MCPEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// await returns the first event matching ok, failing the test after a deadline.
func (r *recorder) await(t *testing.T, what string, ok func(record.MCPEvent) bool) record.MCPEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		for _, ev := range r.all() {
			if ok(ev) {
				return ev
			}
		}
		select {
		case <-r.added:
		case <-deadline:
			t.Fatalf("no %s event; have %s", what, dump(r.all()))
		}
	}
}

func dump(events []record.MCPEvent) string {
	b, _ := json.MarshalIndent(events, "", " ")
	return string(b)
}

func startHub(t *testing.T) (*sentinel.Hub, *recorder) {
	t.Helper()
	rec := newRecorder()
	h, err := sentinel.Start(sentinel.Options{OnEvent: rec.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, rec
}

// headerTransport adds the headers of an mcpServers entry to every request, as an agent that
// honours them does.
type headerTransport struct{ headers []sentinel.NameValue }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, nv := range h.headers {
		r.Header.Set(nv.Name, nv.Value)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// sentinelCommand is the stdio entry as an agent runs it; GORACE keeps a -race child from
// sleeping at exit.
func sentinelCommand(ctx context.Context, s sentinel.MCPServer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.Command, s.Args...)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	for _, nv := range s.Env {
		cmd.Env = append(cmd.Env, nv.Name+"="+nv.Value)
	}
	cmd.Stderr = os.Stderr
	return cmd
}

// transportFor is how the SDK's own client reaches the sentinel of entry s.
func transportFor(ctx context.Context, s sentinel.MCPServer) mcp.Transport {
	client := &http.Client{Transport: headerTransport{s.Headers}}
	switch s.Transport {
	case record.MCPHTTP:
		return &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: client}
	case record.MCPSSE:
		return &mcp.SSEClientTransport{Endpoint: s.URL, HTTPClient: client}
	}
	return &mcp.CommandTransport{Command: sentinelCommand(ctx, s)}
}

// TestEachTransport drives every sentinel with the SDK's own client — handshake, list,
// call — and checks the tool, its result, the recorded events and the milestones. The
// handshake is MCP's initialize (protocol 2025-11-25) or, with the SDK's latest protocol,
// server/discover where the transport supports it (stdio; the SDK's stateful HTTP and its
// SSE fall back to initialize).
func TestEachTransport(t *testing.T) {
	for _, tr := range record.MCPTransports {
		for _, version := range []string{"2025-11-25", ""} {
			name := string(tr) + "/" + version
			if version == "" {
				name = string(tr) + "/latest"
			}
			t.Run(name, func(t *testing.T) { testTransport(t, tr, version) })
		}
	}
}

func testTransport(t *testing.T, tr record.MCPTransport, version string) {
	h, rec := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	entry := h.Server(tr)
	client := mcp.NewClient(&mcp.Implementation{Name: "probe-test-" + string(tr), Version: "9.9"}, nil)
	session, err := client.Connect(ctx, transportFor(ctx, entry), &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) != 1 || tools.Tools[0].Name != h.Tool(tr) {
		t.Fatalf("tools/list = %+v, want exactly %s", tools.Tools, h.Tool(tr))
	}
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: h.Tool(tr), Arguments: map[string]any{"why": "test"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.IsError {
		t.Fatalf("tools/call = %+v", res)
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Text != sentinel.ResultText(tr, h.Marker(tr)) || !strings.Contains(text.Text, h.Marker(tr)) {
		t.Fatalf("tools/call content = %#v, want the text with marker %s", res.Content[0], h.Marker(tr))
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "other_tool"}); err == nil {
		t.Error("a call of another tool succeeded")
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}

	m := h.Milestones(tr)
	for _, st := range []record.MCPStage{record.MCPReached, record.MCPConnected, record.MCPListed, record.MCPCalled} {
		if !m.Has(st) {
			t.Errorf("milestone %s not seen: %+v", st, m)
		}
	}
	if m.Connected.Before(m.Reached) || m.Listed.Before(m.Connected) || m.Called.Before(m.Listed) {
		t.Errorf("milestones out of order: %+v", m)
	}
	if m.ClientInfo == nil || m.ClientInfo.Name != "probe-test-"+string(tr) || m.ClientInfo.Version != "9.9" {
		t.Errorf("client info = %+v", m.ClientInfo)
	}
	if m.ConfigSeen == nil || !*m.ConfigSeen {
		t.Errorf("configSeen = %v, want true (env/header passed)", m.ConfigSeen)
	}

	handshake := rec.await(t, "handshake", func(ev record.MCPEvent) bool { return ev.Transport == tr && ev.ProtocolVersion != "" })
	if handshake.ClientInfo == nil || handshake.Kind != record.MCPMessage || string(handshake.ID) == "" {
		t.Errorf("handshake event = %+v", handshake)
	}
	if (tr == record.MCPStdio) != (handshake.Status == 0) || handshake.Status >= 400 {
		t.Errorf("handshake answered with HTTP status %d", handshake.Status)
	}
	if version != "" {
		if handshake.Method != "initialize" || handshake.ProtocolVersion != version {
			t.Errorf("handshake event = %+v, want initialize %s", handshake, version)
		}
		rec.await(t, "initialized notification", func(ev record.MCPEvent) bool {
			return ev.Transport == tr && ev.Method == "notifications/initialized" && ev.ID == nil
		})
	} else if tr == record.MCPStdio && handshake.Method != "server/discover" {
		t.Errorf("handshake event = %+v, want server/discover", handshake)
	}
	call := rec.await(t, "tools/call", func(ev record.MCPEvent) bool {
		return ev.Transport == tr && ev.Method == "tools/call" && ev.Tool == h.Tool(tr)
	})
	if string(call.Arguments) != `{"why":"test"}` {
		t.Errorf("tools/call arguments = %s", call.Arguments)
	}
	rec.await(t, "call of the other tool", func(ev record.MCPEvent) bool { return ev.Transport == tr && ev.Tool == "other_tool" })
	if tr == record.MCPStdio {
		spawned := rec.await(t, "spawned", func(ev record.MCPEvent) bool { return ev.Kind == record.MCPSpawned })
		rec.await(t, "disconnected", func(ev record.MCPEvent) bool {
			return ev.Kind == record.MCPDisconnected && ev.Pid == spawned.Pid
		})
		if spawned.Pid == os.Getpid() || spawned.Pid <= 0 {
			t.Errorf("spawned pid = %d, want the child's", spawned.Pid)
		}
	} else {
		req := rec.await(t, "request", func(ev record.MCPEvent) bool { return ev.Transport == tr && ev.Kind == record.MCPRequest })
		if req.Path != "/{token}/"+map[record.MCPTransport]string{record.MCPHTTP: "mcp", record.MCPSSE: "sse"}[tr] || req.HTTPMethod == "" {
			t.Errorf("request event = %+v (the token must be masked)", req)
		}
	}
	for _, ev := range rec.all() {
		if ev.Transport != tr || !ev.Loopback || !strings.HasPrefix(ev.Remote, "127.0.0.1:") || ev.Time.IsZero() {
			t.Errorf("event of another transport, not from loopback or without time: %+v", ev)
		}
	}
	if got := h.Events(); len(got) != len(rec.all()) {
		t.Errorf("Events() has %d events, OnEvent saw %d", len(got), len(rec.all()))
	}
}

// TestServersMatchACPSchema checks the mcpServers entries against the pinned ACP schema.
func TestServersMatchACPSchema(t *testing.T) {
	h, _ := startHub(t)
	set, err := schema.Load(schema.V1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Servers() {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		v, err := set.Validate("McpServer", raw)
		if err != nil || v != nil {
			t.Errorf("%s: %s: violations %v, %v", s.Transport, raw, v, err)
		}
		keys, err := set.UnknownKeys("McpServer", raw)
		if err != nil || len(keys) > 0 {
			t.Errorf("%s: %s: keys outside the schema %v, %v", s.Transport, raw, keys, err)
		}
		var m map[string]any
		json.Unmarshal(raw, &m)
		switch s.Transport {
		case record.MCPStdio:
			exe, _ := os.Executable()
			if m["command"] != exe || m["type"] != nil || !strings.Contains(string(raw), `"mcp-sentinel","--report","127.0.0.1:`) {
				t.Errorf("stdio entry %s", raw)
			}
		default:
			if m["type"] != string(s.Transport) || !strings.HasPrefix(s.URL, "http://127.0.0.1:") {
				t.Errorf("%s entry %s", s.Transport, raw)
			}
		}
	}
	if _, err := json.Marshal(sentinel.MCPServer{Transport: "acp", Name: "x"}); err == nil {
		t.Error("an entry of unknown transport marshalled")
	}
}

// TestToolNames checks the names against the strictest vendor rules, with Claude Code's
// prefix added.
func TestToolNames(t *testing.T) {
	h, _ := startHub(t)
	h2, _ := startHub(t)
	valid := regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]{0,31}$`)
	for _, tr := range record.MCPTransports {
		name := h.Tool(tr)
		if !valid.MatchString(name) || !strings.Contains(name, string(tr)) {
			t.Errorf("tool name %q", name)
		}
		if full := "mcp__" + h.Server(tr).Name + "__" + name; len(full) > 64 {
			t.Errorf("%s is %d characters, over 64", full, len(full))
		}
		if name == h2.Tool(tr) || h.Marker(tr) == h2.Marker(tr) || h.Server(tr).URL != "" && h.Server(tr).URL == h2.Server(tr).URL {
			t.Errorf("two runs share a name, marker or URL: %s %s", name, h.Marker(tr))
		}
	}
}

// TestWrongPaths: requests off the token path are answered 404 and recorded, as are
// oversize bodies (413); none of them reaches a milestone.
func TestWrongPaths(t *testing.T) {
	h, rec := startHub(t)
	for _, tr := range []record.MCPTransport{record.MCPHTTP, record.MCPSSE} {
		u := h.Server(tr).URL
		base := u[:strings.Index(u[len("http://"):], "/")+len("http://")]
		for _, path := range []string{"/", "/wrong/mcp", "/" + strings.Repeat("a", 32) + "/sse"} {
			resp, err := http.Post(base+path, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s %s: status %d", tr, path, resp.StatusCode)
			}
			rec.await(t, "rejected "+path, func(ev record.MCPEvent) bool {
				return ev.Transport == tr && ev.Kind == record.MCPRejected && ev.Path == path && ev.Status == 404 && ev.HTTPMethod == "POST" && ev.Loopback
			})
		}
		resp, err := http.Post(u, "application/json", strings.NewReader(strings.Repeat(" ", 2<<20)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s oversize body: status %d", tr, resp.StatusCode)
		}
		rec.await(t, "oversize", func(ev record.MCPEvent) bool {
			return ev.Transport == tr && ev.Kind == record.MCPOversize && ev.Status == 413
		})
		if m := h.Milestones(tr); m.Has(record.MCPConnected) || !m.Has(record.MCPReached) {
			t.Errorf("%s milestones after wrong requests: %+v", tr, m)
		}
	}
}

// TestRefusedMessages: a message the SDK refuses (here an initialize POSTed to the SSE
// sentinel without a session, as gemini-cli does before it falls back to SSE) is recorded
// with its status and counts for no milestone.
func TestRefusedMessages(t *testing.T) {
	h, rec := startHub(t)
	resp, err := http.Post(h.Server(record.MCPSSE).URL, "application/json",
		strings.NewReader(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("status %d, want the SDK's 400", resp.StatusCode)
	}
	rec.await(t, "request", func(ev record.MCPEvent) bool {
		return ev.Kind == record.MCPRequest && ev.Status == 400 && ev.HTTPMethod == "POST"
	})
	rec.await(t, "initialize", func(ev record.MCPEvent) bool { return ev.Method == "initialize" && ev.Status == 400 })
	if m := h.Milestones(record.MCPSSE); !m.Has(record.MCPReached) || m.Has(record.MCPConnected) || m.ClientInfo != nil {
		t.Errorf("milestones after a refused initialize: %+v", m)
	}
}

// TestStdioEndsWithStdin: the stdio sentinel exits 0 when its stdin closes.
func TestStdioEndsWithStdin(t *testing.T) {
	h, rec := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := sentinelCommand(ctx, h.Server(record.MCPStdio))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rec.await(t, "spawned", func(ev record.MCPEvent) bool { return ev.Kind == record.MCPSpawned && ev.Pid == cmd.Process.Pid })
	stdin.Close()
	if err := cmd.Wait(); err != nil || ctx.Err() != nil {
		t.Fatalf("sentinel after stdin closed: %v (ctx %v)", err, ctx.Err())
	}
	rec.await(t, "disconnected", func(ev record.MCPEvent) bool { return ev.Kind == record.MCPDisconnected && ev.Pid == cmd.Process.Pid })
}

// TestStdioEndsWithProbe: the stdio sentinel exits 1 when the probe's channel goes away,
// though its stdin stays open.
func TestStdioEndsWithProbe(t *testing.T) {
	h, rec := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := sentinelCommand(ctx, h.Server(record.MCPStdio))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	rec.await(t, "spawned", func(ev record.MCPEvent) bool { return ev.Kind == record.MCPSpawned })
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || ctx.Err() != nil {
		t.Fatalf("sentinel after the hub closed: %v (ctx %v), want exit status 1", err, ctx.Err())
	}
}

// TestStdioEndsWithProbeWhenStuck: a stdio sentinel whose stdout nobody reads (its answers
// fill the pipe and block) still ends when the probe's channel goes away.
func TestStdioEndsWithProbeWhenStuck(t *testing.T) {
	h, rec := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := sentinelCommand(ctx, h.Server(record.MCPStdio))
	stdin, _ := cmd.StdinPipe()
	defer stdin.Close()
	if _, err := cmd.StdoutPipe(); err != nil { // never read
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(stdin)
	w.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n")
	const calls = 3000 // ~200 KiB of answers, over a pipe's 64 KiB
	for i := 1; i <= calls; i++ {
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rec.await(t, "the last call", func(ev record.MCPEvent) bool { return string(ev.ID) == fmt.Sprint(calls) })
	h.Close()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || ctx.Err() != nil {
		t.Fatalf("stuck sentinel after the hub closed: %v (ctx %v), want exit status 1", err, ctx.Err())
	}
}

// TestStdioBoundsInput: garbage and an oversize line are recorded and skipped; the session
// goes on and answers the initialize that follows them.
func TestStdioBoundsInput(t *testing.T) {
	h, rec := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := sentinelCommand(ctx, h.Server(record.MCPStdio))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w := bufio.NewWriter(stdin)
		w.WriteString("this is not json\n")
		w.WriteString(`{"id":1,"method":"initialize"}` + "\n") // no jsonrpc member
		w.WriteString(`{"jsonrpc":"2.0","id":2,"method":"x","params":"` + strings.Repeat("a", 3<<20) + "\"}\n")
		w.WriteString(`{"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}` + "\n")
		w.Flush()
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(line), &resp) != nil || resp.ID != 3 || resp.Result.ServerInfo.Name != "acpprobe-sentinel-stdio" {
		t.Fatalf("first answer %q, want the initialize result for id 3", line)
	}
	rec.await(t, "garbage", func(ev record.MCPEvent) bool {
		return ev.Kind == record.MCPInvalid && ev.Size == len("this is not json")
	})
	rec.await(t, "no jsonrpc", func(ev record.MCPEvent) bool { return ev.Kind == record.MCPInvalid && ev.Method == "initialize" })
	rec.await(t, "oversize", func(ev record.MCPEvent) bool { return ev.Kind == record.MCPOversize && ev.Size > 3<<20 })
	rec.await(t, "initialize", func(ev record.MCPEvent) bool { return ev.Method == "initialize" && ev.Kind == record.MCPMessage })
	if m := h.Milestones(record.MCPStdio); !m.Has(record.MCPConnected) || m.ClientInfo == nil || m.ClientInfo.Name != "raw" {
		t.Errorf("milestones %+v", m)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

// TestReportChannelNeedsToken: a connection to the report channel without the token is
// rejected and recorded, and reaches no milestone.
func TestReportChannelNeedsToken(t *testing.T) {
	h, rec := startHub(t)
	args := h.Server(record.MCPStdio).Args
	addr := args[slices.Index(args, "--report")+1]
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, `{"token":"guess","pid":1,"configSeen":true}`+"\n")
	if n, err := c.Read(make([]byte, 1)); err == nil || n != 0 {
		t.Errorf("channel with a wrong token stayed open (read %d, %v)", n, err)
	}
	rec.await(t, "rejected", func(ev record.MCPEvent) bool {
		return ev.Kind == record.MCPRejected && ev.Transport == record.MCPStdio
	})
	if m := h.Milestones(record.MCPStdio); m.Has(record.MCPReached) || m.ConfigSeen != nil {
		t.Errorf("milestones after a rejected channel: %+v", m)
	}
}

// TestMainFlags: the sentinel refuses to run without its channel, or with one off loopback.
func TestMainFlags(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--report", "10.0.0.1:9", "--token", "t", "--tool", "x", "--marker", "m"},
		{"--report", "127.0.0.1:9", "--tool", "x", "--marker", "m"},
		{"--report", "127.0.0.1:9", "--token", "t", "--tool", "x", "--marker", "m", "extra"},
	} {
		var stderr strings.Builder
		if code := sentinel.Main(context.Background(), args, strings.NewReader(""), io.Discard, &stderr); code != 2 || stderr.Len() == 0 {
			t.Errorf("Main(%q) = %d, %q; want 2 and a message", args, code, stderr.String())
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nobody listens there now
	var stderr strings.Builder
	if code := sentinel.Main(context.Background(), []string{"--report", addr, "--token", "t", "--tool", "x", "--marker", "m"}, strings.NewReader(""), io.Discard, &stderr); code != 1 {
		t.Errorf("Main without a probe = %d (%s), want 1", code, stderr.String())
	}
}

// TestWait: Wait returns at the milestone, at ctx's end, or at Close.
func TestWait(t *testing.T) {
	h, _ := startHub(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := h.Wait(ctx, record.MCPHTTP, record.MCPConnected); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with nothing connecting = %v", err)
	}
	done := make(chan error)
	go func() { done <- h.Wait(context.Background(), record.MCPHTTP, record.MCPReached) }()
	resp, err := http.Get(h.Server(record.MCPHTTP).URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-done; err != nil {
		t.Errorf("Wait for reached = %v", err)
	}
	go func() { done <- h.Wait(context.Background(), record.MCPSSE, record.MCPCalled) }()
	h.Close()
	if err := <-done; !errors.Is(err, sentinel.ErrClosed) {
		t.Errorf("Wait at Close = %v", err)
	}
}

// TestCloseLeavesNothing: after sessions on every transport, including a stdio sentinel
// and an SSE stream still open, Close leaves no goroutine of the hub, its servers or the
// SDK behind.
func TestCloseLeavesNothing(t *testing.T) {
	ours := func() []string {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		var found []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "acpprobe/sentinel.") || strings.Contains(g, "go-sdk/") || strings.Contains(g, "net/http.(*conn).serve") {
				found = append(found, g)
			}
		}
		return found
	}
	// What Close leaves is told from what was there before; an earlier test's connection
	// goroutines end a moment after it does (one was still there once): wait for that first.
	gone := func(when string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for left := ours(); len(left) > 0; left = ours() {
			if time.Now().After(deadline) {
				t.Fatalf("%d goroutines left %s:\n%s", len(left), when, strings.Join(left, "\n\n"))
			}
			runtime.Gosched()
		}
	}
	gone("before the test")
	h, err := sentinel.Start(sentinel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var sessions []*mcp.ClientSession
	for _, tr := range record.MCPTransports {
		s, err := mcp.NewClient(&mcp.Implementation{Name: "leak-test"}, nil).Connect(ctx, transportFor(ctx, h.Server(tr)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		s.Close() // the client side, which the hub does not own
	}
	// Connection goroutines end a moment after their connection closes.
	gone("after Close")
}

// TestServeHandedOverListeners: Ports are the ports of the entries Server gives; a listener
// given to Serve serves t's sentinel like its own address — an SDK client reaches it there,
// lists the tool and advances the milestones — and Close closes it; after Close, Serve refuses.
func TestServeHandedOverListeners(t *testing.T) {
	h, _ := startHub(t)
	ports := h.Ports()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var extra []net.Listener
	for _, tr := range record.MCPTransports {
		entry := h.Server(tr)
		own := "127.0.0.1:" + strconv.Itoa(ports[tr])
		if !strings.Contains(entry.URL, own+"/") && !slices.Contains(entry.Args, own) {
			t.Fatalf("%s: port %d is not in the entry %+v", tr, ports[tr], entry)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		extra = append(extra, ln)
		if err := h.Serve(tr, ln); err != nil {
			t.Fatal(err)
		}
		// The entry, moved to the handed-over listener.
		entry.URL = strings.Replace(entry.URL, own, ln.Addr().String(), 1)
		entry.Args = slices.Clone(entry.Args)
		if i := slices.Index(entry.Args, own); i >= 0 {
			entry.Args[i] = ln.Addr().String()
		}
		s, err := mcp.NewClient(&mcp.Implementation{Name: "handed-over"}, nil).Connect(ctx, transportFor(ctx, entry), nil)
		if err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if _, err := s.ListTools(ctx, nil); err != nil {
			t.Fatalf("%s: %v", tr, err)
		}
		if err := h.Wait(ctx, tr, record.MCPListed); err != nil {
			t.Errorf("%s: %v", tr, err)
		}
		s.Close()
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, ln := range extra {
		if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
			c.Close()
			t.Errorf("%s still accepts after Close", ln.Addr())
		}
	}
	late, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Serve(record.MCPHTTP, late); !errors.Is(err, sentinel.ErrClosed) {
		t.Errorf("Serve after Close: %v, want ErrClosed", err)
	}
	if _, err := late.Accept(); err == nil {
		t.Error("a listener given after Close was not closed")
	}
}
