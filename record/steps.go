package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scenario names a prompt-turn scenario of acpprobe turn. The names live in the record
// because both sides use them: the turn package runs each scenario as a step named
// StepName(s), and the derivation finds each scenario's frames by that name, in a live record
// or a transcript.
type Scenario string

// The scenarios, in the order they run.
const (
	// ScenarioCompletion: a one-line text reply — which updates carry the text, thought
	// chunks, usage, time to the first chunk, stopReason, updates after the answer.
	ScenarioCompletion Scenario = "completion"
	// ScenarioShapes: one prompt per content block type on the live session — schema
	// acceptance against completion delivery, and whether the block reached the model.
	ScenarioShapes Scenario = "prompt-shapes"
	// ScenarioModels: each value of the model option, selected, then a one-line turn: did that
	// model reach the emulator? Then the thought level the same way.
	ScenarioModels Scenario = "model-truth"
	// ScenarioPermission: the model asks to write a file with the agent's own tool; the agent
	// must ask, acpprobe rejects, the file must not appear.
	ScenarioPermission Scenario = "permission"
	// ScenarioCancel: a slow stream, session/cancel in the middle: stopReason cancelled within
	// a bound, nothing after, and a second turn still works.
	ScenarioCancel Scenario = "cancel"
	// ScenarioSessions: a turn with a tool call, then fresh agent processes in the same
	// sandbox list, load (its replay against the live turn), fork, close (N load/close
	// cycles: the agent's process count must not grow; a prompt on the closed session must be
	// refused) and resume (no replay) that session, as advertised.
	ScenarioSessions Scenario = "sessions"
	// ScenarioMCP: the sentinel MCP servers, one per transport, offered in session/new; for
	// each, how far the agent got: delivered, connected, tools listed, the tool visible to the
	// model, called, its result back to the model (turn --mcp, check --turns).
	ScenarioMCP Scenario = "mcp"
)

// Scenarios lists every scenario in run order.
var Scenarios = []Scenario{ScenarioCompletion, ScenarioShapes, ScenarioModels, ScenarioPermission, ScenarioCancel, ScenarioSessions, ScenarioMCP}

// DefaultScenarios are the scenarios acpprobe turn runs when none is named: all but mcp, which
// starts MCP servers for the agent to connect to (turn --mcp adds it).
var DefaultScenarios = Scenarios[:6]

// ParseScenario reads a scenario name.
func ParseScenario(s string) (Scenario, error) {
	if sc := Scenario(s); slices.Contains(Scenarios, sc) {
		return sc, nil
	}
	names := make([]string, len(Scenarios))
	for i, sc := range Scenarios {
		names[i] = string(sc)
	}
	return "", fmt.Errorf("unknown scenario %q (want %s)", s, strings.Join(names, ", "))
}

// StepName is the name of a scenario's step in the record ("turn/completion" …).
func (s Scenario) StepName() string { return "turn/" + string(s) }

// Part is the step name of one part of a scenario that runs in several (each permission run
// on its agent process: "turn/permission/cancelled"); Of reads it back.
func (s Scenario) Part(part string) string { return s.StepName() + "/" + part }

// Of reports whether a step name is the scenario's step or one of its parts (Part).
func (s Scenario) Of(step string) bool {
	return step == s.StepName() || strings.HasPrefix(step, s.StepName()+"/")
}

// The model's scripted words and the prompts' markers. They are plain ASCII so that an agent
// cannot garble them, and distinctive so that the derivation finds them in the updates and in
// what reached the model.
const (
	// TurnReply is what the model answers a one-line prompt.
	TurnReply = "ACPPROBE-PONG: the loopback model answered."
	// TurnReplyMarker is the part of TurnReply the judge looks for in the updates (an agent
	// may split the text into chunks anywhere, and the judge joins them).
	TurnReplyMarker = "ACPPROBE-PONG"
	// ShapeMarker is the file name every content block of the prompt-shapes scenario names:
	// when it is in the text of the model's last user message, the block reached the model.
	ShapeMarker = "acpprobe-shape.txt"
)

// CancelBound bounds how long after session/cancel the cancelled turn must end (the cancel
// scenario waits that long, and the judge holds the agent to it).
const CancelBound = 10 * time.Second

// SessionMarker is in the prompt of the sessions scenario's turn: a replay carries the user
// message when a user_message_chunk holds it.
const SessionMarker = "ACPPROBE-SESSION"

// The probe's own requests that the derivation recognises in any recording.
const (
	// DetectionControlMethod is the method no agent implements, asked alongside the method
	// detection requests: its answer is what "not implemented" looks like for this agent.
	// The extension step asks it too, with the same meaning (each within its own part of
	// the record: detection before the first step, the extension step within its range).
	DetectionControlMethod = "_acpprobe/unknown-method"
	// NonexistentSessionID is the session id used where a call must not touch a real
	// session (method detection's fallback, the prompt shapes, the fork probe): no agent has
	// it, so no call made with it can change anything.
	NonexistentSessionID = "acpprobe-nonexistent-session"
)

// Millis is d in milliseconds, to the microsecond: the unit of every time in a record's
// payloads and in a result.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// The active steps of acpprobe check (and the auth oracle's), by the name of their step
// events: the engine runs them, the derivation and the judge find their frames by these names.
const (
	// StepExtensionMethods: an unknown _-prefixed notification, then an unknown _-prefixed
	// request (DetectionControlMethod).
	StepExtensionMethods = "extension-methods"
	// StepInvalidParams: session/prompt with a string prompt on NonexistentSessionID.
	StepInvalidParams = "invalid-params"
	// StepPromptShapes: the PromptShapes, each on NonexistentSessionID.
	StepPromptShapes = "prompt-shapes"
	// StepAllowedPrompt: one valid text prompt (AllowedPromptText), cancelled at once.
	StepAllowedPrompt = "allowed-prompt"
	// StepForkNonexistent: a fork of NonexistentSessionID, on the fork-probe connection.
	StepForkNonexistent = "fork-nonexistent-session"
	// StepAuthStatus: auth/status, when the agent advertises it.
	StepAuthStatus = "auth-status"
)

// The payloads of the active steps that the derivation and the judge recognise.
const (
	// UnknownNotificationMethod is the notification of StepExtensionMethods: no agent has it,
	// and it must be ignored.
	UnknownNotificationMethod = "_acpprobe/unknown-notification"
	// InvalidPrompt is the prompt of StepInvalidParams: not an array, invalid params for any
	// agent.
	InvalidPrompt = "acpprobe: a prompt must be an array, this is a string"
	// AllowedPromptText is the text of the --allow-prompt prompt.
	AllowedPromptText = "Reply with the single word: pong"
	// shapeText is the text the malformed prompt shapes carry.
	shapeText = "acpprobe prompt-shape probe"
)

// PromptShape is one prompt the prompt-shape step sends.
type PromptShape struct {
	Name   string
	Prompt json.RawMessage
	// Control shapes are valid: their answer shows what "passed validation, unknown session"
	// looks like for this agent. The others are malformed and must be rejected.
	Control bool
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// PromptShapes are prompts no agent can start a turn on: they name a session that does not
// exist, and all but the control are malformed (from CodeBuddy's prompt-shape probing notes).
var PromptShapes = []PromptShape{
	{Name: "valid-text-control", Prompt: rawJSON([]any{map[string]string{"type": "text", "text": ""}}), Control: true},
	{Name: "string", Prompt: rawJSON(shapeText)},
	{Name: "empty-object", Prompt: rawJSON([]any{map[string]any{}})},
	{Name: "unknown-type", Prompt: rawJSON([]any{map[string]string{"type": "acpprobe_unknown"}})},
	{Name: "role-content-string", Prompt: rawJSON([]any{map[string]string{"role": "user", "content": shapeText}})},
	{Name: "role-content-blocks", Prompt: rawJSON([]any{map[string]any{"role": "user", "content": []any{map[string]string{"type": "text", "text": shapeText}}}})},
	{Name: "message-content-string", Prompt: rawJSON([]any{map[string]string{"type": "message", "role": "user", "content": shapeText}})},
	{Name: "message-content-blocks", Prompt: rawJSON([]any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]string{"type": "text", "text": shapeText}}}})},
	{Name: "type-user", Prompt: rawJSON([]any{map[string]string{"type": "user", "text": shapeText}})},
	{Name: "kind-text", Prompt: rawJSON([]any{map[string]string{"kind": "text", "text": shapeText}})},
}
