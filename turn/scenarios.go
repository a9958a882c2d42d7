package turn

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/acpprobe/acpprobe"
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

// afterWindow is how long a scenario keeps listening after a cancelled turn's answer and
// after a session/load or session/resume answer, to see updates sent after it (a turn ends
// with its answer in ACP v1; a replay comes before the answer): what an agent still has in
// flight when it acknowledges a cancel, or a replay it sends in the background, may come
// late.
const afterWindow = 500 * time.Millisecond

// afterTurn is how long a scenario keeps listening after an ordinary turn's answer. An update
// that loses the race to the answer comes within milliseconds of it (acptest's
// updates-after-answer fault: at once). Nothing at all came in the 600 ms after any of the
// 113 prompts of claude-agent-acp 0.101.0, codex-acp 2.6.0, gemini-cli 0.61.0, qwen-code
// 0.24.4 and opencode 1.18.33 (matrix --turns, 2026-12-02) nor after those of the recorded
// transcripts (testdata), while afterWindow after every prompt was 8-17 s of each full turn.
const afterTurn = 100 * time.Millisecond

// maxModelValues bounds the model (and thought level) values the model-truth scenario tries:
// one turn each.
const maxModelValues = 8

// A unit is one scenario, or one part of it, as a step of a connection: dirty says it may
// leave the agent changed (a refused permission, a cancelled turn), so that what follows it
// runs on a fresh agent process; when, for a part that depends on an earlier one, says whether
// it runs at all (nil: always); after are connections of its own that follow the one it runs
// on (the sessions scenario's load and resume).
type unit struct {
	step  probe.Step
	dirty bool
	when  func(sofar record.Connections) bool
	after []acpprobe.Then
}

// units are the requested scenarios as units, in Scenarios order (mcp, when requested, is
// added by Run with its sentinels); login is the route's authenticate call (nil for none).
func units(want []record.Scenario, sc *scene, login *probe.Authenticate) []unit {
	var out []unit
	add := func(name string, dirty bool, when func(record.Connections) bool, run func(*scene, context.Context, *probe.Session, *live)) {
		out = append(out, unit{step: step{name: name, sc: sc, run: run}, dirty: dirty, when: when})
	}
	for _, s := range record.Scenarios {
		if !slices.Contains(want, s) {
			continue
		}
		switch s {
		case record.ScenarioCompletion:
			add(s.StepName(), false, nil, (*scene).completion)
		case record.ScenarioShapes:
			add(s.StepName(), false, nil, (*scene).shapes)
		case record.ScenarioModels:
			add(s.StepName(), false, nil, (*scene).models)
		case record.ScenarioPermission:
			for _, r := range permissionRuns {
				add(r.step, true, r.when, r.run)
			}
		case record.ScenarioCancel:
			add(s.StepName(), true, nil, (*scene).cancel)
		case record.ScenarioSessions:
			add(s.StepName(), true, nil, (*scene).sessions)
			out[len(out)-1].after = sessionsThen(sc, login)
		}
	}
	return out
}

// plan puts the units on connections: the main one runs them up to the first dirty one
// (included); each dirty unit after that ends the connection it is on, and the next unit
// starts a fresh agent process (a connection of purpose turn), which logs in with the route's
// authenticate call (login, nil for none) first. A connection whose units all say they do not
// run is not opened. A unit's own connections (after) follow the connection it runs on.
func plan(us []unit, login *probe.Authenticate) (main []probe.Step, then []acpprobe.Then) {
	var groups [][]unit
	var cur []unit
	for _, u := range us {
		cur = append(cur, u)
		if u.dirty {
			groups = append(groups, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	for i, g := range groups {
		if i == 0 {
			for _, u := range g {
				main = append(main, u.step)
			}
		} else {
			then = append(then, acpprobe.Then{Purpose: record.PurposeTurn, Steps: func(sofar record.Connections) []probe.Step {
				var steps []probe.Step
				for _, u := range g {
					if u.when == nil || u.when(sofar) {
						steps = append(steps, u.step)
					}
				}
				if len(steps) == 0 {
					return nil
				}
				if login != nil {
					steps = append([]probe.Step{loginStep{login}}, steps...)
				}
				return steps
			}})
		}
		for _, u := range g {
			then = append(then, u.after...)
		}
	}
	return main, then
}

// loginStep logs a fresh agent process in with the route's authenticate call: an extra
// connection is initialize-only, and does not by itself.
type loginStep struct{ auth *probe.Authenticate }

func (loginStep) Name() string { return "turn/login" }

func (l loginStep) Run(ctx context.Context, s *probe.Session) { login(ctx, s, l.auth) }

// live is the fresh session a scenario runs on: its id, and its session/new result (its modes
// and config options).
type live struct {
	id     string
	result acp.SessionResult
	// step is the name of the step that runs on it.
	step string
}

// step runs one scenario, or one part of it, on a fresh session of its connection (session/new
// with the connection's cwd and no MCP server): nothing an earlier scenario did to its
// session carries over. When session/new fails the scenario does not run; the record has the
// refusal, and the derivation says why.
type step struct {
	name string
	sc   *scene
	run  func(*scene, context.Context, *probe.Session, *live)
}

func (s step) Name() string { return s.name }

func (s step) Run(ctx context.Context, sess *probe.Session) {
	if l, ok := s.sc.open(ctx, sess, s.name, []any{}); ok {
		s.run(s.sc, ctx, sess, l)
	}
}

// open makes a fresh session on the connection with the MCP servers given.
func (sc *scene) open(ctx context.Context, s *probe.Session, name string, servers []any) (*live, bool) {
	// Parsed once, into the few fields a scenario uses: the answer may be as large as a line
	// can be, and the record already holds it.
	res := acp.ParseSessionResult(answer(ctx, s, sc.turn, acp.MethodSessionNew, map[string]any{"cwd": s.Cwd, "mcpServers": servers}))
	if res.SessionID == "" {
		return nil, false
	}
	return &live{id: res.SessionID, result: res, step: name}, true
}

// notExercised records, when there is no route to the emulator, that none of the requested
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

// promptOn sends one prompt on the session id and waits for its answer within the turn
// budget, then listens afterTurn more.
func (sc *scene) promptOn(ctx context.Context, s *probe.Session, id string, blocks ...any) {
	cctx, cancel := context.WithTimeout(ctx, sc.turn)
	defer cancel()
	_, err := s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": id, "prompt": blocks})
	if err != nil {
		// No answer within the turn: stop the turn (the record shows what happened).
		_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": id})
	}
	listen(ctx, afterTurn)
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
func (sc *scene) completion(ctx context.Context, s *probe.Session, l *live) {
	sc.srv.SetScript(emulator.Text(record.TurnReply))
	sc.promptOn(ctx, s, l.id, text(completionPrompt))
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
func (sc *scene) shapes(ctx context.Context, s *probe.Session, l *live) {
	for _, kind := range ShapeTypes {
		if ctx.Err() != nil || !s.Alive() {
			return
		}
		sc.srv.SetScript(emulator.Text(record.TurnReply)) // one installation per turn: its bound is the turn's
		sc.promptOn(ctx, s, l.id, sc.shapeBlock(kind), text(completionPrompt))
	}
}

// models: each value of the model option (or the legacy model list), selected, then a
// one-line turn; then, with the model put back to the session's own (a thought level one model
// refuses may suit another: CodeBuddy's gpt-5.5 refuses thinking disabled), each value of the
// thought level option the same way.
func (sc *scene) models(ctx context.Context, s *probe.Session, l *live) {
	reply := func() {
		sc.srv.SetScript(emulator.Text(record.TurnReply)) // one installation per turn: its bound is the turn's
		sc.promptOn(ctx, s, l.id, text(completionPrompt))
	}
	ns := l.result
	set := func(method string, params map[string]any) bool {
		cctx, cancel := context.WithTimeout(ctx, s.RequestTimeout)
		defer cancel()
		answer, err := s.Call(cctx, method, params)
		return err == nil && answer.Err() == nil
	}
	if opt := acp.ModelOption(ns.ConfigOptions); opt != nil {
		for _, v := range first(opt.Values(), maxModelValues) {
			if set(acp.MethodSetConfigOption, map[string]any{"sessionId": l.id, "configId": opt.ID, "value": v}) {
				reply()
			}
		}
	} else {
		for _, m := range first(ns.LegacyModels, maxModelValues) {
			if set(acp.MethodSetModel, map[string]any{"sessionId": l.id, "modelId": m.ID}) {
				reply()
			}
		}
	}
	if opt := acp.ModelOption(ns.ConfigOptions); opt != nil && opt.Current() != "" {
		set(acp.MethodSetConfigOption, map[string]any{"sessionId": l.id, "configId": opt.ID, "value": opt.Current()})
	}
	if opt := acp.ThoughtLevelOption(ns.ConfigOptions); opt != nil {
		for _, v := range first(opt.Values(), maxModelValues) {
			if set(acp.MethodSetConfigOption, map[string]any{"sessionId": l.id, "configId": opt.ID, "value": v}) {
				reply()
			}
		}
	}
}

func first[T any](list []T, n int) []T { return list[:min(len(list), n)] }

// The permission scenario's runs, each on a fresh agent process: in the mode that promises to
// ask (or, when none does, the default one), answered reject; the same mode answered
// cancelled (clients do both); and, when the asking mode is not the one a session starts in,
// the default mode, where what the agent does is information, not a violation.
var permissionRuns = []struct {
	step string
	when func(record.Connections) bool
	run  func(*scene, context.Context, *probe.Session, *live)
}{
	{record.ScenarioPermission.StepName(), nil, func(sc *scene, ctx context.Context, s *probe.Session, l *live) {
		sc.permission(ctx, s, l, askingMode, record.AnswerReject)
	}},
	{record.ScenarioPermission.Part(string(record.AnswerCancelled)), func(sofar record.Connections) bool {
		first, ok := firstPermissionRun(sofar)
		return ok && first.Asks
	}, func(sc *scene, ctx context.Context, s *probe.Session, l *live) {
		sc.permission(ctx, s, l, askingMode, record.AnswerCancelled)
	}},
	{record.ScenarioPermission.Part("default-mode"), func(sofar record.Connections) bool {
		first, ok := firstPermissionRun(sofar)
		return ok && first.Asks && !first.Default
	}, func(sc *scene, ctx context.Context, s *probe.Session, l *live) {
		sc.permission(ctx, s, l, defaultMode, record.AnswerReject)
	}},
}

// firstPermissionRun is the mode the permission scenario's first run ran in, from the record so
// far.
func firstPermissionRun(sofar record.Connections) (record.PermissionRunInfo, bool) {
	for _, f := range sofar.All {
		if info, ok := record.PermissionRun.Decode(f); ok {
			return info, true
		}
	}
	return record.PermissionRunInfo{}, false
}

// permission: the session is put in the mode choose picks, the agent's permission request is
// to be answered with answer, and the model asks to write a file with the agent's own tool.
// Afterwards the scenario looks whether the file exists, and records it.
func (sc *scene) permission(ctx context.Context, s *probe.Session, l *live, choose func([]sessionMode) (sessionMode, bool), answer record.PermissionAnswer) {
	mode, _ := choose(modesOf(l.result))
	mode.Answer = answer
	record.PermissionRun.Emit(s.Log(), mode.PermissionRunInfo)
	if mode.set != nil && !mode.set(ctx, s, l.id) {
		return // refused: the record has the answer, and the run says it could not happen
	}
	policy := probe.PermissionReject
	if answer == record.AnswerCancelled {
		policy = probe.PermissionCancel
	}
	defer s.SetPermission(s.SetPermission(policy))
	path := sc.path("permission")
	sc.srv.SetScript(emulator.WriteFile(path, FileContent, "I tried to write the file."))
	sc.promptOn(ctx, s, l.id, text(fmt.Sprintf("Create the file %s containing one line, using your file-writing tool.", path)))
	_, err := os.Lstat(path)
	rel, _ := filepath.Rel(sc.workspace, path)
	record.Observation.Emit(s.Log(), record.ObservationInfo{Step: l.step, Name: "file-exists", Subject: "workspace/" + rel, Value: err == nil})
	_ = os.Remove(path)
}

// Slow stream of the cancel scenario: long enough that no agent finishes it first.
const (
	cancelChunks = 100
	cancelDelay  = 200 * time.Millisecond
)

// cancel: a slow stream; session/cancel once the first text or thought chunk of the answer
// reached the client; the turn must end cancelled within record.CancelBound; then, if it did end, a second
// one-line turn.
func (sc *scene) cancel(ctx context.Context, s *probe.Session, l *live) {
	chunks := make([]string, cancelChunks)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("chunk %d of a slow answer. ", i+1)
	}
	sc.srv.SetScript(emulator.Slow(cancelDelay, chunks...))
	// The answer streams once a text or thought chunk of this session arrives: the updates an
	// agent sends as a turn starts (CodeBuddy Code's available_commands_update, usage) come
	// before it calls the model, and a cancel then would not be sent mid-stream.
	first, stop := s.Watch(func(f jsonrpc.Frame) bool {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil || f.Msg.Method != acp.MethodSessionUpdate {
			return false
		}
		u := acp.ParseSessionUpdate(f.Msg.Params)
		return u.SessionID == l.id && (u.Kind == "agent_message_chunk" || u.Kind == "agent_thought_chunk")
	})
	defer stop()
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		cctx, cancel := context.WithTimeout(ctx, sc.turn)
		defer cancel()
		_, _ = s.Call(cctx, acp.MethodSessionPrompt, map[string]any{"sessionId": l.id, "prompt": []any{text(completionPrompt)}})
	}()
	t := time.NewTimer(sc.turn)
	defer t.Stop()
	select {
	case <-first:
	case <-answered: // it ended before streaming anything: the record says how
	case <-t.C:
	case <-ctx.Done():
	}
	_ = s.Notify(acp.MethodSessionCancel, map[string]any{"sessionId": l.id})
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
	sc.promptOn(ctx, s, l.id, text(completionPrompt))
}
