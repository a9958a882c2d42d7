package acptest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary re-executes itself as the reference agent (asAgent) or as a stdio MCP
// server (asMCP), to have real child processes.
const (
	asAgent = "ACPTEST_TEST_AS_AGENT"
	asMCP   = "ACPTEST_TEST_AS_MCP"
)

func TestMain(m *testing.M) {
	// An MCP server started by a re-executed agent inherits asAgent too: asMCP comes first.
	switch {
	case os.Getenv(asMCP) != "":
		if err := mcpServer(os.Getenv(asMCP)).Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	case os.Getenv(asAgent) == "1":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := acptest.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// mcpServer has one tool, ping, that answers "pong from <name>".
func mcpServer(name string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "acptest-test-" + name, Version: "0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "ping", Description: "Answers pong"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong from " + name}}}, nil, nil
	})
	return s
}

// mcpHTTP serves mcpServer(name) on loopback, over streamable HTTP or SSE, and records the
// methods of the MCP messages it receives.
type mcpHTTP struct {
	srv     *httptest.Server
	mu      sync.Mutex
	methods []string
}

func serveMCP(t *testing.T, name string, sse bool) *mcpHTTP {
	s := mcpServer(name)
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	if sse {
		h = mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	}
	m := &mcpHTTP{}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method != "" {
				m.mu.Lock()
				m.methods = append(m.methods, msg.Method)
				m.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *mcpHTTP) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.methods)
}

// noRaceSleep spares a -race child the second it sleeps at exit.
var noRaceSleep = map[string]string{"name": "GORACE", "value": "atexit_sleep_ms=0"}

// mcpServers are the ACP McpServer entries of one server per transport.
func mcpServers(t *testing.T, httpSrv, sseSrv *mcpHTTP) []any {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []any{
		map[string]any{"name": "stdio", "command": exe, "args": []string{}, "env": []map[string]string{{"name": asMCP, "value": "stdio"}, noRaceSleep}},
		map[string]any{"type": "http", "name": "http", "url": httpSrv.srv.URL, "headers": []map[string]string{{"name": "X-Test", "value": "1"}}},
		map[string]any{"type": "sse", "name": "sse", "url": sseSrv.srv.URL, "headers": []map[string]string{}},
	}
}

// callEach is a model that calls every MCP tool offered, one a request, then answers text.
func callEach(c *emulator.Call) emulator.Reply {
	done := map[string]bool{}
	for _, r := range c.Request.ToolResults {
		done[r.Name] = true
	}
	for _, tl := range c.Tools {
		if strings.HasPrefix(tl.Name, "mcp__") && !done[tl.Name] {
			use, err := emulator.Use(tl, nil)
			if err != nil {
				return emulator.Reply{Text: err.Error()}
			}
			return emulator.Reply{Tool: use}
		}
	}
	return emulator.Reply{Text: "all called"}
}

var mcpTools = []string{"mcp__stdio__ping", "mcp__http__ping", "mcp__sse__ping"}

// The MCP servers of session/new are connected (initialize, tools/list), their tools reach
// the model as mcp__<server>__<tool>, and a call's result flows back into the next request.
func TestModelMCP(t *testing.T) {
	m := newModel(t, callEach)
	httpSrv, sseSrv := serveMCP(t, "http", false), serveMCP(t, "sse", true)
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd, mcpServers(t, httpSrv, sseSrv)...)
	for _, s := range []*mcpHTTP{httpSrv, sseSrv} {
		if got := s.seen(); !slices.Equal(got, []string{"initialize", "notifications/initialized", "tools/list"}) {
			t.Errorf("MCP messages before the prompt: %v", got)
		}
	}
	if got := c.stopReason(sid, text("call them")); got != "end_turn" {
		t.Fatalf("stopReason %q", got)
	}
	first := m.request(t)
	if !slices.Equal(first.Tools, append([]string{"Write", "Read"}, mcpTools...)) {
		t.Fatalf("tools %v", first.Tools)
	}
	for i, name := range mcpTools {
		r := m.request(t)
		res := r.ToolResults[len(r.ToolResults)-1]
		server := strings.Split(name, "__")[1]
		if len(r.ToolResults) != i+1 || res.Name != name || !res.Latest || res.IsError || res.Content != "pong from "+server {
			t.Errorf("request %d: tool results %+v", i+2, r.ToolResults)
		}
	}
	for _, s := range []*mcpHTTP{httpSrv, sseSrv} {
		if got := s.seen(); !slices.Contains(got, "tools/call") {
			t.Errorf("no tools/call: %v", got)
		}
	}
	var calls []string
	for _, u := range c.updates(sid, 0) {
		if u.kind == "tool_call_update" && u.obj.String("status") == "completed" {
			calls = append(calls, u.obj.String("toolCallId"))
		}
	}
	if len(calls) != 3 {
		t.Errorf("completed tool calls %v", kinds(c.updates(sid, 0)))
	}
}

func TestFaultNoMCP(t *testing.T) {
	m := newModel(t, callEach)
	httpSrv, sseSrv := serveMCP(t, "http", false), serveMCP(t, "sse", true)
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{NoMCP: true})), "allow")
	sid := c.newSession(m.cwd, mcpServers(t, httpSrv, sseSrv)...)
	c.stopReason(sid, text("call them"))
	if r := m.request(t); hasTool(r, "mcp__") {
		t.Errorf("tools %v", r.Tools)
	}
	if got := append(httpSrv.seen(), sseSrv.seen()...); len(got) != 0 {
		t.Errorf("the servers were reached: %v", got)
	}
}

func TestFaultHideMCPTools(t *testing.T) {
	m := newModel(t, callEach)
	httpSrv, sseSrv := serveMCP(t, "http", false), serveMCP(t, "sse", true)
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{HideMCPTools: true})), "allow")
	sid := c.newSession(m.cwd, mcpServers(t, httpSrv, sseSrv)...)
	c.stopReason(sid, text("call them"))
	if r := m.request(t); hasTool(r, "mcp__") {
		t.Errorf("tools %v", r.Tools)
	}
	for _, s := range []*mcpHTTP{httpSrv, sseSrv} {
		if got := s.seen(); !slices.Contains(got, "tools/list") {
			t.Errorf("not listed: %v", got)
		}
	}
}

// A server that cannot be reached is left out; the session still works.
func TestModelMCPUnreachable(t *testing.T) {
	m := newModel(t, emulator.Text("ok"))
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{})), "allow")
	sid := c.newSession(m.cwd, map[string]any{"type": "http", "name": "dead", "url": dead.URL, "headers": []any{}},
		map[string]any{"name": "missing", "command": "/nonexistent/acptest-mcp", "args": []any{}, "env": []any{}})
	if got := c.stopReason(sid, text("hi")); got != "end_turn" {
		t.Fatalf("stopReason %q", got)
	}
	if r := m.request(t); hasTool(r, "mcp__") {
		t.Errorf("tools %v", r.Tools)
	}
	if tail := string(c.agent.StderrTail()); !strings.Contains(tail, `MCP server "dead"`) || !strings.Contains(tail, `MCP server "missing"`) {
		t.Errorf("stderr %q", tail)
	}
}

// DeferMCPTools names the MCP tools in the system prompt and offers ToolSearch instead: the
// emulator's tool round trip searches for the tool it wants (select:), the persona offers it
// from the next request on, and the call's result flows back; a direct call of a tool not
// found yet fails.
func TestFaultDeferMCPTools(t *testing.T) {
	m := newModel(t, emulator.ToolThenText(emulator.Containing("mcp__http__ping"), func(emulator.Tool) map[string]any { return nil }, "done", "missing"))
	httpSrv, sseSrv := serveMCP(t, "http", false), serveMCP(t, "sse", true)
	c := connect(t, acptest.Launcher(m.config(acptest.ModelFaults{DeferMCPTools: true})), "allow")
	sid := c.newSession(m.cwd, mcpServers(t, httpSrv, sseSrv)...)
	if got := c.stopReason(sid, text("call ping")); got != "end_turn" {
		t.Fatalf("stopReason %q", got)
	}
	first, searched := m.request(t), m.response(t)
	if !slices.Equal(first.Tools, []string{"Write", "Read", "ToolSearch"}) || !strings.Contains(string(first.Body), `mcp__http__ping\nmcp__sse__ping\nmcp__stdio__ping`) {
		t.Fatalf("first request: tools %v, body %.300s", first.Tools, first.Body)
	}
	if searched.Tool != "ToolSearch" || searched.Search != "mcp__http__ping" {
		t.Fatalf("first answer %+v, want a search for mcp__http__ping", searched)
	}
	second, called := m.request(t), m.response(t)
	res := second.ToolResults[len(second.ToolResults)-1]
	if !slices.Equal(second.Tools, []string{"Write", "Read", "mcp__http__ping", "ToolSearch"}) || res.Name != "ToolSearch" || !strings.Contains(res.Content, `"name":"mcp__http__ping"`) {
		t.Fatalf("second request: tools %v, result %+v", second.Tools, res)
	}
	if called.Tool != "mcp__http__ping" || called.Search != "" {
		t.Fatalf("second answer %+v, want the call", called)
	}
	if third := m.request(t); third.ToolResults[len(third.ToolResults)-1].Content != "pong from http" {
		t.Errorf("third request: tool results %+v", third.ToolResults)
	}
	m.response(t)
	if got := httpSrv.seen(); !slices.Contains(got, "tools/call") {
		t.Errorf("no tools/call: %v", got)
	}

	m.srv.SetScript(func(c *emulator.Call) emulator.Reply {
		if c.ToolCalls > 0 {
			return emulator.Reply{Text: "done"}
		}
		return emulator.Reply{Tool: &emulator.ToolUse{Name: "mcp__sse__ping", Input: json.RawMessage(`{}`)}}
	})
	c.stopReason(sid, text("call sse directly"))
	m.request(t)
	m.response(t)
	if r := m.request(t); len(r.ToolResults) == 0 || !r.ToolResults[len(r.ToolResults)-1].IsError {
		t.Errorf("a deferred tool called directly: results %+v", r.ToolResults)
	}
	if got := sseSrv.seen(); slices.Contains(got, "tools/call") {
		t.Errorf("the deferred tool was called: %v", got)
	}
}
