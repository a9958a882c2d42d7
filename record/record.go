// Package record is the typed record of an ACP session: what every part of acpprobe reads and
// writes between the wire and the report.
//
// A record is the ordered list of jsonrpc.Frame values of one session: the lines of both
// directions, the agent's stderr chunks, and events — things that happened to the session
// that are not on the wire (the agent was spawned, a budget ran out, the teardown began, the
// agent exited). This package owns the events: each kind is a typed Event[T] value that
// writes its payload into a log and reads it back from a frame, so no event name or payload
// shape is spelled anywhere else. It also owns Index, the one place where requests are paired
// with their answers, events are looked up and active steps are delimited, and Split, which
// separates the extra connections of `check` (the fork probe, --deep) from the main one.
//
// The probe engine, the tap and the active checks write events; the result builder, the
// conformance passes, the transcript reader and the replayer read them. New kinds of frames
// (requests that reached the model emulator, MCP sentinel traffic, side effects) get an
// Event value here, next to the others.
package record

import (
	"encoding/json"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Kind names an event in the record (jsonrpc.Frame.Kind of a DirEvent frame, and the "kind"
// of a transcript event line).
type Kind string

// Event is one kind of event and the type of its payload. Emit writes it; Decode reads it.
type Event[T any] struct{ Kind Kind }

// Emit appends the event with its payload (JSON) to log and returns the stored frame.
func (e Event[T]) Emit(log *jsonrpc.Log, payload T) jsonrpc.Frame {
	b, _ := json.Marshal(payload)
	if string(b) == "{}" || string(b) == "null" {
		b = nil
	}
	return log.Event(string(e.Kind), b)
}

// Is reports whether f is an event of this kind.
func (e Event[T]) Is(f jsonrpc.Frame) bool {
	return f.Dir == jsonrpc.DirEvent && Kind(f.Kind) == e.Kind
}

// Decode reads the payload of f; ok is false when f is not this kind of event or its payload
// does not parse (a recording is untrusted input).
func (e Event[T]) Decode(f jsonrpc.Frame) (payload T, ok bool) {
	if !e.Is(f) {
		return payload, false
	}
	if len(f.Raw) > 0 && json.Unmarshal(f.Raw, &payload) != nil {
		var zero T
		return zero, false
	}
	return payload, true
}

// None is the payload of events that carry nothing.
type None struct{}

// The events of a session, in the order they usually happen.
var (
	// Spawn opens a connection: what was launched, how, with which budgets.
	Spawn = Event[SpawnInfo]{"spawn"}
	// SpawnFailed: the agent could not be started.
	SpawnFailed = Event[Message]{"spawn-failed"}
	// Started: the agent process runs.
	Started = Event[Process]{"started"}
	// Timeout: a budget ran out waiting for an answer at a stage.
	Timeout = Event[StageInfo]{"timeout"}
	// NotJSONRPC: the probe stopped waiting for initialize because the agent had written
	// that many lines on stdout without one JSON-RPC message among them: not an ACP agent.
	NotJSONRPC = Event[Lines]{"not-jsonrpc"}
	// Interrupted: the caller cancelled the probe at a stage.
	Interrupted = Event[StageInfo]{"interrupted"}
	// AuthPolicyStop: session/new was not called because of the auth policy.
	AuthPolicyStop = Event[AuthPolicy]{"auth-policy"}
	// MethodsSkipped: method detection did not run.
	MethodsSkipped = Event[Reason]{"methods-skipped"}
	// Step: an active step (conformance) begins; its frames run to the next step or teardown.
	Step = Event[StepInfo]{"step"}
	// StepSkipped: an active step could not run.
	StepSkipped = Event[StepInfo]{"step-skipped"}
	// PromptWindow: how long the --allow-prompt step waited for the cancelled turn.
	PromptWindow = Event[Window]{"prompt-window"}
	// EOF: the agent's stdout ended.
	EOF = Event[None]{"eof"}
	// EditorEOF: the editor closed the agent's input (tap).
	EditorEOF = Event[None]{"editor-eof"}
	// EditorStalled: the agent had gone but the editor took none of its last output within the
	// grace; the tap ended without forwarding the rest (tap).
	EditorStalled = Event[None]{"editor-stalled"}
	// Signal: a signal was forwarded to the agent (tap).
	Signal = Event[SignalInfo]{"signal"}
	// Teardown: a step of the teardown begins.
	Teardown = Event[TeardownInfo]{"teardown"}
	// Exit: how the agent ended.
	Exit = Event[ExitInfo]{"exit"}
	// Done closes a connection.
	Done = Event[None]{"done"}

	// TurnRoute: how acpprobe turn pointed the agent at the model emulator (before the main
	// connection's spawn).
	TurnRoute = Event[RouteInfo]{"turn-route"}
	// ModelRequest: a request reached the model emulator during a prompt turn (what the
	// agent asked its "model": path, model, tools offered, tool results, last user message).
	ModelRequest = Event[ModelRequestInfo]{"model-request"}
	// ModelResponse: what the emulator answered it (text, a tool call, an error…).
	ModelResponse = Event[ModelResponseInfo]{"model-response"}
	// Observation: a fact a turn scenario checked outside the wire (did the file the model
	// asked to write appear in the workspace?).
	Observation = Event[ObservationInfo]{"observation"}
	// PermissionRun: the mode one run of the permission scenario ran in and how acpprobe
	// answers the agent's permission request (before its prompt).
	PermissionRun = Event[PermissionRunInfo]{"permission-run"}
	// MCPSentinels: the sentinel MCP servers offered in session/new (turn --mcp): per
	// transport, its entry's name, its tool and the marker in the tool's result.
	MCPSentinels = Event[MCPSetup]{"mcp-sentinels"}
	// MCP: something reached a sentinel MCP server (a process started, an HTTP request, an
	// MCP message such as initialize, tools/list or tools/call).
	MCP = Event[MCPEvent]{"mcp"}
)

// Kinds lists every event kind this package defines (docs/transcript.md lists the same).
func Kinds() []Kind {
	return []Kind{Spawn.Kind, SpawnFailed.Kind, Started.Kind, Timeout.Kind, NotJSONRPC.Kind, Interrupted.Kind, AuthPolicyStop.Kind,
		MethodsSkipped.Kind, Step.Kind, StepSkipped.Kind, PromptWindow.Kind, EOF.Kind, EditorEOF.Kind, EditorStalled.Kind, Signal.Kind,
		Teardown.Kind, Exit.Kind, Done.Kind, TurnRoute.Kind, ModelRequest.Kind, ModelResponse.Kind, Observation.Kind,
		PermissionRun.Kind, MCPSentinels.Kind, MCP.Kind, Processes.Kind, SideEffects.Kind, AuthIdentity.Kind}
}

// PermissionRunInfo is one run of the permission scenario: the session mode it ran in, and the
// answer acpprobe gives the agent's permission request.
type PermissionRunInfo struct {
	// Mode is the mode's id ("" when the agent has no modes), Name and Description as the
	// agent gave them.
	Mode        string `json:"mode,omitempty"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Asks says the mode promises to ask before a write (by its id, name and description);
	// Default that it is the mode a new session starts in.
	Asks    bool `json:"asks"`
	Default bool `json:"default"`
	// SetBy is the method that selected the mode ("" when the session already was in it).
	SetBy string `json:"setBy,omitempty"`
	// Answer is how acpprobe answers the agent's permission request: the reject option, or
	// the outcome cancelled.
	Answer PermissionAnswer `json:"answer"`
}

// PermissionAnswer is how acpprobe answers a permission request in the permission scenario:
// clients do both.
type PermissionAnswer string

// The answers.
const (
	// AnswerReject selects the request's reject option.
	AnswerReject PermissionAnswer = "reject"
	// AnswerCancelled answers the outcome cancelled (a client whose prompt was cancelled).
	AnswerCancelled PermissionAnswer = "cancelled"
)

// ObservationInfo is a fact a step checked outside the wire.
type ObservationInfo struct {
	// Step is the step that looked (a turn scenario).
	Step string `json:"step"`
	// Name says what was looked at ("file-exists"); Subject what of ("workspace/acpprobe-…").
	Name    string `json:"name"`
	Subject string `json:"subject,omitempty"`
	// Value is what was found.
	Value bool `json:"value"`
}

// SpawnInfo is the payload of the spawn event: everything about the connection that is not on
// the wire.
type SpawnInfo struct {
	AgentID          string   `json:"agentId,omitempty"`
	Command          string   `json:"command,omitempty"`
	Argv             []string `json:"argv"`
	Cwd              string   `json:"cwd,omitempty"`
	ProbedAt         string   `json:"probedAt,omitempty"`
	ProtocolVersion  int      `json:"protocolVersion,omitempty"`
	AuthPolicy       string   `json:"authPolicy,omitempty"`
	TimeoutMs        float64  `json:"timeoutMs,omitempty"`
	StartupTimeoutMs float64  `json:"startupTimeoutMs,omitempty"`
	RequestTimeoutMs float64  `json:"requestTimeoutMs,omitempty"`
	// Purpose names what an extra connection, opened after the main one in the same record,
	// is for (PurposeDeep, PurposeForkProbe); empty for the main connection. See Split.
	Purpose Purpose `json:"purpose,omitempty"`
	// InitializeOnly marks a connection that stopped after initialize (no session/new, no
	// method detection). Records written before Purpose existed mark the --deep connection
	// with it alone: Split reads such a connection as PurposeDeep.
	InitializeOnly bool `json:"initializeOnly,omitempty"`
	// Tap marks a session between an editor and an agent, recorded by acpprobe tap: the
	// client is the editor, not acpprobe.
	Tap bool `json:"tap,omitempty"`
}

// Purpose names what an extra connection, opened after the main one in the same record, is for.
type Purpose string

// Purposes of the extra connections acpprobe check and the turn scenarios open after the main
// one (SpawnInfo.Purpose).
const (
	// PurposeDeep: check --deep's initialize-only connection, which asks for a protocol
	// version no agent supports (version negotiation).
	PurposeDeep Purpose = "deep"
	// PurposeForkProbe: check's initialize-only connection that forks a session that does not
	// exist (when the main connection found session/fork supported), then ends the agent at
	// once: a fork of a made-up session is kept off the main connection, where it would
	// change how the agent behaves on EOF.
	PurposeForkProbe Purpose = "fork-probe"
	// PurposeSessionLoad: the sessions turn scenario's connection to a fresh agent process in
	// the same sandbox, after the main one: session/list, session/load of the main session,
	// session/fork, then load/close cycles and a prompt on the closed session.
	PurposeSessionLoad Purpose = "session-load"
	// PurposeSessionResume: the sessions scenario's connection that resumes the main session
	// on another fresh process (no replay expected).
	PurposeSessionResume Purpose = "session-resume"
	// PurposeTurn: a connection to a fresh agent process that runs turn scenarios after one
	// that may have left the agent changed (a refused permission, a cancelled turn): one agent
	// bug does not leak into the next scenario.
	PurposeTurn Purpose = "turn"
)

// purpose is what the connection a spawn event opens is for: Purpose, or PurposeDeep for an
// initialize-only connection of a record written before Purpose existed.
func (s SpawnInfo) purpose() Purpose {
	if s.Purpose == "" && s.InitializeOnly {
		return PurposeDeep
	}
	return s.Purpose
}

// Message is a payload that only says what happened.
type Message struct {
	Message string `json:"message"`
}

// Lines counts lines of the agent's stdout.
type Lines struct {
	Lines int `json:"lines"`
}

// Process identifies the agent process.
type Process struct {
	PID int `json:"pid"`
}

// Stage is a stage of a probe, named in timeout and interrupted events and in errors.
type Stage string

// Stages of a probe.
const (
	StageSpawn        Stage = "spawn"
	StageInitialize   Stage = "initialize"
	StageAuthenticate Stage = "authenticate"
	StageSessionNew   Stage = "session/new"
	StageMethods      Stage = "methods"
	StageTeardown     Stage = "teardown"
)

// StageInfo names the stage an event happened at.
type StageInfo struct {
	Stage Stage `json:"stage"`
}

// AuthPolicy says why session/new was not called.
type AuthPolicy struct {
	Policy      string `json:"policy"`
	AuthMethods int    `json:"authMethods"`
}

// Reason says why something was skipped.
type Reason struct {
	Reason string `json:"reason"`
}

// StepInfo names an active step (and, when skipped, why).
type StepInfo struct {
	Name   string `json:"name"`
	Reason string `json:"reason,omitempty"`
}

// Window is how long a step waited.
type Window struct {
	WindowMs float64 `json:"windowMs"`
}

// SignalInfo names a signal.
type SignalInfo struct {
	Signal string `json:"signal"`
}

// TeardownInfo names a teardown step (TeardownSessionClose or TeardownLadder). For the ladder,
// StdinWaitMs is how long it waited for the agent to leave after closing its stdin before
// signalling (0: not at all, so how the agent behaves on EOF is not shown); absent in
// recordings made before it was recorded, when the ladder always waited a grace.
type TeardownInfo struct {
	Step        TeardownStep `json:"step"`
	StdinWaitMs *float64     `json:"stdinWaitMs,omitempty"`
}

// TeardownStep names a step of the teardown.
type TeardownStep string

// The teardown steps.
const (
	// TeardownSessionClose: session/close of the live session (when advertised), bounded.
	TeardownSessionClose TeardownStep = "session/close"
	// TeardownLadder: the ladder (close stdin, then the signals to the group).
	TeardownLadder TeardownStep = "ladder"
)
