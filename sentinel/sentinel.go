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
// every message they read. Every observation becomes an Event, handed to a callback and kept;
// Milestones summarise them per transport. The MCP side is the official Go SDK
// (github.com/modelcontextprotocol/go-sdk); the events come from the raw messages, before the
// SDK decodes them, so unknown methods and garbage are recorded too.
package sentinel

import (
	"encoding/json"
	"fmt"
	"time"
)

// Transport is an MCP transport, as ACP's McpServer variants name them.
type Transport string

// The three transports a Hub serves.
const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http"
	SSE   Transport = "sse"
)

// Transports lists the transports in the order Hub.Servers returns their entries.
var Transports = []Transport{Stdio, HTTP, SSE}

// Kind says what an Event observed.
type Kind string

// The kinds of Event.
const (
	// KindSpawned: a stdio sentinel process started and reported in (Pid, ConfigSeen).
	KindSpawned Kind = "spawned"
	// KindDisconnected: a stdio sentinel's report channel ended (the process exited or
	// was stopped).
	KindDisconnected Kind = "disconnected"
	// KindRequest: an HTTP request reached the sentinel's token path (HTTPMethod, Path,
	// Status, ConfigSeen for the header). It is recorded, with the messages it carried, when
	// the answer's status is known.
	KindRequest Kind = "request"
	// KindRejected: an HTTP request to any other path (answered 404), an oversize HTTP
	// body (413), or a report connection with a wrong token.
	KindRejected Kind = "rejected"
	// KindMessage: a JSON-RPC request or notification from the MCP client (Method, ID,
	// ClientInfo and ProtocolVersion where it declares them, Tool and Arguments for
	// tools/call).
	KindMessage Kind = "message"
	// KindResponse: a JSON-RPC response from the MCP client (ID).
	KindResponse Kind = "response"
	// KindInvalid: input that is not a JSON-RPC message (Size, Error).
	KindInvalid Kind = "invalid"
	// KindOversize: a message over the size limit, discarded unread (Size: bytes seen).
	KindOversize Kind = "oversize"
	// KindDropped: the Hub's event limit was reached; later events are not kept or
	// reported, though milestones still advance.
	KindDropped Kind = "dropped"
)

// Event is one observation of a sentinel. Its JSON names are stable (camelCase): the probe
// records each Event as a frame of its own kind. Every string and raw value in it is bounded.
type Event struct {
	Transport Transport `json:"transport"`
	Kind      Kind      `json:"kind"`
	// Time is when the Hub received the observation.
	Time time.Time `json:"time"`
	// Method is the JSON-RPC method of a message.
	Method string `json:"method,omitempty"`
	// ID is the JSON-RPC id of a request or response, as sent.
	ID json.RawMessage `json:"id,omitempty"`
	// ClientInfo and ProtocolVersion come from an initialize request, or from the _meta of
	// any request of the sessionless MCP 2026-07-28.
	ClientInfo      *ClientInfo `json:"clientInfo,omitempty"`
	ProtocolVersion string      `json:"protocolVersion,omitempty"`
	// Tool and Arguments come from a tools/call request. Arguments over the limit are left
	// out; ArgumentsSize then says how large they were.
	Tool          string          `json:"tool,omitempty"`
	Arguments     json.RawMessage `json:"arguments,omitempty"`
	ArgumentsSize int             `json:"argumentsSize,omitempty"`
	// HTTPMethod, Path and Status describe an HTTP request. Path has the token replaced by
	// "{token}" when it matched; a rejected path is kept as sent (truncated). Status is the
	// HTTP status of the answer, also on the messages the request carried: a message
	// answered >= 400 (refused by the MCP SDK, as when a client tries streamable HTTP on the
	// SSE sentinel before falling back to SSE) counts for no milestone.
	HTTPMethod string `json:"httpMethod,omitempty"`
	Path       string `json:"path,omitempty"`
	Status     int    `json:"status,omitempty"`
	// Remote is the peer's address (for stdio, the report channel's); Loopback says whether
	// it is a loopback address.
	Remote   string `json:"remote,omitempty"`
	Loopback bool   `json:"loopback"`
	// Pid is the stdio sentinel process that reported the event.
	Pid int `json:"pid,omitempty"`
	// ConfigSeen says whether the sentinel saw the env entry (stdio) or header (http, sse)
	// that its mcpServers entry asked the agent to pass.
	ConfigSeen *bool `json:"configSeen,omitempty"`
	// Size is the byte size of invalid or oversize input.
	Size int `json:"size,omitempty"`
	// Error says what was wrong with invalid input or a rejected connection.
	Error string `json:"error,omitempty"`
}

// ClientInfo is the MCP client's self-description from initialize.
type ClientInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// Stage is one milestone an agent can reach with a sentinel, in order.
type Stage int

// The milestones.
const (
	// Reached: the sentinel was started (stdio) or received an HTTP request on its path.
	Reached Stage = iota
	// Connected: MCP initialize seen, or a request of the sessionless MCP 2026-07-28
	// (server/discover, or any request whose _meta names its protocol version).
	Connected
	// Listed: tools/list seen.
	Listed
	// Called: tools/call of the sentinel's own tool seen.
	Called
)

func (s Stage) String() string {
	switch s {
	case Reached:
		return "reached"
	case Connected:
		return "connected"
	case Listed:
		return "listed"
	case Called:
		return "called"
	}
	return fmt.Sprintf("stage(%d)", int(s))
}

// Milestones says how far an agent got with one sentinel: each time is the first sighting of
// that stage; a zero time means not seen (yet).
type Milestones struct {
	Reached   time.Time `json:"reached,omitzero"`
	Connected time.Time `json:"connected,omitzero"`
	Listed    time.Time `json:"listed,omitzero"`
	Called    time.Time `json:"called,omitzero"`
	// ClientInfo is the first one seen (see Event.ClientInfo).
	ClientInfo *ClientInfo `json:"clientInfo,omitempty"`
	// ConfigSeen is from the first sighting that could tell (see Event.ConfigSeen); nil
	// until then.
	ConfigSeen *bool `json:"configSeen,omitempty"`
}

// Advance updates m with ev, an event of m's transport whose sentinel exposes tool: the
// stages ev shows are set to ev.Time where not yet seen. A message answered >= 400 (refused by
// the MCP SDK) counts for no stage beyond Reached. The Hub advances its milestones with it, and
// the probe derives the same milestones from the events of a record.
func (m *Milestones) Advance(ev Event, tool string) {
	when := ev.Time
	if when.IsZero() {
		when = time.Unix(0, 0).UTC() // an event without a time (a hand-written record) still counts
	}
	first := func(at *time.Time) {
		if at.IsZero() {
			*at = when
		}
	}
	switch ev.Kind {
	case KindSpawned, KindRequest, KindMessage, KindResponse, KindInvalid, KindOversize:
		first(&m.Reached)
	}
	if m.ConfigSeen == nil && ev.ConfigSeen != nil {
		seen := *ev.ConfigSeen
		m.ConfigSeen = &seen
	}
	if ev.Kind != KindMessage || ev.Status >= 400 {
		return
	}
	if ev.Method == "initialize" || ev.ProtocolVersion != "" {
		first(&m.Connected)
	}
	if m.ClientInfo == nil && ev.ClientInfo != nil {
		ci := *ev.ClientInfo
		m.ClientInfo = &ci
	}
	switch ev.Method {
	case "tools/list":
		first(&m.Listed)
	case "tools/call":
		if ev.Tool == tool {
			first(&m.Called)
		}
	}
}

// Setup is what one Hub's sentinels are (Hub.Setup).
type Setup struct {
	Sentinels []SentinelInfo `json:"sentinels"`
}

// SentinelInfo is one sentinel: its transport, the name of its mcpServers entry, its tool
// and the marker its tool's result carries.
type SentinelInfo struct {
	Transport Transport `json:"transport"`
	Name      string    `json:"name"`
	Tool      string    `json:"tool"`
	Marker    string    `json:"marker"`
}

// At returns the time stage was first seen, zero if never.
func (m Milestones) At(s Stage) time.Time {
	switch s {
	case Reached:
		return m.Reached
	case Connected:
		return m.Connected
	case Listed:
		return m.Listed
	case Called:
		return m.Called
	}
	return time.Time{}
}

// Has reports whether stage was seen.
func (m Milestones) Has(s Stage) bool { return !m.At(s).IsZero() }

// NameValue is an ACP EnvVariable or HttpHeader.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// MCPServer is one entry of the mcpServers array of ACP session/new (or load, resume). It
// marshals to the variant its Transport names: stdio {name, command, args, env}, http and
// sse {type, name, url, headers}, with the required arrays always present.
type MCPServer struct {
	Transport Transport
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
	case Stdio:
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
	case HTTP, SSE:
		return json.Marshal(struct {
			Type    Transport   `json:"type"`
			Name    string      `json:"name"`
			URL     string      `json:"url"`
			Headers []NameValue `json:"headers"`
		}{s.Transport, s.Name, s.URL, orEmpty(s.Headers)})
	}
	return nil, fmt.Errorf("sentinel: MCP server %q has unknown transport %q", s.Name, s.Transport)
}
