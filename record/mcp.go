package record

import (
	"encoding/json"

	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/acp"
)

// The payloads of what reached acpprobe's sentinel MCP servers (the mcp and mcp-sentinels
// events): the sentinel package's Hub produces them and hands them to the callback that
// records them, and MCPMilestones folds them the same way live (the Hub waits on it) and from a
// record (the derivation).

// MCPTransport is an MCP transport, as ACP's McpServer variants name them.
type MCPTransport string

// The three transports a Hub serves.
const (
	MCPStdio MCPTransport = "stdio"
	MCPHTTP  MCPTransport = "http"
	MCPSSE   MCPTransport = "sse"
)

// MCPTransports lists the transports in the order the sentinel Hub serves them.
var MCPTransports = []MCPTransport{MCPStdio, MCPHTTP, MCPSSE}

// AdvertisedTransports says, per transport, whether an agent advertises it by its initialize
// result: stdio always, http and sse by agentCapabilities.mcpCapabilities.
func AdvertisedTransports(initialize json.RawMessage) map[MCPTransport]bool {
	mc := acp.ParseInitializeResult(initialize).Capabilities.Object("mcpCapabilities")
	return map[MCPTransport]bool{MCPStdio: true, MCPHTTP: mc.Bool("http"), MCPSSE: mc.Bool("sse")}
}

// MCPKind says what an MCPEvent observed.
type MCPKind string

// The kinds of MCPEvent.
const (
	// KindSpawned: a stdio sentinel process started and reported in (Pid, ConfigSeen).
	MCPSpawned MCPKind = "spawned"
	// KindDisconnected: a stdio sentinel's report channel ended (the process exited or
	// was stopped).
	MCPDisconnected MCPKind = "disconnected"
	// KindRequest: an HTTP request reached the sentinel's token path (HTTPMethod, Path,
	// Status, ConfigSeen for the header). It is recorded, with the messages it carried, when
	// the answer's status is known.
	MCPRequest MCPKind = "request"
	// KindRejected: an HTTP request to any other path (answered 404), an oversize HTTP
	// body (413), or a report connection with a wrong token.
	MCPRejected MCPKind = "rejected"
	// KindMessage: a JSON-RPC request or notification from the MCP client (Method, ID,
	// ClientInfo and ProtocolVersion where it declares them, Tool and Arguments for
	// tools/call).
	MCPMessage MCPKind = "message"
	// KindResponse: a JSON-RPC response from the MCP client (ID).
	MCPResponse MCPKind = "response"
	// KindInvalid: input that is not a JSON-RPC message (Size, Error).
	MCPInvalid MCPKind = "invalid"
	// KindOversize: a message over the size limit, discarded unread (Size: bytes seen).
	MCPOversize MCPKind = "oversize"
	// KindDropped: the Hub's event limit was reached; later events are not kept or
	// reported, though milestones still advance.
	MCPDropped MCPKind = "dropped"
)

// MCPEvent is one observation of a sentinel. Its JSON names are stable (camelCase): the
// probe records each one as a frame of its own kind. Every string and raw value in it is bounded.
type MCPEvent struct {
	Transport MCPTransport `json:"transport"`
	Kind      MCPKind      `json:"kind"`
	// Time is when the Hub received the observation.
	Time time.Time `json:"time"`
	// Method is the JSON-RPC method of a message.
	Method string `json:"method,omitempty"`
	// ID is the JSON-RPC id of a request or response, as sent.
	ID json.RawMessage `json:"id,omitempty"`
	// ClientInfo and ProtocolVersion come from an initialize request, or from the _meta of
	// any request of the sessionless MCP 2026-07-28.
	ClientInfo      *MCPClient `json:"clientInfo,omitempty"`
	ProtocolVersion string     `json:"protocolVersion,omitempty"`
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

// MCPClient is the MCP client's self-description from initialize.
type MCPClient struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// MCPStage is one milestone an agent can reach with a sentinel, in order.
type MCPStage int

// The milestones.
const (
	// Reached: the sentinel was started (stdio) or received an HTTP request on its path.
	MCPReached MCPStage = iota
	// Connected: MCP initialize seen, or a request of the sessionless MCP 2026-07-28
	// (server/discover, or any request whose _meta names its protocol version).
	MCPConnected
	// Listed: tools/list seen.
	MCPListed
	// Called: tools/call of the sentinel's own tool seen.
	MCPCalled
)

func (s MCPStage) String() string {
	switch s {
	case MCPReached:
		return "reached"
	case MCPConnected:
		return "connected"
	case MCPListed:
		return "listed"
	case MCPCalled:
		return "called"
	}
	return fmt.Sprintf("stage(%d)", int(s))
}

// MCPMilestones says how far an agent got with one sentinel: each time is the first sighting of
// that stage; a zero time means not seen (yet).
type MCPMilestones struct {
	Reached   time.Time `json:"reached,omitzero"`
	Connected time.Time `json:"connected,omitzero"`
	Listed    time.Time `json:"listed,omitzero"`
	Called    time.Time `json:"called,omitzero"`
	// ClientInfo is the first one seen (see MCPEvent.ClientInfo).
	ClientInfo *MCPClient `json:"clientInfo,omitempty"`
	// ConfigSeen is from the first sighting that could tell (see MCPEvent.ConfigSeen); nil
	// until then.
	ConfigSeen *bool `json:"configSeen,omitempty"`
}

// Advance updates m with ev, an event of m's transport whose sentinel exposes tool: the
// stages ev shows are set to ev.Time where not yet seen. A message answered >= 400 (refused by
// the MCP SDK) counts for no stage beyond Reached. The Hub advances its milestones with it, and
// the probe derives the same milestones from the events of a record.
func (m *MCPMilestones) Advance(ev MCPEvent, tool string) {
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
	case MCPSpawned, MCPRequest, MCPMessage, MCPResponse, MCPInvalid, MCPOversize:
		first(&m.Reached)
	}
	if m.ConfigSeen == nil && ev.ConfigSeen != nil {
		seen := *ev.ConfigSeen
		m.ConfigSeen = &seen
	}
	if ev.Kind != MCPMessage || ev.Status >= 400 {
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

// MCPSetup is what one Hub's sentinels are (the payload of the mcp-sentinels event).
type MCPSetup struct {
	Sentinels []MCPSentinel `json:"sentinels"`
}

// MCPSentinel is one sentinel: its transport, the name of its mcpServers entry, its tool
// and the marker its tool's result carries.
type MCPSentinel struct {
	Transport MCPTransport `json:"transport"`
	Name      string       `json:"name"`
	Tool      string       `json:"tool"`
	Marker    string       `json:"marker"`
}

// At returns the time stage was first seen, zero if never.
func (m MCPMilestones) At(s MCPStage) time.Time {
	switch s {
	case MCPReached:
		return m.Reached
	case MCPConnected:
		return m.Connected
	case MCPListed:
		return m.Listed
	case MCPCalled:
		return m.Called
	}
	return time.Time{}
}

// Has reports whether stage was seen.
func (m MCPMilestones) Has(s MCPStage) bool { return !m.At(s).IsZero() }
