package sentinel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/acpprobe/acpprobe/record"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Names and values shared by the Hub and the stdio sentinel it starts.
const (
	// ServerNamePrefix starts the name of every sentinel's mcpServers entry
	// (acpprobe_stdio, acpprobe_http, acpprobe_sse).
	ServerNamePrefix = "acpprobe_"
	// CheckEnv is the environment variable a stdio sentinel's entry asks the agent to set.
	CheckEnv = "ACPPROBE_SENTINEL_CHECK"
	// CheckHeader is the HTTP header an http or sse sentinel's entry asks the agent to send.
	CheckHeader = "X-Acpprobe-Sentinel"
)

// ToolName is the name of a sentinel's one tool: acpprobe_sentinel_<transport>_<nonce>, at
// most 32 characters of [a-z0-9_], starting with a letter. That passes every vendor's rule
// for function names (Anthropic and OpenAI ^[a-zA-Z0-9_-]{1,64}$, Gemini a letter or
// underscore first, at most 64) with room for the prefixes agents add, such as Claude
// Code's mcp__acpprobe_stdio__ (21 characters).
func ToolName(t record.MCPTransport, nonce string) string {
	return "acpprobe_sentinel_" + string(t) + "_" + nonce
}

// ResultText is the fixed text a sentinel's tool returns: it carries the per-run marker, so
// that its arrival in the next model request can be seen.
func ResultText(t record.MCPTransport, marker string) string {
	return fmt.Sprintf("acpprobe sentinel (%s) answered. Marker: %s", t, marker)
}

// newServer builds one sentinel's MCP server: exactly one tool, no other capability.
func newServer(t record.MCPTransport, tool, marker string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "acpprobe-sentinel-" + string(t), Version: "1"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}})
	no := false
	s.AddTool(&mcp.Tool{
		Name:        tool,
		Title:       "acpprobe sentinel (" + string(t) + ")",
		Description: "Harmless check tool of acpprobe: takes no arguments, changes nothing and returns a fixed text.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no},
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: ResultText(t, marker)}}}, nil
	})
	return s
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}
