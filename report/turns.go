package report

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/acpprobe/acpprobe/record"
)

// The turn section of the result: the scenarios of acpprobe turn (and check --turns), each
// with its runs and the truths its scenario observed.

// Turn is what one prompt-turn scenario showed: the agent talking to the model emulator, at
// zero tokens (acpprobe turn).
type Turn struct {
	// Scenario is completion, prompt-shapes, model-truth, permission or cancel.
	Scenario string `json:"scenario"`
	// Outcome is passed, failed (a finding at ADVISORY or above says why) or not-run (Reason
	// says why: no route to the model, no session…). A scenario that could not run is never a
	// failure of the agent. Notes are the scenario's INFO findings, which do not fail it.
	Outcome TurnOutcome `json:"outcome"`
	Reason  string      `json:"reason,omitempty"`
	Notes   []string    `json:"notes,omitempty"`
	// Runs are the scenario's prompts, in order.
	Runs []TurnRun `json:"runs"`
	// Shapes (prompt-shapes): per content block type, acceptance against delivery.
	Shapes []ShapeDelivery `json:"shapes,omitempty"`
	// Models (model-truth): per selected value, what the model was asked for.
	Models []ModelTruth `json:"models,omitempty"`
	// Permission (permission): per run, what the agent did with a write the model asked for:
	// in the mode that promises to ask, answered reject, then cancelled, and in the agent's
	// default mode when that is another one, each on a fresh agent process.
	Permission PermissionRuns `json:"permission,omitempty"`
	// Cancel (cancel): how the turn ended after session/cancel, and the turn after it.
	Cancel *CancelTruth `json:"cancel,omitempty"`
	// MCP (mcp): per sentinel MCP server, how far the agent got with it.
	MCP []MCPTruth `json:"mcp,omitempty"`
	// Sessions (sessions): load, resume, list, close and fork of the session, on fresh
	// processes.
	Sessions *SessionsTruth `json:"sessions,omitempty"`
}

// TurnRoute is how acpprobe turn pointed the agent at the model emulator (record.RouteInfo:
// the route, the profile and the key that chose it, what it set), and what the run showed of
// it.
type TurnRoute struct {
	record.RouteInfo
	// Version is the agent's version (agentInfo.version); Verified says whether the profile
	// was verified on it (null: no profile, or no agentInfo to tell).
	Version  string `json:"version,omitempty"`
	Verified *bool  `json:"verified"`
	// Dialects are the wire formats the agent's model requests used, in the order first seen
	// (empty: it never called the emulator).
	Dialects []string `json:"dialects"`
}

// MCPTruth is how far an agent got with the sentinel MCP server of one transport, milestone by
// milestone. A milestone is true when seen, false when it could have been seen and was not,
// and null when it could not be observed (without a backend profile the model never runs, so
// visible, asked, called and returned are not observed unless they happened).
type MCPTruth struct {
	// Transport is stdio, http or sse; Advertised says whether the agent advertises it
	// (stdio always; http and sse by mcpCapabilities). Unadvertised transports are offered too,
	// to see what the agent does with them.
	Transport  string `json:"transport"`
	Advertised bool   `json:"advertised"`
	// Delivered: session/new accepted the server (false: refused, Error says how).
	Delivered *bool  `json:"delivered"`
	Error     string `json:"error,omitempty"`
	// Connected: MCP initialize seen; Listed: tools/list seen; Client is the MCP client's name
	// and version from initialize.
	Connected *bool  `json:"connected"`
	Listed    *bool  `json:"listed"`
	Client    string `json:"client,omitempty"`
	// Visible: the sentinel's tool was among the tools a model request offered. Asked: the
	// model asked for it. Called: the agent called it (tools/call seen). Returned: its result
	// came back in a later model request.
	Visible  *bool `json:"visible"`
	Asked    *bool `json:"asked"`
	Called   *bool `json:"called"`
	Returned *bool `json:"returned"`
	// StoppedAt is the first milestone not reached ("" when all were, or none could be
	// observed further).
	StoppedAt string `json:"stoppedAt,omitempty"`
}

// MCPMilestones name the milestones of an MCPTruth, in the order an agent reaches them.
var MCPMilestones = []string{"delivered", "connected", "listed", "visible", "asked", "called", "returned"}

// Milestones are m's milestones in the order of MCPMilestones: true when seen, false when it
// could have been seen and was not, nil when it could not be observed.
func (m MCPTruth) Milestones() []*bool {
	return []*bool{m.Delivered, m.Connected, m.Listed, m.Visible, m.Asked, m.Called, m.Returned}
}

// Reached lists the milestones m reached, in order ("reached none" when it reached none), and
// says how far it could be observed.
func (m MCPTruth) Reached() string {
	var got []string
	observed := 0
	for i, b := range m.Milestones() {
		if b != nil {
			observed = i + 1
			if *b {
				got = append(got, MCPMilestones[i])
			}
		}
	}
	if observed == 0 {
		return "not observed"
	}
	s := "reached " + strings.Join(got, ", ")
	if len(got) == 0 {
		s = "reached none"
	}
	if observed < len(MCPMilestones) {
		s += " (observed up to " + MCPMilestones[observed-1] + ")"
	}
	return s
}

// TurnOutcome is how a scenario came out.
type TurnOutcome string

// Turn outcomes.
const (
	TurnPassed TurnOutcome = "passed"
	TurnFailed TurnOutcome = "failed"
	TurnNotRun TurnOutcome = "not-run"
)

// TurnRun is one prompt of a scenario: what came back on the wire and what reached the model.
type TurnRun struct {
	// Seq is the session/prompt request's line and AnswerSeq its answer's (0: none); Ms the
	// time to the answer.
	Seq       int64   `json:"seq"`
	AnswerSeq int64   `json:"answerSeq,omitempty"`
	Ms        float64 `json:"ms"`
	// StopReason is the answer's; Code and Message an error answer's.
	StopReason string `json:"stopReason,omitempty"`
	Code       *int   `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
	// TextIn are the update kinds that carried the assistant's text (agent_message_chunk, or
	// something else); Text is the start of that text.
	TextIn []string `json:"textIn"`
	Text   string   `json:"text,omitempty"`
	// ThoughtChunks counts agent_thought_chunk updates; Usage says a usage_update came.
	ThoughtChunks int  `json:"thoughtChunks"`
	Usage         bool `json:"usage"`
	// FirstChunkMs is the time from the prompt to the first text or thought chunk;
	// AnswerAfterChunkMs the time from the last of them to the session/prompt answer (how long
	// a client waits for the end of a turn whose text it already has).
	FirstChunkMs       *float64 `json:"firstChunkMs"`
	AnswerAfterChunkMs *float64 `json:"answerAfterChunkMs,omitempty"`
	// ToolCalls are the tool calls the turn reported, by id, with their last kind and status.
	ToolCalls []ToolCallTruth `json:"toolCalls,omitempty"`
	// UpdatesAfter counts updates of the turn (text, thought, tool calls) sent after its
	// answer: a turn ends with its answer.
	UpdatesAfter int `json:"updatesAfter"`
	// ModelRequests counts the model requests made during the turn (before its answer);
	// Models the models they asked for; Reasoning their reasoning settings.
	// ModelRequestsAfter counts those the agent made after it had answered the turn.
	ModelRequests      int      `json:"modelRequests"`
	ModelRequestsAfter int      `json:"modelRequestsAfter,omitempty"`
	Models             []string `json:"models,omitempty"`
	Reasoning          []string `json:"reasoning,omitempty"`
	// ModelAnswered are the emulator's complete answers during the turn, in order (text,
	// toolCall, structured, error): what the agent had to deliver.
	ModelAnswered []string `json:"modelAnswered,omitempty"`
	// UnansweredAfterCancel: the prompt had no answer within the turn's budget, acpprobe sent
	// session/cancel, and still none came while the agent ran on (an agent must answer a
	// cancelled prompt, with stopReason cancelled).
	UnansweredAfterCancel bool `json:"unansweredAfterCancel,omitempty"`
}

// ToolCallTruth is a tool call a turn reported.
type ToolCallTruth struct {
	ID     string `json:"id"`
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status,omitempty"`
}

// ShapeDelivery is one content block type sent on the live session.
type ShapeDelivery struct {
	// Type is the content block type; Seq the line of the prompt that carried it.
	Type string `json:"type"`
	Seq  int64  `json:"seq"`
	// Advertised says whether promptCapabilities allows it (text and resource_link always).
	Advertised bool `json:"advertised"`
	// Accepted: the prompt was not refused as invalid; Code is a refusal's code.
	Accepted bool `json:"accepted"`
	Code     *int `json:"code,omitempty"`
	// Reached: the model request of the turn carried a block of that kind.
	Reached bool `json:"reached"`
	// ReachedAs are the kinds the model request's last user message had.
	ReachedAs []string `json:"reachedAs,omitempty"`
}

// ModelTruth is one selected model (or thought level) and what the model was asked for.
type ModelTruth struct {
	// Option is the config option's id, or "session/set_model" for the legacy method.
	Option string `json:"option"`
	Value  string `json:"value"`
	// Set: the selection was accepted; Seq is the selecting request's line.
	Set bool  `json:"set"`
	Seq int64 `json:"seq"`
	// Requested are the models (for a thought level: the reasoning settings) the turn's model
	// requests asked for.
	Requested []string `json:"requested"`
	// Reached: the requests asked for the selected value (true), for another value of the same
	// option (false), or nothing tells (null: an alias such as "default", no request).
	Reached *bool `json:"reached"`
	// Alias: the value names a choice rather than a model or a level ("default", "auto",
	// "enabled"): it may well lead to the same requests as another value.
	Alias bool `json:"alias,omitempty"`
	// Refused is the error that refused the selection ("-32602 Invalid params"; "" when Set).
	Refused string `json:"refused,omitempty"`
}

// PermissionTruth is what the agent did when the model asked to write a file.
type PermissionTruth struct {
	// PermissionRunInfo is the mode the run was in and how acpprobe answered: a write
	// without asking is a violation only in a mode that promises to ask.
	record.PermissionRunInfo
	// Reason says why the run could not happen (the mode could not be selected; "" when it
	// ran). Seq is the line of its prompt.
	Reason string `json:"reason,omitempty"`
	Seq    int64  `json:"seq,omitempty"`
	// ToolCall: the agent reported a tool call for the write.
	ToolCall bool `json:"toolCall"`
	// Asked: it sent session/request_permission before writing; Answered is acpprobe's
	// answer (the reject option's id, or cancelled).
	Asked    bool   `json:"asked"`
	AskedSeq int64  `json:"askedSeq,omitempty"`
	Answered string `json:"answered,omitempty"`
	// FileWritten: the file existed afterwards.
	FileWritten bool `json:"fileWritten"`
	// ToolStatus is the tool call's last status; StopReason the turn's.
	ToolStatus string `json:"toolStatus,omitempty"`
	StopReason string `json:"stopReason,omitempty"`
	// Offered says whether the model found a file-writing tool among those the agent offered.
	Offered bool `json:"offered"`
}

// PermissionRuns are the runs of the permission scenario. A result written before the
// scenario made several runs has one object there, whose "answer" was the answered option:
// it reads as one run, answered as it says.
type PermissionRuns []PermissionTruth

// UnmarshalJSON reads a list of runs, or the one run of an older result.
func (p *PermissionRuns) UnmarshalJSON(b []byte) error {
	if trimmed := bytes.TrimSpace(b); len(trimmed) == 0 || trimmed[0] != '{' {
		return json.Unmarshal(b, (*[]PermissionTruth)(p))
	}
	var old struct {
		PermissionTruth
		Answer string `json:"answer"`
	}
	if err := json.Unmarshal(b, &old); err != nil {
		return err
	}
	run := old.PermissionTruth
	run.Answered, run.Answer, run.Default = old.Answer, record.AnswerReject, true
	if old.Answer == "cancelled" {
		run.Answer = record.AnswerCancelled
	}
	*p = PermissionRuns{run}
	return nil
}

// CancelTruth is how a turn ended after session/cancel, and whether the agent then still
// worked.
type CancelTruth struct {
	// Sent is whether session/cancel was sent while the turn was streaming; Seq is its line.
	Sent bool  `json:"sent"`
	Seq  int64 `json:"seq,omitempty"`
	// ModelDone: the emulator had finished the model's answer before session/cancel was sent
	// (an agent that buffers the stream): a turn that then ends on its own was not cancellable.
	ModelDone bool `json:"modelDone"`
	// StopReason is the cancelled turn's; WithinMs the time from the cancel to the answer.
	StopReason string   `json:"stopReason,omitempty"`
	WithinMs   *float64 `json:"withinMs"`
	// UpdatesAfter counts the turn's updates after its answer.
	UpdatesAfter int `json:"updatesAfter"`
	// NextStopReason, NextText and NextModelRequests describe the turn after the cancel.
	NextStopReason    string `json:"nextStopReason,omitempty"`
	NextText          bool   `json:"nextText"`
	NextModelRequests int    `json:"nextModelRequests"`
}
