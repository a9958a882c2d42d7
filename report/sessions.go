package report

import (
	"fmt"
	"strconv"
	"strings"
)

// SessionsTruth is what the sessions scenario saw of session continuity: after a turn with a
// tool call on the live session, fresh agent processes in the same sandbox (the same HOME)
// list, load, fork, close and resume that session. A part is null when the agent does not
// advertise it, or when it could not be reached (Reason says which, in each part's Skipped).
type SessionsTruth struct {
	// SessionID is the live session's id; Cwd the cwd it was created in.
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	// Live is what the live turn showed: the items a replay must carry.
	Live SessionHistory `json:"live"`
	// Advertised are the session methods the agent advertises, of load, resume, list, close
	// and fork.
	Advertised []string `json:"advertised"`
	// List, Load, Fork, Close and Resume are each part's facts (null: not advertised, or not
	// reached).
	List   *SessionList   `json:"list"`
	Load   *SessionLoad   `json:"load"`
	Fork   *SessionFork   `json:"fork"`
	Close  *SessionClose  `json:"close"`
	Resume *SessionResume `json:"resume"`
}

// SessionHistory is the conversation of a turn as session/update notifications show it.
type SessionHistory struct {
	// UserText: the turn's prompt text came as user_message_chunk (a live turn need not echo
	// it; a replay must carry it).
	UserText bool `json:"userText"`
	// AgentText: the model's reply (TurnReplyMarker) came as agent_message_chunk.
	AgentText bool `json:"agentText"`
	// ToolCalls are the tool calls, by id, with their last kind and status.
	ToolCalls []ToolCallTruth `json:"toolCalls"`
	// Updates counts the session/update notifications.
	Updates int `json:"updates"`
}

// SessionCall is one session method call of the scenario and its answer.
type SessionCall struct {
	// Seq is the request's line, AnswerSeq its answer's (0: none within the budget).
	Seq       int64 `json:"seq"`
	AnswerSeq int64 `json:"answerSeq,omitempty"`
	// Code and Message are an error answer's.
	Code    *int   `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// OK reports whether the call was answered with a result.
func (c SessionCall) OK() bool { return c.AnswerSeq != 0 && c.Code == nil }

// Outcome says how the call ended, for findings and reports: "no answer", the error's code
// and message, or "answered".
func (c SessionCall) Outcome() string {
	switch {
	case c.AnswerSeq == 0:
		return "no answer"
	case c.Code != nil:
		return fmt.Sprintf("%d %q", *c.Code, c.Message)
	}
	return "answered"
}

// SessionList is session/list on a fresh process: did it list the session, in its real cwd?
type SessionList struct {
	SessionCall
	// Listed: the live session was among the sessions listed; Cwd is the cwd listed for it.
	Listed bool   `json:"listed"`
	Cwd    string `json:"cwd,omitempty"`
}

// SessionLoad is session/load of the live session on a fresh process: its replay against
// the live turn.
type SessionLoad struct {
	SessionCall
	// Replay is what the updates between the request and its answer carried.
	Replay SessionHistory `json:"replay"`
	// UpdatesAfter counts the session's updates after the answer: a replay comes before it.
	UpdatesAfter int `json:"updatesAfter"`
	// Missing lists the items of the live turn the replay does not carry, or carries changed
	// ("tool call X: status failed, replayed completed").
	Missing []string `json:"missing"`
}

// SessionFork is session/fork of the live session: a new id, and the history up to the fork
// (seen by loading the fork, when session/load is advertised).
type SessionFork struct {
	SessionCall
	// NewID is the fork's id; Distinct says it differs from the live session's.
	NewID    string `json:"newId,omitempty"`
	Distinct bool   `json:"distinct"`
	// Load is session/load of the fork (null when load is not advertised or the fork failed).
	Load *SessionLoad `json:"load"`
}

// SessionClose is session/close: N load/close cycles of the live session on one process,
// counting the agent's other processes after each, then a prompt on the closed session.
type SessionClose struct {
	// Cycles counts the load/close cycles that closed; Errors the close calls that failed.
	Cycles int `json:"cycles"`
	// Before is the number of the agent's other processes before the first load; Processes
	// the number after each close (null when they cannot be counted: no /proc).
	Before    *int  `json:"before"`
	Processes []int `json:"processes"`
	// Grew: the count after the last close is higher than after the first.
	Grew bool `json:"grew"`
	// Close is the first session/close call.
	Close SessionCall `json:"close"`
	// Prompt is a session/prompt on the closed session (it must be refused): its call, and
	// whether it ran a turn (its model requests).
	Prompt        *SessionCall `json:"prompt"`
	PromptStop    string       `json:"promptStop,omitempty"`
	ModelRequests int          `json:"modelRequests"`
}

// Counts lists the other processes counted after each close ("1, 1, 2"; "" when none).
func (c SessionClose) Counts() string {
	s := make([]string, len(c.Processes))
	for i, n := range c.Processes {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// BeforeCount is the count before the first load, or "not counted".
func (c SessionClose) BeforeCount() string {
	if c.Before == nil {
		return "not counted"
	}
	return strconv.Itoa(*c.Before)
}

// SessionResume is session/resume of the live session on a fresh process: it must not
// replay the history.
type SessionResume struct {
	SessionCall
	// Replayed counts the updates sent for the session after the request that repeat its
	// history: the turn's user message, the answer's text, its tool calls. What an agent says
	// afresh on resuming is not history (codex-acp 2.6.0 sends an agent_message_chunk "Config
	// warning: …" after every session/resume and session/new).
	Replayed int `json:"replayed"`
}
