package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/record"
)

// ResultSchema names the version of the Result document.
const ResultSchema = "acpprobe.result/v1"

// Result is everything a probe learned about an agent. Its JSON field names are those of
// acp-probe's AgentProbeResult (it is a superset), and the document is described by
// report/result.schema.json. Every list is present (possibly empty) so consumers never need
// to tell null from [].
type Result struct {
	Schema          string              `json:"schema"`
	Agent           AgentRef            `json:"agent"`
	ProtocolVersion *int                `json:"protocolVersion"`
	AgentInfo       *acp.Implementation `json:"agentInfo"`
	Capabilities    Capabilities        `json:"capabilities"`
	// AuthMethods are verbatim, including type, vars and _meta.
	AuthMethods []json.RawMessage `json:"authMethods"`
	Auth        AuthStatus        `json:"auth"`
	// Models are the models the agent declares in session/new (`models.availableModels`,
	// removed from ACP in 2026-06 and still sent by many agents), as acp-probe's `models`:
	// for display. They may hold ids set_config_option will not accept; ModelConfig.Values
	// are the ones it does.
	Models        []acp.Model        `json:"models"`
	Modes         []acp.Mode         `json:"modes"`
	CurrentModeID string             `json:"currentModeId,omitempty"`
	ConfigOptions []acp.ConfigOption `json:"configOptions"`
	Reasoning     *Reasoning         `json:"reasoning"`
	ModelConfig   *ModelConfig       `json:"modelConfig"`
	// SupportsConfigOption says whether session/set_config_option is implemented; null when
	// method detection did not decide it (not probed, no answer).
	SupportsConfigOption *bool                    `json:"supportsConfigOption"`
	Methods              map[string]MethodSupport `json:"methods"`
	Timings              Timings                  `json:"timings"`
	Notifications        Notifications            `json:"notifications"`
	// AgentRequests counts the requests the agent sent to the probe, by method (all refused).
	AgentRequests map[string]int   `json:"agentRequests"`
	StderrTail    string           `json:"stderrTail"`
	StderrBytes   int64            `json:"stderrBytes"`
	Exit          *record.ExitInfo `json:"exit"`
	Findings      []Finding        `json:"findings"`
	// ACPSchema names the ACP schema set the findings judged the agent's messages against
	// (absent from results written before it was recorded).
	ACPSchema *SchemaSet `json:"acpSchema,omitempty"`
	// Extensions is the inventory of vendor extensions seen in the session (filled with the
	// findings).
	Extensions *extensions.Inventory `json:"extensions,omitempty"`
	// ZeroMeta is the zero-_meta contract as the run exercised it: the standard-plane requests
	// the client (acpprobe, or a tapped editor) sent without any _meta and how they were answered.
	ZeroMeta *ZeroMeta `json:"zeroMeta,omitempty"`
	// PromptShapes is filled by the prompt-shape probe (acpprobe check --prompt-shapes).
	PromptShapes *PromptShapes `json:"promptShapes,omitempty"`
	// Turns are the prompt turns of acpprobe turn (and check --turns), one per scenario.
	Turns []Turn `json:"turns,omitempty"`
	// Route is how acpprobe turn pointed the agent at the model emulator (absent without
	// prompt turns).
	Route *TurnRoute `json:"route,omitempty"`
	// SideEffects is what the run did to the machine, under the isolation it had (a live run
	// of acpprobe.Run; absent from reports of records that do not say).
	SideEffects *SideEffects `json:"sideEffects,omitempty"`
	// AuthAB is the auth oracle of --auth-ab: the user's identity against an empty one.
	AuthAB *AuthAB `json:"authAB,omitempty"`
	// Client is the client profile acpprobe probed as (--client-profile; absent without it):
	// what it declared, and what acpprobe answers instead of serving it.
	Client *Client `json:"client,omitempty"`
	// Requirements is a host's checklist judged on this agent (--require; absent without it).
	Requirements *Checklist `json:"requirements,omitempty"`
	// Verdict is filled by acpprobe check: how the findings compare with --fail-on and the
	// baseline.
	Verdict *Verdict `json:"verdict,omitempty"`
	Error   *Error   `json:"error,omitempty"`
	// Coverage says what of the session the report could not look at (absent when it saw
	// everything).
	Coverage *Coverage `json:"coverage,omitempty"`
	Raw      Raw       `json:"raw"`
}

// SchemaSet names an ACP schema set (acp/schema): Name as --schema takes it (v1-next, v1,
// v1-unstable, v2, …) and Version, the schema release it is (">= 1.25.0, as shipped in …").
type SchemaSet struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Coverage says what of the session a report left out. Frames beyond the record's memory
// budget were counted — notifications, requests and stderr are in the totals — but neither
// kept nor judged. When the analysis ran out of time, the conformance passes it names did not
// judge the whole record, and the totals may be partial.
type Coverage struct {
	FoldedFrames int64 `json:"foldedFrames"`
	FoldedBytes  int64 `json:"foldedBytes"`
	// Unjudged names the conformance passes that did not judge the whole record before the
	// analysis's deadline (see conformance.Outcome.Unjudged).
	Unjudged []string `json:"unjudged,omitempty"`
	// Partial is true when the analysis ended before deriving had read the whole record (see
	// derive.Connection): the totals and timings hold what it had counted.
	Partial bool `json:"partial,omitempty"`
	// Note says it in words (Explain writes it from the fields above).
	Note string `json:"note"`
}

// Explain writes c.Note from c's fields: what beyond the memory budget was counted and not
// kept, whether the totals are partial, and which passes did not judge the whole record. It
// is the one place the note is worded; nil is left as it is.
func (c *Coverage) Explain() {
	if c == nil {
		return
	}
	var parts []string
	if c.FoldedFrames > 0 || c.FoldedBytes > 0 {
		parts = append(parts, fmt.Sprintf("%d frames (%d bytes) beyond the record's memory budget were counted but not kept: "+
			"they are in the totals, and no check judged their content (the transcript, if any, has them whole)", c.FoldedFrames, c.FoldedBytes))
	}
	if c.Partial {
		parts = append(parts, "the analysis ended (interrupted, or out of time) before it had read the whole record: notification and request counts, stderr and timings hold what it had counted")
	}
	if len(c.Unjudged) > 0 {
		parts = append(parts, "the analysis ran out of time: these passes did not judge the whole record (their findings hold what they judged before): "+strings.Join(c.Unjudged, ", "))
	}
	c.Note = strings.Join(parts, "; ")
}

// AgentRef says which agent was probed and when.
type AgentRef struct {
	ID         *string  `json:"id"`      // registry or config id; null for a raw command
	Command    string   `json:"command"` // the command line as given
	Argv       []string `json:"argv"`
	Cwd        string   `json:"cwd"`
	ProbedAt   string   `json:"probedAt"` // RFC 3339, UTC
	DurationMs float64  `json:"durationMs"`
	PID        int      `json:"pid,omitempty"`
}

// Capabilities are the agent's capabilities as booleans: an object capability is true when
// present (the verbatim object stays in Raw.Initialize).
type Capabilities struct {
	LoadSession         bool                `json:"loadSession"`
	PromptCapabilities  PromptCapabilities  `json:"promptCapabilities"`
	McpCapabilities     McpCapabilities     `json:"mcpCapabilities"`
	SessionCapabilities SessionCapabilities `json:"sessionCapabilities"`
	Auth                AuthCapabilities    `json:"auth"`
	Experimental        Experimental        `json:"experimental"`
	// MetaKeys are the top-level keys of agentCapabilities._meta (vendor capabilities).
	MetaKeys []string `json:"metaKeys"`
}

// PromptCapabilities say which content a prompt may carry beyond text and resource links.
type PromptCapabilities struct {
	Image           bool `json:"image"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embeddedContext"`
}

// McpCapabilities say which MCP transports the agent connects to (stdio is mandatory).
type McpCapabilities struct {
	HTTP bool `json:"http"`
	SSE  bool `json:"sse"`
	ACP  bool `json:"acp"`  // unstable MCP-over-ACP
	Meta bool `json:"meta"` // _meta present on mcpCapabilities
}

// SessionCapabilities are the optional session methods the agent advertises.
type SessionCapabilities struct {
	Close                 bool `json:"close"`
	List                  bool `json:"list"`
	Resume                bool `json:"resume"`
	Fork                  bool `json:"fork"`
	AdditionalDirectories bool `json:"additionalDirectories"`
	Delete                bool `json:"delete"`
}

// AuthCapabilities are agentCapabilities.auth.
type AuthCapabilities struct {
	Logout bool `json:"logout"`
}

// Experimental are capabilities outside stable v1 (presence). (agentCapabilities.auth is
// stable: it is Capabilities.Auth.)
type Experimental struct {
	NES              bool `json:"nes"`
	Providers        bool `json:"providers"`
	PositionEncoding bool `json:"positionEncoding"`
}

// AuthState is the answer of AuthStatus.
type AuthState string

// Authentication statuses.
const (
	AuthAuthenticated AuthState = "authenticated" // session/new succeeded without authenticate
	AuthRequired      AuthState = "auth_required" // the agent said authentication is needed
	AuthUnknown       AuthState = "unknown"       // the probe could not tell
)

// AuthStatus is the honest answer to "can a client use this agent without logging in?".
type AuthStatus struct {
	Status   AuthState `json:"status"`
	Evidence []string  `json:"evidence"`
}

// Reasoning points at the thought_level config option.
type Reasoning struct {
	ConfigID     string   `json:"configId"`
	Values       []string `json:"values"`
	DefaultValue string   `json:"defaultValue,omitempty"`
}

// ModelConfig points at the model config option: Values are the ids set_config_option accepts.
type ModelConfig struct {
	ConfigID     string   `json:"configId"`
	Values       []string `json:"values"`
	CurrentValue string   `json:"currentValue,omitempty"`
}

// Support says whether a method exists.
type Support string

// Method support values.
const (
	Supported   Support = "supported"   // answered with anything but -32601
	Unsupported Support = "unsupported" // answered -32601 method not found
	Unknown     Support = "unknown"     // no answer within the request budget
	Skipped     Support = "skipped"     // not probed (--no-methods, or the agent was gone)
)

// MethodSupport is how a method answered a side-effect-free call.
type MethodSupport struct {
	Support Support `json:"support"`
	Code    *int    `json:"code"` // the error code of the answer; null for a result or no answer
	Message string  `json:"message,omitempty"`
	Ms      float64 `json:"ms"`
	// DetectedBy says how support was decided: invalid-params (the handler never ran) or
	// nonexistent-session (the fallback, and recordings made before invalid-params detection).
	DetectedBy DetectedBy `json:"detectedBy,omitempty"`
}

// DetectedBy is how a method's support was decided (MethodSupport.DetectedBy).
type DetectedBy string

// The forms of method detection.
const (
	// DetectedByInvalidParams: the method was asked with params no handler can accept, so the
	// dispatcher answered and the handler never ran.
	DetectedByInvalidParams DetectedBy = "invalid-params"
	// DetectedByNonexistentSession: the method was asked well-formed, on a session that does
	// not exist (the fallback, and recordings made before invalid-params detection).
	DetectedByNonexistentSession DetectedBy = "nonexistent-session"
)

// Timings of the probe's steps, in milliseconds.
type Timings struct {
	SpawnToInitializeMs float64 `json:"spawnToInitializeMs"`
	InitializeMs        float64 `json:"initializeMs"`
	SessionNewMs        float64 `json:"sessionNewMs"`
	MethodsMs           float64 `json:"methodsMs"`
	TeardownMs          float64 `json:"teardownMs"`
	TotalMs             float64 `json:"totalMs"`
}

// Notifications counts what the agent announced.
type Notifications struct {
	Total           int            `json:"total"`
	ByMethod        map[string]int `json:"byMethod"`
	BySessionUpdate map[string]int `json:"bySessionUpdate"`
}

// Raw holds the verbatim results of initialize and session/new (null when there was none).
type Raw struct {
	Initialize json.RawMessage `json:"initialize"`
	NewSession json.RawMessage `json:"newSession"`
}

// ErrorCode says why a probe could not complete.
type ErrorCode string

// Error codes of a probe that could not complete.
const (
	ErrSpawnFailed       ErrorCode = "spawn_failed"
	ErrInitializeTimeout ErrorCode = "initialize_timeout"
	ErrSessionNewTimeout ErrorCode = "session_new_timeout"
	ErrAuthRequired      ErrorCode = "auth_required"
	ErrProtocolMismatch  ErrorCode = "protocol_mismatch"
	ErrAgentCrashed      ErrorCode = "agent_crashed"
	// ErrMetadataRequired: the agent refused the handshake for lack of vendor _meta that a
	// standard client never sends (a private channel; see extensions.zero-meta-contract).
	ErrMetadataRequired ErrorCode = "metadata_required"
	ErrInterrupted      ErrorCode = "interrupted"
	// ErrTruncated: the record ends without the events that close a session (a transcript
	// cut short); nothing after the cut is known.
	ErrTruncated ErrorCode = "truncated"
	ErrUnknown   ErrorCode = "unknown"
)

// Error says why a probe could not complete. What was learned before it is still in the Result.
type Error struct {
	Code    ErrorCode    `json:"code"`
	Stage   record.Stage `json:"stage"`
	Message string       `json:"message"`
	// AgentError is the agent's error object, verbatim, when the agent answered with one.
	AgentError json.RawMessage `json:"agentError,omitempty"`
	Stderr     string          `json:"stderr,omitempty"`
	// Hint says how to get past an agent error whose cause acpprobe knows (derive's table of
	// known agent errors); empty for the others.
	Hint string `json:"hint,omitempty"`
}

func (e *Error) Error() string { return string(e.Code) + " at " + string(e.Stage) + ": " + e.Message }

// Tier is how severe a finding is.
type Tier string

// Tiers of findings, from most to least severe.
const (
	TierMandatory  Tier = "MANDATORY"  // a MUST of the protocol is broken
	TierCapability Tier = "CAPABILITY" // an advertised capability does not work
	TierAdvisory   Tier = "ADVISORY"   // a SHOULD, or a robustness problem
	TierInfo       Tier = "INFO"       // worth knowing
)

// Tiers lists the tiers from most to least severe.
var Tiers = []Tier{TierMandatory, TierCapability, TierAdvisory, TierInfo}

// Rank orders tiers: 0 is the most severe; unknown tiers rank last.
func (t Tier) Rank() int {
	for i, x := range Tiers {
		if x == t {
			return i
		}
	}
	return len(Tiers)
}

// Finding is one departure from the protocol (or a fact worth knowing), found in the recorded
// session. Errors of the probe itself are never findings.
type Finding struct {
	ID       string          `json:"id"`
	Tier     Tier            `json:"tier"`
	Title    string          `json:"title"`
	Message  string          `json:"message"`
	Pointer  string          `json:"pointer,omitempty"`
	Seq      int64           `json:"seq,omitempty"`
	SpecRef  string          `json:"specRef,omitempty"`
	Evidence json.RawMessage `json:"evidence,omitempty"`
	// More counts the further findings of the same check the evaluation did not list: a
	// check lists at most 10, and the last one listed carries the count of the rest.
	More int `json:"more,omitempty"`
	// Known is set when a baseline lists the finding's id; KnownReason says why it is accepted.
	Known       bool   `json:"known,omitempty"`
	KnownReason string `json:"knownReason,omitempty"`
}

// Text is the finding's message as a person reads it: the message, and how many more like it
// were not listed.
func (f Finding) Text() string {
	if f.More > 0 {
		return fmt.Sprintf("%s (and %d more like this)", f.Message, f.More)
	}
	return f.Message
}

// PromptShapes is what session/prompt says about prompt shapes no agent can start a turn on:
// each probe's answer verbatim, and the content-block branches inferred from the errors.
type PromptShapes struct {
	// Session says which session the shapes named: the probes use a session id that does not
	// exist, so even an agent that accepted a shape could not start a turn.
	Session string `json:"session"`
	// SessionCreated tells whether session/new had succeeded (the shapes do not use it).
	SessionCreated bool         `json:"sessionCreated"`
	Probes         []ShapeProbe `json:"probes"`
	// ErrorStyle is how the agent words schema errors: zod-union, zod-tree, zod-issues, serde,
	// or text.
	ErrorStyle       string        `json:"errorStyle"`
	InferredBranches []ShapeBranch `json:"inferredBranches"`
	// RequiredFields are fields the errors name as missing without saying for which branch.
	RequiredFields []string `json:"requiredFields,omitempty"`
	// InferenceTruncated is true when the errors named more branches or fields than the
	// inference keeps (64 branches, 64 fields per branch, 64 fields without a branch): the
	// lists above hold the first ones seen.
	InferenceTruncated bool `json:"inferenceTruncated,omitempty"`
	// Prompt is the --allow-prompt run: one valid text prompt, cancelled at once.
	Prompt *PromptRun `json:"prompt,omitempty"`
}

// ShapeProbe is one prompt shape and the agent's answer.
type ShapeProbe struct {
	Name    string          `json:"name"`
	Prompt  json.RawMessage `json:"prompt"`
	Seq     int64           `json:"seq,omitempty"`
	Outcome ShapeOutcome    `json:"outcome"`
	Code    *int            `json:"code"`
	Answer  json.RawMessage `json:"answer"`
}

// ShapeOutcome is what an agent did with one prompt shape.
type ShapeOutcome string

// Shape outcomes.
const (
	// ShapeRejected: a shape error.
	ShapeRejected ShapeOutcome = "rejected"
	// ShapeAccepted: the shape passed validation (a result, or the same answer as the valid
	// control shape from an agent that validates before it looks the session up).
	ShapeAccepted ShapeOutcome = "accepted"
	// ShapeUndetermined: answered like the control by an agent that looks the session up
	// first.
	ShapeUndetermined ShapeOutcome = "undetermined"
	// ShapeNoAnswer: no answer within the budget.
	ShapeNoAnswer ShapeOutcome = "no-answer"
)

// ShapeBranch is one content-block variant the agent's validator accepts.
type ShapeBranch struct {
	Type     string   `json:"type"`
	Required []string `json:"required"`
}

// PromptRun is the result of sending one valid prompt (--allow-prompt) and cancelling it.
type PromptRun struct {
	// SchemaAccepted: the prompt was not rejected as malformed.
	SchemaAccepted bool `json:"schemaAccepted"`
	// Answered: the session/prompt request got an answer within the window; StopReason is it.
	Answered   bool   `json:"answered"`
	StopReason string `json:"stopReason,omitempty"`
	Code       *int   `json:"code"`
	// Updates counts the session/update kinds that arrived in the window.
	Updates  map[string]int `json:"updates"`
	WindowMs float64        `json:"windowMs"`
}

// Verdict is how acpprobe check judged the findings.
type Verdict struct {
	FailOn Tier `json:"failOn"`
	// Failed is true when a finding not in the baseline is at or above FailOn.
	Failed bool `json:"failed"`
	// Counts are the findings per tier, not counting known ones.
	Counts   map[Tier]int `json:"counts"`
	Known    int          `json:"known"`
	Baseline string       `json:"baseline,omitempty"`
	// Stale are baseline entries that no longer occur.
	Stale []BaselineEntry `json:"stale"`
}

// BaselineEntry is one known finding id and why it is accepted.
type BaselineEntry struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// ResultJSONSchema is the JSON Schema (draft 2020-12) of the Result document.
//
//go:embed result.schema.json
var ResultJSONSchema []byte

// ZeroMeta is the zero-_meta contract of the standard plane (seed 001's, for every agent): a
// client that sends no vendor _meta must get through initialize, session/new and a prompt turn.
type ZeroMeta struct {
	// Outcome is held (each of the three worked without _meta), broken (an answer demanded
	// metadata: Reason names the key) or unverified (one was not exercised or failed for
	// another reason: Reason says which).
	Outcome ZeroMetaOutcome `json:"outcome"`
	Reason  string          `json:"reason,omitempty"`
	// Steps are the requests sent without _meta, in order.
	Steps []ZeroMetaStep `json:"steps"`
}

// ZeroMetaOutcome is how the zero-_meta contract came out.
type ZeroMetaOutcome string

// The outcomes.
const (
	ZeroMetaHeld       ZeroMetaOutcome = "held"
	ZeroMetaBroken     ZeroMetaOutcome = "broken"
	ZeroMetaUnverified ZeroMetaOutcome = "unverified"
)

// ZeroMetaStep is one standard-plane request sent without _meta.
type ZeroMetaStep struct {
	Method    string `json:"method"`
	Seq       int64  `json:"seq"`
	AnswerSeq int64  `json:"answerSeq,omitempty"`
	// Outcome is ok, error, unanswered or "no stopReason" (a prompt answered without one);
	// Error is an error answer's message, Demands the metadata key it names as missing.
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	Demands string `json:"demands,omitempty"`
}
