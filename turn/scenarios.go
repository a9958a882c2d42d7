package turn

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// The permission scenario's words (the model's reply is record.TurnReply).
const (
	// FileContent is what the permission scenario's model asks to write.
	FileContent = "written by acpprobe's permission scenario: this file must not exist\n"
	// completionPrompt is the one-line prompt.
	completionPrompt = "Reply with one short line."
)

// afterWindow is how long a scenario keeps listening after a turn's answer, to see updates
// sent after it (a turn ends with its answer in ACP v1).
const afterWindow = 500 * time.Millisecond

// maxModelValues bounds the model (and thought level) values the model-truth scenario tries:
// one turn each.
const maxModelValues = 8

// steps are the requested scenarios as probe steps, in Scenarios order.
func steps(want []record.Scenario, sc *scene) []probe.Step {
	var out []probe.Step
	for _, s := range record.Scenarios {
		if !slices.Contains(want, s) {
			continue
		}
		switch s {
		case record.ScenarioCompletion:
			out = append(out, step{s, sc, (*scene).completion})
		case record.ScenarioShapes:
			out = append(out, step{s, sc, (*scene).shapes})
		case record.ScenarioModels:
			out = append(out, step{s, sc, (*scene).models})
		case record.ScenarioPermission:
			out = append(out, step{s, sc, (*scene).permission})
		case record.ScenarioCancel:
			out = append(out, step{s, sc, (*scene).cancel})
		case record.ScenarioSessions:
			out = append(out, step{s, sc, (*scene).sessions})
		}
	}
	return out
}

// step runs one scenario on the probe's session.
type step struct {
	scenario record.Scenario
	sc       *scene
	run      func(*scene, context.Context, *probe.Session, string)
}

func (s step) Name() string { return s.scenario.StepName() }

func (s step) Run(ctx context.Context, sess *probe.Session) {
	if sess.ID == "" {
		record.StepSkipped.Emit(sess.Log(), record.StepInfo{Name: s.Name(), Reason: "no session: session/new failed"})
		return
	}
	s.run(s.sc, ctx, sess, s.Name())
}

// notExercised records, for an agent without a backend profile, that none of the requested
// scenarios ran.
type notExercised struct {
	reason    string
	scenarios []record.Scenario
}

func (n notExercised) Name() string { return "turn/not-exercised" }

func (n notExercised) Run(_ context.Context, sess *probe.Session) {
	for _, s := range n.scenarios {
		record.StepSkipped.Emit(sess.Log(), record.StepInfo{Name: s.StepName(), Reason: n.reason})
	}
}

// prompt sends one prompt on the session and waits for its answer within the turn budget,
// then listens afterWindow more.
func (sc *scene) prompt(ctx context.Context, s *probe.Session, blocks ...any) {
	sc.promptOn(ctx, s, s.ID, blocks...)
}

// promptOn is prompt on the session id (a session the connection loaded rather than made).
func (sc *scene) promptOn(ctx context.Context, s *probe.Session, id string, blocks ...any) {
	cctx, cancel := context.WithTimeout(ctx, sc.turn)
	defer cancel()
	_, err := s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": blocks})
	if err != nil {
		// No answer within the turn: stop the turn (the record shows what happened).
		_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": id})
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
	sc.srv.SetScript(emulator.Text(record.TurnReply))
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
	uri := "file://" + filepath.Join(sc.workspace, record.ShapeMarker)
	switch kind {
	case "image":
		return map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(tinyPNG)}
	case "audio":
		return map[string]any{"type": "audio", "mimeType": "audio/wav", "data": base64.StdEncoding.EncodeToString(tinyWAV)}
	case "resource_link":
		return map[string]any{"type": "resource_link", "uri": uri, "name": record.ShapeMarker, "mimeType": "text/plain"}
	case "resource":
		return map[string]any{"type": "resource", "resource": map[string]any{"uri": uri, "mimeType": "text/plain", "text": "the contents of " + record.ShapeMarker}}
	}
	return map[string]any{"type": "text", "text": "a text block naming " + record.ShapeMarker}
}

// shapes: one prompt per content block type (the block, and a text asking for a reply).
func (sc *scene) shapes(ctx context.Context, s *probe.Session, _ string) {
	for _, kind := range ShapeTypes {
		if ctx.Err() != nil || !s.Alive() {
			return
		}
		sc.srv.SetScript(emulator.Text(record.TurnReply)) // one installation per turn: its bound is the turn's
		sc.prompt(ctx, s, sc.shapeBlock(kind), text(completionPrompt))
	}
}

// models: each value of the model option (or the legacy model list), selected, then a
// one-line turn; then each value of the thought level option the same way.
func (sc *scene) models(ctx context.Context, s *probe.Session, _ string) {
	reply := func() {
		sc.srv.SetScript(emulator.Text(record.TurnReply)) // one installation per turn: its bound is the turn's
		sc.prompt(ctx, s, text(completionPrompt))
	}
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
				reply()
			}
		}
	} else {
		for _, m := range first(ns.LegacyModels, maxModelValues) {
			if set(acp.MethodSetModel, map[string]any{"sessionId": s.ID, "modelId": m.ID}) {
				reply()
			}
		}
	}
	if opt := acp.ThoughtLevelOption(ns.ConfigOptions); opt != nil {
		for _, v := range first(opt.Values(), maxModelValues) {
			if set(acp.MethodSetConfigOption, map[string]any{"sessionId": s.ID, "configId": opt.ID, "value": v}) {
				reply()
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
// client; the turn must end cancelled within record.CancelBound; then, if it did end, a second
// one-line turn.
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
	bound := time.NewTimer(record.CancelBound)
	defer bound.Stop()
	select {
	case <-answered:
	case <-bound.C:
		return // still running: a second prompt would only collide with it
	case <-ctx.Done():
		return
	}
	listen(ctx, afterWindow)
	// Still usable?
	sc.srv.SetScript(emulator.Text(record.TurnReply))
	sc.prompt(ctx, s, text(completionPrompt))
}
