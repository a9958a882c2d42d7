package turn

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// StepName is the name of a scenario's step in the record ("turn/completion" …): the
// conformance pass that judges turns finds each scenario's frames by it.
func StepName(s Scenario) string { return "turn/" + string(s) }

// The model's scripted words. They are plain ASCII so that an agent cannot garble them, and
// distinctive so that the judge finds them in the updates.
const (
	// CompletionReply is what the model answers a one-line prompt.
	CompletionReply = "ACPPROBE-PONG: the loopback model answered."
	// FileContent is what the permission scenario's model asks to write.
	FileContent = "written by acpprobe's permission scenario: this file must not exist\n"
	// completionPrompt is the one-line prompt.
	completionPrompt = "Reply with one short line."
)

// afterWindow is how long a scenario keeps listening after a turn's answer, to see updates
// sent after it (a turn ends with its answer in ACP v1).
const afterWindow = 500 * time.Millisecond

// cancelBound bounds how long after session/cancel the turn must end with stopReason
// cancelled.
const cancelBound = 10 * time.Second

// maxModelValues bounds the model (and thought level) values the model-truth scenario tries:
// one turn each.
const maxModelValues = 8

// steps are the requested scenarios as probe steps, in Scenarios order.
func steps(want []Scenario, sc *scene) []probe.Step {
	var out []probe.Step
	for _, s := range Scenarios {
		if !containsScenario(want, s) {
			continue
		}
		switch s {
		case Completion:
			out = append(out, step{s, sc, (*scene).completion})
		case Shapes:
			out = append(out, step{s, sc, (*scene).shapes})
		case Models:
			out = append(out, step{s, sc, (*scene).models})
		case Permission:
			out = append(out, step{s, sc, (*scene).permission})
		case Cancel:
			out = append(out, step{s, sc, (*scene).cancel})
		}
	}
	return out
}

func containsScenario(list []Scenario, s Scenario) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// step runs one scenario on the probe's session.
type step struct {
	scenario Scenario
	sc       *scene
	run      func(*scene, context.Context, *probe.Session, string)
}

func (s step) Name() string { return StepName(s.scenario) }

func (s step) Run(ctx context.Context, sess *probe.Session) {
	if sess.ID == "" {
		record.StepSkipped.Emit(sess.Log(), record.StepInfo{Name: s.Name(), Reason: "no session: session/new failed"})
		return
	}
	s.run(s.sc, ctx, sess, s.Name())
}

// notExercised records, for an agent without a backend profile, that no scenario ran.
type notExercised struct{ reason string }

func (n notExercised) Name() string { return "turn/not-exercised" }

func (n notExercised) Run(_ context.Context, sess *probe.Session) {
	for _, s := range Scenarios {
		record.StepSkipped.Emit(sess.Log(), record.StepInfo{Name: StepName(s), Reason: n.reason})
	}
}

// prompt sends one prompt on the session and waits for its answer within the turn budget,
// then listens afterWindow more.
func (sc *scene) prompt(ctx context.Context, s *probe.Session, blocks ...any) {
	cctx, cancel := context.WithTimeout(ctx, sc.turn)
	defer cancel()
	_, err := s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": s.ID, "prompt": blocks})
	if err != nil {
		// No answer within the turn: stop the turn (the record shows what happened).
		_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": s.ID})
	}
	listen(ctx, afterWindow)
}

// listen waits d, or until ctx ends: the record keeps what arrives meanwhile.
func listen(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

func text(t string) map[string]string { return map[string]string{"type": "text", "text": t} }

// completion: a one-line reply.
func (sc *scene) completion(ctx context.Context, s *probe.Session, _ string) {
	sc.srv.SetScript(emulator.Text(CompletionReply))
	sc.prompt(ctx, s, text(completionPrompt))
}

// Tiny valid media for the shapes scenario: a 1×1 PNG and a silent 8-sample WAV.
var (
	tinyPNG, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	tinyWAV    = []byte("RIFF,\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00@\x1f\x00\x00\x01\x00\x08\x00data\x08\x00\x00\x00\x80\x80\x80\x80\x80\x80\x80\x80")
)

// ShapeTypes are the content block types the shapes scenario sends, one prompt each.
var ShapeTypes = []string{"text", "image", "audio", "resource_link", "resource"}

// shapeBlock is a valid content block of a type, beside a text block asking for a reply.
func (sc *scene) shapeBlock(kind string) map[string]any {
	uri := "file://" + filepath.Join(sc.workspace, "acpprobe-shape.txt")
	switch kind {
	case "image":
		return map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(tinyPNG)}
	case "audio":
		return map[string]any{"type": "audio", "mimeType": "audio/wav", "data": base64.StdEncoding.EncodeToString(tinyWAV)}
	case "resource_link":
		return map[string]any{"type": "resource_link", "uri": uri, "name": "acpprobe-shape.txt", "mimeType": "text/plain"}
	case "resource":
		return map[string]any{"type": "resource", "resource": map[string]any{"uri": uri, "mimeType": "text/plain", "text": "acpprobe shape probe"}}
	}
	return map[string]any{"type": "text", "text": "acpprobe shape probe"}
}

// shapes: one prompt per content block type (the block, and a text asking for a reply).
func (sc *scene) shapes(ctx context.Context, s *probe.Session, _ string) {
	sc.srv.SetScript(emulator.Text(CompletionReply))
	for _, kind := range ShapeTypes {
		if ctx.Err() != nil || !s.Alive() {
			return
		}
		sc.prompt(ctx, s, sc.shapeBlock(kind), text(completionPrompt))
	}
}

// models: each value of the model option (or the legacy model list), selected, then a
// one-line turn; then each value of the thought level option the same way.
func (sc *scene) models(ctx context.Context, s *probe.Session, _ string) {
	sc.srv.SetScript(emulator.Text(CompletionReply))
	ns := acp.ParseSessionResult(s.NewSession)
	set := func(method string, params map[string]any) bool {
		cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
		defer cancel()
		answer, err := s.Call(cctx, method, params)
		return err == nil && answer.Err() == nil
	}
	if opt := acp.ModelOption(ns.ConfigOptions); opt != nil {
		for _, v := range first(opt.Values(), maxModelValues) {
			if set(acp.MethodSetConfigOption, map[string]any{"sessionId": s.ID, "configId": opt.ID, "value": v}) {
				sc.prompt(ctx, s, text(completionPrompt))
			}
		}
	} else {
		for _, m := range first(ns.LegacyModels, maxModelValues) {
			if set(acp.MethodSetModel, map[string]any{"sessionId": s.ID, "modelId": m.ID}) {
				sc.prompt(ctx, s, text(completionPrompt))
			}
		}
	}
	if opt := acp.ThoughtLevelOption(ns.ConfigOptions); opt != nil {
		for _, v := range first(opt.Values(), maxModelValues) {
			if set(acp.MethodSetConfigOption, map[string]any{"sessionId": s.ID, "configId": opt.ID, "value": v}) {
				sc.prompt(ctx, s, text(completionPrompt))
			}
		}
	}
}

func first[T any](list []T, n int) []T { return list[:min(len(list), n)] }

// permission: the model asks to write a file with the agent's own tool; acpprobe answers the
// permission request with the reject option (probe.PermissionReject). Afterwards the scenario
// looks whether the file exists, and records it.
func (sc *scene) permission(ctx context.Context, s *probe.Session, name string) {
	path := sc.path("permission")
	sc.srv.SetScript(emulator.WriteFile(path, FileContent, "I tried to write the file."))
	sc.prompt(ctx, s, text(fmt.Sprintf("Create the file %s containing one line, using your file-writing tool.", path)))
	_, err := os.Lstat(path)
	rel, _ := filepath.Rel(sc.workspace, path)
	record.Observation.Emit(s.Log(), record.ObservationInfo{Step: name, Name: "file-exists", Subject: "workspace/" + rel, Value: err == nil})
	_ = os.Remove(path)
}

// Slow stream of the cancel scenario: long enough that no agent finishes it first.
const (
	cancelChunks = 100
	cancelDelay  = 200 * time.Millisecond
)

// cancel: a slow stream; session/cancel once the first chunk of the answer reached the
// client; the turn must end cancelled within cancelBound; then a second one-line turn.
func (sc *scene) cancel(ctx context.Context, s *probe.Session, _ string) {
	chunks := make([]string, cancelChunks)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("chunk %d of a slow answer. ", i+1)
	}
	sc.srv.SetScript(emulator.Slow(cancelDelay, chunks...))
	first, stop := s.Watch(func(f jsonrpc.Frame) bool {
		return f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Method == acp.MethodSessionUpdate
	})
	defer stop()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		cctx, cancel := context.WithTimeout(ctx, sc.turn)
		defer cancel()
		_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": s.ID, "prompt": []any{text(completionPrompt)}})
	}()
	t := time.NewTimer(sc.turn)
	defer t.Stop()
	select {
	case <-first:
	case <-answered: // it ended before streaming anything: the record says how
	case <-t.C:
	case <-ctx.Done():
	}
	_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": s.ID})
	bound := time.NewTimer(cancelBound)
	defer bound.Stop()
	select {
	case <-answered:
	case <-bound.C:
	case <-ctx.Done():
	}
	listen(ctx, afterWindow)
	// Still usable?
	sc.srv.SetScript(emulator.Text(CompletionReply))
	sc.prompt(ctx, s, text(completionPrompt))
}
