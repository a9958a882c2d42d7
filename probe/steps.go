package probe

import (
	"context"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/record"
)

// StepOptions choose the active steps.
type StepOptions struct {
	PromptShapes bool // send the prompt shapes of --prompt-shapes
	AllowPrompt  bool // send one valid prompt and cancel it (may spend tokens)
	// AuthStatus asks auth/status when the agent advertises it (the auth oracle, --auth-ab).
	AuthStatus bool
}

// CheckSteps returns the active steps of acpprobe check, for Options.Steps, in the order they
// run. The conformance passes judge their answers; the derivation finds their frames by their
// names (record.StepExtensionMethods …).
func CheckSteps(o StepOptions) []Step {
	steps := []Step{extensionStep{}, invalidParamsStep{}}
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

// ForkProbeSteps are the steps of the fork-probe connection that check opens after the main
// one (an initialize-only connection, record.PurposeForkProbe, ended at once) when the main
// connection's method detection found session/fork supported: a fork of a session that does
// not exist.
//
// The fork has a connection of its own because a fork of a made-up session is not harmless
// on the main one: claude-agent-acp then no longer exits when its stdin closes, so the main
// connection's protocol.stdin-exit would judge what the probe caused. It is sent right after
// initialize, without session/new, which would create a real session: the question is only
// whether the agent creates one from nothing (claude-agent-acp answers -32002 either way).
var ForkProbeSteps = []Step{forkStep{}}

// AuthStatusStep asks auth/status when the agent advertises it (agentCapabilities.auth.status,
// unstable), or the vendor request of the same kind that the catalogue knows the agent serves
// (codex-acp's authentication/status; derive.AuthStatusMethod): the state it answers is one of
// the auth oracle's signals (--auth-ab). The method changes nothing, and must not be refused
// with -32000.
var AuthStatusStep Step = authStatusStep{}

type authStatusStep struct{}

func (authStatusStep) Name() string { return record.StepAuthStatus }

func (authStatusStep) Run(ctx context.Context, s *Session) {
	method := derive.AuthStatusMethod(record.New(s.Log().Frames()), nil)
	if method == "" {
		record.StepSkipped.Emit(s.Log(), record.StepInfo{Name: record.StepAuthStatus, Reason: "auth/status is not advertised"})
		return
	}
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, method, map[string]any{})
}

// extensionStep sends an unknown _-prefixed notification, then an unknown _-prefixed request:
// the request must be answered -32601, and its answer also shows the notification did no harm.
type extensionStep struct{}

func (extensionStep) Name() string { return record.StepExtensionMethods }

func (extensionStep) Run(ctx context.Context, s *Session) {
	_ = s.Notify(record.UnknownNotificationMethod, map[string]any{})
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, record.DetectionControlMethod, map[string]any{})
}

// invalidParamsStep sends session/prompt with a string prompt on a session that does not
// exist: invalid params, which should be -32602.
type invalidParamsStep struct{}

func (invalidParamsStep) Name() string { return record.StepInvalidParams }

func (invalidParamsStep) Run(ctx context.Context, s *Session) {
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": record.NonexistentSessionID, "prompt": record.InvalidPrompt})
}

// forkStep forks a session that does not exist, with a valid cwd: the agent must refuse. One
// that answers with a session created it from nothing (sudocode does), a side effect that
// method detection, which asks with invalid params, never causes; check reports it. It runs
// on the fork-probe connection (ForkProbeSteps).
type forkStep struct{}

func (forkStep) Name() string { return record.StepForkNonexistent }

func (forkStep) Run(ctx context.Context, s *Session) {
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, acp.MethodSessionFork, derive.MethodParams(acp.MethodSessionFork, s.Cwd))
}

// shapesStep sends record.PromptShapes, each on a session that does not exist.
type shapesStep struct{}

func (shapesStep) Name() string { return record.StepPromptShapes }

func (shapesStep) Run(ctx context.Context, s *Session) {
	for _, sh := range record.PromptShapes {
		if !s.Alive() || ctx.Err() != nil {
			return
		}
		cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
		_, err := s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": record.NonexistentSessionID, "prompt": sh.Prompt})
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

func (promptStep) Name() string { return record.StepAllowedPrompt }

func (promptStep) Run(ctx context.Context, s *Session) {
	if s.ID == "" {
		record.StepSkipped.Emit(s.Log(), record.StepInfo{Name: record.StepAllowedPrompt, Reason: "no session: session/new failed"})
		return
	}
	window := s.RequestTimeout
	cctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": s.ID,
			"prompt": []any{map[string]string{"type": "text", "text": record.AllowedPromptText}}})
	}()
	_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": s.ID})
	select {
	case <-done:
	case <-time.After(window):
	}
	record.PromptWindow.Emit(s.Log(), record.Window{WindowMs: float64(window.Milliseconds())})
}
