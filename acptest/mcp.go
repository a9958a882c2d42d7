package acptest

// The model persona's MCP client: it connects to the servers of session/new (or load,
// resume, fork) with the official MCP Go SDK, lists their tools, offers them to the model
// as mcp__<server>__<tool> and calls them when the model asks.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the MCP client.
const (
	mcpConnectTimeout = 10 * time.Second // connect, initialize and tools/list, per server
	mcpCallTimeout    = time.Minute      // one tools/call
	maxMCPServers     = 16
	// mcpProtocol is the MCP version the persona asks for: the initialize handshake real
	// agents use (the SDK's newest version would start with server/discover instead).
	mcpProtocol = "2025-11-25"
)

// mcpServer is one connected MCP server.
type mcpServer struct {
	name  string
	cs    *mcp.ClientSession
	stop  context.CancelFunc // ends the connection's context (the SSE stream)
	tools []*mcp.Tool
}

// connect connects the ACP McpServer entries (stdio, http, sse), in parallel; a server that
// cannot be reached is logged on stderr and left out. The NoMCP fault connects nothing.
func (h *modelHost) connect(specs []json.RawMessage) []*mcpServer {
	if h.a.cfg.NoMCP || len(specs) == 0 {
		return nil
	}
	if len(specs) > maxMCPServers {
		specs = specs[:maxMCPServers]
	}
	got := make([]*mcpServer, len(specs))
	var wg sync.WaitGroup
	for i, raw := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			spec := acp.ParseObject(raw)
			s, err := h.connectOne(spec)
			if err != nil {
				fmt.Fprintf(h.a.errw, "acptest: MCP server %q: %v\n", spec.String("name"), err)
				return
			}
			got[i] = s
		}()
	}
	wg.Wait()
	var out []*mcpServer
	for _, s := range got {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (h *modelHost) connectOne(spec acp.Object) (*mcpServer, error) {
	name := spec.String("name")
	var t mcp.Transport
	switch kind := spec.String("type"); kind {
	case "", "stdio":
		cmd := exec.Command(spec.String("command"), stringsOf(spec.Array("args"))...)
		cmd.Env = append(slices.Clone(h.a.cfg.Env), namedValues(spec.Array("env"))...)
		t = &mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case "http", "sse":
		client := &http.Client{Transport: headerTransport{headers: namedValues(spec.Array("headers")), base: &http.Transport{Proxy: nil}}}
		if kind == "http" {
			t = &mcp.StreamableClientTransport{Endpoint: spec.String("url"), HTTPClient: client, MaxRetries: -1, DisableStandaloneSSE: true}
		} else {
			t = &mcp.SSEClientTransport{Endpoint: spec.String("url"), HTTPClient: client}
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", kind)
	}
	// The connection lives as long as the session, so its context is not the timeout's: the
	// handshake is bounded by a timer that ends the connection's context.
	ctx, stop := context.WithCancel(h.ctx)
	timer := time.AfterFunc(mcpConnectTimeout, stop)
	client := mcp.NewClient(&mcp.Implementation{Name: "acptest-model", Version: "0.1.0"}, nil)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: mcpProtocol})
	if err != nil {
		timer.Stop()
		stop()
		return nil, err
	}
	s := &mcpServer{name: name, cs: cs, stop: stop}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			timer.Stop()
			s.close()
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		s.tools = append(s.tools, tool)
	}
	if !timer.Stop() {
		s.close()
		return nil, fmt.Errorf("no answer within %v", mcpConnectTimeout)
	}
	return s, nil
}

func (s *mcpServer) close() {
	_ = s.cs.Close()
	s.stop()
}

func closeServers(servers []*mcpServer) {
	for _, s := range servers {
		s.close()
	}
}

// call calls a tool and returns its text content (other content is named, not shown).
func (s *mcpServer) call(ctx context.Context, tool string, input json.RawMessage) (text string, isError bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, mcpCallTimeout)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: input})
	if err != nil {
		return "", true, err
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		} else {
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	return strings.Join(parts, "\n"), res.IsError, nil
}

// mcpTool is an MCP tool as the model sees it.
type mcpTool struct {
	server *mcpServer
	tool   *mcp.Tool
}

var toolNameUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })

// mcpToolName is the name the model sees, as Claude Code spells it.
func mcpToolName(server, tool string) string {
	return "mcp__" + toolNameUnsafe().ReplaceAllString(server, "_") + "__" + toolNameUnsafe().ReplaceAllString(tool, "_")
}

// headerTransport adds the McpServer's headers to every request.
type headerTransport struct {
	headers []string // KEY=VALUE
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for _, kv := range t.headers {
		k, v, _ := strings.Cut(kv, "=")
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

// stringsOf reads a JSON array of strings (other items are skipped).
func stringsOf(items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// namedValues reads [{name, value}] (env variables, headers) as NAME=VALUE.
func namedValues(items []json.RawMessage) []string {
	var out []string
	for _, it := range items {
		o := acp.ParseObject(it)
		if name := o.String("name"); name != "" {
			out = append(out, name+"="+o.String("value"))
		}
	}
	return out
}
