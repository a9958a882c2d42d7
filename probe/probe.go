// Package probe is the engine: it launches an agent, performs the ACP handshake
// (initialize, session/new), detects which optional methods exist without side effects, runs
// the active steps of acpprobe check (CheckSteps) and the caller's own (the turn scenarios),
// and tears the agent down.
//
// The engine only drives the conversation and records it: every line in both directions,
// stderr, and events (spawn, timeout, exit…) go to a jsonrpc.Log. The report is then derived
// from that record alone (the derive package, through acpprobe.Analyze) — the same way a
// transcript is analysed offline, so a live probe and the analysis of its recording cannot
// disagree. Where the engine must decide from what it saw (method detection's fallback), it
// asks the derivation too.
//
// The probe spends no model tokens and changes nothing: it declares no client capability,
// never calls authenticate or logout, never sends a prompt, refuses every request the agent
// makes (permission requests get the outcome "cancelled"), and detects method support with
// calls on a session id that does not exist.
package probe

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/internal/buildinfo"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// Version is acpprobe's version, sent as clientInfo.version: the one `acpprobe version`
// reports, from what the toolchain stamped into the binary (internal/buildinfo).
var Version = buildinfo.Version()

// Default budgets.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultStartupTimeout = 20 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// Authenticate is one authenticate call: the method, and the _meta of its params (the
// gateway's base URL and headers for a gateway login; nil for none).
type Authenticate struct {
	MethodID string
	Meta     json.RawMessage
}

// Params are the call's params.
func (a Authenticate) Params() map[string]any {
	p := map[string]any{"methodId": a.MethodID}
	if len(a.Meta) > 0 {
		p["_meta"] = a.Meta
	}
	return p
}

// MinimalClientCapabilities is what the probe declares unless told otherwise: every
// capability false.
var MinimalClientCapabilities = json.RawMessage(`{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}`)

// Permission says how the probe answers the agent's session/request_permission.
type Permission string

// Permission policies.
const (
	// PermissionCancel answers the outcome "cancelled": no decision (the default).
	PermissionCancel Permission = "cancel"
	// PermissionReject selects the option of kind reject_once (or reject_always), and answers
	// cancelled when there is none: a prompt turn's "may I write this file?" gets "no".
	PermissionReject Permission = "reject"
	// PermissionAllow selects the option of kind allow_once (or allow_always), and answers
	// cancelled when there is none: the mcp scenario lets the agent call the harmless tool of a
	// sentinel MCP server (Session.SetPermission), and nothing else.
	PermissionAllow Permission = "allow"
)

// AuthPolicy says what to do when the agent advertises authentication methods.
type AuthPolicy string

// Auth policies (as acp-probe's authPolicy).
const (
	AuthPolicySkip AuthPolicy = "skip" // record authMethods and go on with session/new
	AuthPolicyFail AuthPolicy = "fail" // stop before session/new: auth_required
)

// Options configure a probe. Launcher is required; everything else has a default.
type Options struct {
	Launcher transport.Launcher
	// AgentID is the registry or config id the agent was resolved from ("" for a raw command).
	AgentID string
	// AgentSource is where AgentID resolved: registry, builtin or config (see registry.Source).
	AgentSource string
	// Command is the command line as the user gave it (default: the launcher's argv joined).
	Command string
	// Cwd is the absolute directory sent in session/new (default: the current directory).
	Cwd string

	Timeout        time.Duration // total budget (DefaultTimeout)
	StartupTimeout time.Duration // budget for the first answer (DefaultStartupTimeout, capped by Timeout)
	RequestTimeout time.Duration // budget of each optional method probe (DefaultRequestTimeout)
	Grace          time.Duration // each step of the teardown ladder (transport.DefaultGrace)

	// ProtocolVersion is sent in initialize (default acp.ProtocolVersion).
	ProtocolVersion int
	AuthPolicy      AuthPolicy
	// SkipMethods turns off method-support detection.
	SkipMethods bool
	// MaxLineSize bounds a line kept whole (jsonrpc.DefaultMaxLineSize when 0).
	MaxLineSize int
	// MaxRecord bounds the bytes of the session kept whole in memory (record.DefaultBudget
	// when 0); past it the agent's output is counted, not kept (see record.Budget).
	MaxRecord int64
	// Log, when set, receives every frame; pass one to read the session afterwards or to
	// write a transcript as it happens.
	Log *jsonrpc.Log
	// Steps are extra exchanges (the conformance package's active checks) run after method
	// detection (right after initialize with InitializeOnly) and before teardown, when
	// initialize succeeded and the agent is still there.
	Steps []Step
	// Authenticate, when set, is the authenticate call the probe makes after initialize,
	// before session/new. Only prompt turns against the model emulator use it, in a sandbox
	// with dummy credentials or the emulator as the gateway (acpprobe probe and check never log
	// in).
	Authenticate *Authenticate
	// ClientCapabilities are the clientCapabilities of initialize (every capability false
	// when nil): what the client claims to support, which decides what some agents show (a
	// gateway login for a client that declares auth._meta.gateway). Whatever it claims, the
	// probe still refuses every file and terminal request the agent makes of the client, and
	// declines its elicitations when it declares elicitation (-32601 when it does not).
	ClientCapabilities json.RawMessage
	// ClientInfo is the clientInfo of initialize (acpprobe's own, name acpprobe and the build's
	// version, when nil): a client profile's host (clientprofile).
	ClientInfo *acp.Implementation
	// MCPServers are the mcpServers of session/new (none when nil): the turn scenarios offer
	// the sentinel MCP servers (turn --mcp). Each must marshal to an ACP McpServer.
	MCPServers []any
	// Permission is how permission requests are answered (PermissionCancel when empty).
	Permission Permission
	// WaitForExit makes the teardown wait Grace for the agent to leave by itself once its
	// stdin is closed, before signalling (acpprobe check judges that: protocol.stdin-exit).
	// Without it the agent's group is signalled as soon as its stdin is closed, as real
	// clients do: nobody waits on an agent that ignores EOF.
	WaitForExit bool
	// InitializeOnly stops after initialize (no session/new, no method detection), then runs
	// Steps: a second, short connection such as the version-negotiation check or the fork
	// probe.
	InitializeOnly bool
	// Purpose names what a connection opened after the main one, in the same Log, is for
	// (record.PurposeDeep, record.PurposeForkProbe): the record is split by it (record.Split).
	Purpose record.Purpose
}

func (o Options) withDefaults() (Options, error) {
	if o.Launcher == nil {
		return o, errors.New("probe: no agent to launch")
	}
	if o.Cwd == "" {
		wd, err := filepath.Abs(".")
		if err != nil {
			return o, err
		}
		o.Cwd = wd
	}
	if !filepath.IsAbs(o.Cwd) {
		return o, fmt.Errorf("probe: cwd %q is not absolute", o.Cwd)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.StartupTimeout <= 0 {
		o.StartupTimeout = DefaultStartupTimeout
	}
	if o.StartupTimeout > o.Timeout {
		o.StartupTimeout = o.Timeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Grace <= 0 {
		o.Grace = transport.DefaultGrace
	}
	if o.ProtocolVersion == 0 {
		o.ProtocolVersion = acp.ProtocolVersion
	}
	switch o.Permission {
	case "":
		o.Permission = PermissionCancel
	case PermissionCancel, PermissionReject, PermissionAllow:
	default:
		return o, fmt.Errorf("probe: unknown permission policy %q (want cancel or reject)", o.Permission)
	}
	switch o.AuthPolicy {
	case "":
		o.AuthPolicy = AuthPolicySkip
	case AuthPolicySkip, AuthPolicyFail:
	default:
		return o, fmt.Errorf("probe: unknown auth policy %q (want skip or fail)", o.AuthPolicy)
	}
	if o.Command == "" {
		o.Command = strings.Join(o.Launcher.CommandLine(), " ")
	}
	if o.Log == nil {
		o.Log = jsonrpc.NewLog()
	}
	return o, nil
}
