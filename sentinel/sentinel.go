// Package sentinel serves acpprobe's sentinel MCP servers: one per MCP transport (stdio,
// streamable HTTP, legacy HTTP+SSE), each exposing exactly one harmless tool with a per-run
// name that returns a fixed text carrying a per-run marker. An agent given the sentinels in
// `session/new` shows, by what reaches them, whether it really connects to MCP servers
// (initialize), lists their tools (tools/list) and calls them (tools/call); the marker lets a
// model emulator see the tool's result flow back into the next model request.
//
// A Hub, in the probe's process, owns everything: the HTTP and SSE listeners (127.0.0.1,
// ephemeral ports, a random token in the path) and a loopback channel on which stdio
// sentinels — child processes the agent starts as `acpprobe mcp-sentinel` (Main) — report
// every message they read. Every observation becomes a record.MCPEvent, handed to a callback and kept;
// record.MCPMilestones summarise them per transport. The MCP side is the official Go SDK
// (github.com/modelcontextprotocol/go-sdk); the events come from the raw messages, before the
// SDK decodes them, so unknown methods and garbage are recorded too.
package sentinel

import (
	"encoding/json"
	"fmt"

	"github.com/acpprobe/acpprobe/record"
)

// NameValue is an ACP EnvVariable or HttpHeader.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MCPServer is one entry of the mcpServers array of ACP session/new (or load, resume). It
// marshals to the variant its Transport names: stdio {name, command, args, env}, http and
// sse {type, name, url, headers}, with the required arrays always present.
type MCPServer struct {
	Transport record.MCPTransport
	Name      string
	// Command (absolute), Args and Env start a stdio server.
	Command string
	Args    []string
	Env     []NameValue
	// URL and Headers reach an http or sse server.
	URL     string
	Headers []NameValue
}

// MarshalJSON writes the ACP McpServer variant of s.Transport.
func (s MCPServer) MarshalJSON() ([]byte, error) {
	orEmpty := func(v []NameValue) []NameValue {
		if v == nil {
			return []NameValue{}
		}
		return v
	}
	switch s.Transport {
	case record.MCPStdio:
		args := s.Args
		if args == nil {
			args = []string{}
		}
		return json.Marshal(struct {
			Name    string      `json:"name"`
			Command string      `json:"command"`
			Args    []string    `json:"args"`
			Env     []NameValue `json:"env"`
		}{s.Name, s.Command, args, orEmpty(s.Env)})
	case record.MCPHTTP, record.MCPSSE:
		return json.Marshal(struct {
			Type    record.MCPTransport `json:"type"`
			Name    string              `json:"name"`
			URL     string              `json:"url"`
			Headers []NameValue         `json:"headers"`
		}{s.Transport, s.Name, s.URL, orEmpty(s.Headers)})
	}
	return nil, fmt.Errorf("sentinel: MCP server %q has unknown transport %q", s.Name, s.Transport)
}
