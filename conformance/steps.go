package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// Methods and payloads of the active checks. They are constants so that Evaluate recognises
// them in any recording.
const (
	UnknownRequestMethod      = "_acpprobe/unknown-method"
	UnknownNotificationMethod = "_acpprobe/unknown-notification"
	// invalidPrompt is a prompt that is not an array: invalid params for any agent.
	invalidPrompt = "acpprobe: a prompt must be an array, this is a string"
	shapeText     = "acpprobe prompt-shape probe"
)

// StepOptions choose the active steps.
type StepOptions struct {
	PromptShapes bool // send the prompt shapes of --prompt-shapes
	AllowPrompt  bool // send one valid prompt and cancel it (may spend tokens)
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
	return steps
}

// extensionStep sends an unknown _-prefixed notification, then an unknown _-prefixed request:
// the request must be answered -32601, and its answer also shows the notification did no harm.
type extensionStep struct{}

func (extensionStep) Name() string { return "extension-methods" }

func (extensionStep) Run(ctx context.Context, s *probe.Session) {
	_ = s.Notify(UnknownNotificationMethod, map[string]any{})
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, UnknownRequestMethod, map[string]any{})
}

// invalidParamsStep sends session/prompt with a string prompt on a session that does not
// exist: invalid params, which should be -32602.
type invalidParamsStep struct{}

func (invalidParamsStep) Name() string { return "invalid-params" }

func (invalidParamsStep) Run(ctx context.Context, s *probe.Session) {
	cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
	defer cancel()
	_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": probe.NonexistentSessionID, "prompt": invalidPrompt})
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
		_, err := s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": probe.NonexistentSessionID, "prompt": sh.prompt})
		cancel()
		if err != nil {
			// No answer: whatever the agent is doing with it, stop it.
			_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": probe.NonexistentSessionID})
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

// active judges the answers to the active steps, when the recording has them.
func (e *evaluator) active() {
	e.activeExtension()
	e.activeInvalidParams()
	e.shapes = buildShapes(e)
	e.activePrompt()
}

func (e *evaluator) activeExtension() {
	frames := e.x.StepRange(extensionStep{}.Name())
	if frames == nil {
		return
	}
	var reqSeq, notifSeq int64
	for _, f := range frames {
		switch {
		case f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == UnknownNotificationMethod:
			notifSeq = f.Seq
		case f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == UnknownRequestMethod && f.Msg.Kind() == jsonrpc.Request:
			reqSeq = f.Seq
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && notifSeq != 0 && !f.Msg.HasMethod && (f.Msg.Result != nil || f.Msg.Error != nil) &&
			(f.Msg.ID == nil || string(f.Msg.ID) == "null"):
			e.add("protocol.notification-answered", f.Seq, "", fmt.Sprintf("the agent answered the notification %s with %s (a notification never gets a response, not even an error)", UnknownNotificationMethod, f.Raw), nil)
		}
	}
	if reqSeq == 0 {
		return
	}
	answer, ok := e.x.AnswerTo(reqSeq)
	if !ok {
		if e.x.GoneBefore(reqSeq) {
			e.add("protocol.unknown-notification", notifSeq, "", fmt.Sprintf("the agent's output ended after the unknown notification %s", UnknownNotificationMethod), nil)
			return
		}
		e.add("protocol.request-unanswered", reqSeq, "", fmt.Sprintf("the request %s got no answer; every request must be answered (unknown ones with -32601)", UnknownRequestMethod), nil)
		return
	}
	rpcErr := answer.Msg.Err()
	switch {
	case rpcErr == nil:
		e.add("protocol.unknown-method-request", answer.Seq, "/result", fmt.Sprintf("the unknown request %s was answered with a result instead of -32601", UnknownRequestMethod), nil)
	case rpcErr.Code != jsonrpc.CodeMethodNotFound:
		e.add("protocol.unknown-method-request", answer.Seq, "/error/code", fmt.Sprintf("the unknown request %s was answered %d %q instead of -32601", UnknownRequestMethod, rpcErr.Code, rpcErr.Message), nil)
		e.checkDetection(rpcErr.Code)
	}
}

// checkDetection notes when the agent answers an unknown method with the same code that made
// probed methods count as supported: their support cannot be trusted.
func (e *evaluator) checkDetection(code int) {
	var same []string
	for _, m := range acp.ProbedMethods {
		if s := e.r.Methods[m]; s.Support == probe.Supported && s.Code != nil && *s.Code == code {
			same = append(same, m)
		}
	}
	if len(same) == 0 {
		return
	}
	e.unsure = true
	e.add("capability.detection-unreliable", 0, "", fmt.Sprintf("an unknown method is answered %d like %v, so these may not be implemented at all", code, same), same)
}

func (e *evaluator) activeInvalidParams() {
	for _, f := range e.x.StepRange(invalidParamsStep{}.Name()) {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		answer, ok := e.x.AnswerTo(f.Seq)
		if !ok {
			if !e.x.GoneBefore(f.Seq) {
				e.add("protocol.request-unanswered", f.Seq, "", "session/prompt with invalid params got no answer", nil)
			}
			return
		}
		rpcErr := answer.Msg.Err()
		switch {
		case rpcErr == nil:
			e.add("protocol.invalid-params", answer.Seq, "/result", "session/prompt with a string prompt was answered with a result instead of -32602", nil)
		case rpcErr.Code == jsonrpc.CodeInvalidParams, rpcErr.Code == jsonrpc.CodeResourceNotFound, rpcErr.Code == jsonrpc.CodeAuthRequired:
			// -32602 is right; -32002/-32000 mean the agent checked the session or the login
			// before the params, which is its choice.
		default:
			e.add("protocol.invalid-params", answer.Seq, "/error/code", fmt.Sprintf("session/prompt with a string prompt (invalid params) was answered %d %q; invalid params are -32602", rpcErr.Code, rpcErr.Message), nil)
		}
		return
	}
}

// activePrompt records the --allow-prompt run.
func (e *evaluator) activePrompt() {
	frames := e.x.StepRange(promptStep{}.Name())
	if frames == nil {
		return
	}
	run := &probe.PromptRun{Updates: map[string]int{}}
	var reqSeq int64
	for _, f := range frames {
		switch {
		case f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request && f.Msg.Method == acp.MethodSessionPrompt:
			reqSeq = f.Seq
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Method == acp.MethodSessionUpdate:
			kind := acp.ParseObject(f.Msg.Params).Object("update").String("sessionUpdate")
			run.Updates[kind]++
		case record.PromptWindow.Is(f):
			p, _ := record.PromptWindow.Decode(f)
			run.WindowMs = p.WindowMs
		}
	}
	if reqSeq == 0 {
		return
	}
	if e.shapes == nil {
		e.shapes = &probe.PromptShapes{Session: "nonexistent", SessionCreated: true, Probes: []probe.ShapeProbe{}, InferredBranches: []probe.ShapeBranch{}}
	}
	e.shapes.Prompt = run
	answer, ok := e.x.AnswerTo(reqSeq)
	run.SchemaAccepted = true
	if !ok {
		return
	}
	run.Answered = true
	if rpcErr := answer.Msg.Err(); rpcErr != nil {
		code := rpcErr.Code
		run.Code = &code
		run.SchemaAccepted = code != jsonrpc.CodeInvalidParams
		e.add("prompt.no-stop-reason", answer.Seq, "/error", fmt.Sprintf("the cancelled prompt was answered with error %d %q; a cancelled turn must end with stopReason cancelled", code, rpcErr.Message), nil)
		return
	}
	run.StopReason = acp.ParseObject(answer.Msg.Result).String("stopReason")
	if run.StopReason != "cancelled" && run.StopReason != "end_turn" {
		e.add("prompt.no-stop-reason", answer.Seq, "/result/stopReason", fmt.Sprintf("the prompt, cancelled at once, ended with stopReason %q instead of cancelled", run.StopReason), nil)
	}
}
