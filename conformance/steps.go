package conformance

import (
	"context"
	"encoding/json"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Methods and payloads of the active checks. They are constants so that the passes recognise
// them in any recording. The extension step's unknown request is probe.DetectionControlMethod,
// the method method detection asks as its control: the same meaning, one spelling (each is
// judged within its own part of the record: detection before the first step, the extension
// step within its step range).
const (
	UnknownNotificationMethod = "_acpprobe/unknown-notification"
	// invalidPrompt is a prompt that is not an array: invalid params for any agent.
	invalidPrompt = "acpprobe: a prompt must be an array, this is a string"
	shapeText     = "acpprobe prompt-shape probe"
)

// StepOptions choose the active steps.
type StepOptions struct {
	PromptShapes bool // send the prompt shapes of --prompt-shapes
	AllowPrompt  bool // send one valid prompt and cancel it (may spend tokens)
	// AuthStatus asks auth/status when the agent advertises it (the auth oracle, --auth-ab).
	AuthStatus bool
}

// Steps returns the active checks to pass to probe.Options.Steps, in the order they run.
func Steps(o StepOptions) []probe.Step {
	steps := []probe.Step{extensionStep{}, invalidParamsStep{}}
	if o.PromptShapes {
		steps = append(steps, shapesStep{})
	}
	if o.AllowPrompt {
		steps = append(steps, promptStep{})
	}
	if o.AuthStatus {
		steps = append(steps, AuthStatusStep)
	}
	return steps
}

// ForkProbe returns the steps of the fork-probe connection that check opens after the main
// one (an initialize-only connection, record.PurposeForkProbe, ended at once), given the main
// connection's record: a fork of a session that does not exist. It returns nil, and no such
// connection is needed, unless the main connection's method detection found session/fork
// supported.
//
// The fork has a connection of its own because a fork of a made-up session is not harmless
// on the main one: claude-agent-acp then no longer exits when its stdin closes, so the main
// connection's protocol.stdin-exit would judge what the probe caused. It is sent right after
// initialize, without session/new, which would create a real session: the question is only
// whether the agent creates one from nothing (claude-agent-acp answers -32002 either way).
func ForkProbe(main *record.Index) []probe.Step {
	if probe.Derive(main, nil).Methods[acp.MethodSessionFork].Support != report.Supported {
		return nil
	}
	return []probe.Step{forkStep{}}
}

// AuthStatusStep asks auth/status when the agent advertises it (agentCapabilities.auth.status,
// unstable): the state it answers is one of the auth oracle's signals (--auth-ab). The method
// changes nothing by the spec, and must not be refused with -32000.
var AuthStatusStep probe.Step = authStatusStep{}

type authStatusStep struct{}

func (authStatusStep) Name() string { return "auth-status" }

func (authStatusStep) Run(ctx context.Context, s *probe.Session) {
	init := record.New(s.Log().Frames()).First(acp.MethodInitialize)
	if init == nil || init.Answer == nil || init.Answer.Msg == nil ||
		!acp.ParseInitializeResult(init.Answer.Msg.Result).Capabilities.Object("auth").Has("status") {
		record.StepSkipped.Emit(s.Log(), record.StepInfo{Name: authStatusStep{}.Name(), Reason: "auth/status is not advertised"})
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, acp.MethodAuthStatus, map[string]any{})
}

// extensionStep sends an unknown _-prefixed notification, then an unknown _-prefixed request:
// the request must be answered -32601, and its answer also shows the notification did no harm.
type extensionStep struct{}

func (extensionStep) Name() string { return "extension-methods" }

func (extensionStep) Run(ctx context.Context, s *probe.Session) {
	_ = s.Notify(UnknownNotificationMethod, map[string]any{})
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, record.DetectionControlMethod, map[string]any{})
}

// invalidParamsStep sends session/prompt with a string prompt on a session that does not
// exist: invalid params, which should be -32602.
type invalidParamsStep struct{}

func (invalidParamsStep) Name() string { return "invalid-params" }

func (invalidParamsStep) Run(ctx context.Context, s *probe.Session) {
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": record.NonexistentSessionID, "prompt": invalidPrompt})
}

// forkStep forks a session that does not exist, with a valid cwd: the agent must refuse. One
// that answers with a session created it from nothing (sudocode does), a side effect that
// method detection, which asks with invalid params, never causes; check reports it. It runs
// on the fork-probe connection (ForkProbe).
type forkStep struct{}

func (forkStep) Name() string { return "fork-nonexistent-session" }

func (forkStep) Run(ctx context.Context, s *probe.Session) {
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, acp.MethodSessionFork, probe.MethodParams(acp.MethodSessionFork, s.Cwd))
}

// shape is one prompt the prompt-shape probe sends.
type shape struct {
	name   string
	prompt json.RawMessage
	// control shapes are valid: their answer shows what "passed validation, unknown session"
	// looks like for this agent.
	control bool
	// malformed shapes must be rejected; accepting one is a finding.
	malformed bool
}

func rawJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// shapes are prompts no agent can start a turn on: they name a session that does not exist,
// and all but the control are malformed (from CodeBuddy's prompt-shape probing notes).
var shapes = []shape{
	{name: "valid-text-control", prompt: rawJSON([]any{map[string]string{"type": "text", "text": ""}}), control: true},
	{name: "string", prompt: rawJSON(shapeText), malformed: true},
	{name: "empty-object", prompt: rawJSON([]any{map[string]any{}}), malformed: true},
	{name: "unknown-type", prompt: rawJSON([]any{map[string]string{"type": "acpprobe_unknown"}}), malformed: true},
	{name: "role-content-string", prompt: rawJSON([]any{map[string]string{"role": "user", "content": shapeText}}), malformed: true},
	{name: "role-content-blocks", prompt: rawJSON([]any{map[string]any{"role": "user", "content": []any{map[string]string{"type": "text", "text": shapeText}}}}), malformed: true},
	{name: "message-content-string", prompt: rawJSON([]any{map[string]string{"type": "message", "role": "user", "content": shapeText}}), malformed: true},
	{name: "message-content-blocks", prompt: rawJSON([]any{map[string]any{"type": "message", "role": "user", "content": []any{map[string]string{"type": "text", "text": shapeText}}}}), malformed: true},
	{name: "type-user", prompt: rawJSON([]any{map[string]string{"type": "user", "text": shapeText}}), malformed: true},
	{name: "kind-text", prompt: rawJSON([]any{map[string]string{"kind": "text", "text": shapeText}}), malformed: true},
}

type shapesStep struct{}

func (shapesStep) Name() string { return "prompt-shapes" }

func (shapesStep) Run(ctx context.Context, s *probe.Session) {
	for _, sh := range shapes {
		if !s.Alive() || ctx.Err() != nil {
			return
		}
		cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
		_, err := s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": record.NonexistentSessionID, "prompt": sh.prompt})
		cancel()
		if err != nil {
			// No answer: whatever the agent is doing with it, stop it.
			_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": record.NonexistentSessionID})
		}
	}
}

// promptStep sends one valid text prompt on the probe's session and cancels it at once
// (--allow-prompt): schema acceptance and completion delivery are recorded separately.
type promptStep struct{}

// AllowedPromptText is the text of the --allow-prompt prompt.
const AllowedPromptText = "Reply with the single word: pong"

func (promptStep) Name() string { return "allowed-prompt" }

func (promptStep) Run(ctx context.Context, s *probe.Session) {
	if s.ID == "" {
		record.StepSkipped.Emit(s.Log(), record.StepInfo{Name: promptStep{}.Name(), Reason: "no session: session/new failed"})
		return
	}
	window := s.RequestTimeout
	cctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": s.ID,
			"prompt": []any{map[string]string{"type": "text", "text": AllowedPromptText}}})
	}()
	_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": s.ID})
	select {
	case <-done:
	case <-time.After(window):
	}
	record.PromptWindow.Emit(s.Log(), record.Window{WindowMs: float64(window.Milliseconds())})
}
