package derive

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// deriveTurns reads the facts of the prompt-turn scenarios (acpprobe turn) from their step
// ranges on the connections they ran on (conns: the main one, then those of purpose turn, in
// order): each scenario's prompts with what came back on the wire, the model requests the
// emulator recorded during each, and what the scenario observed outside the wire. A scenario
// may run in parts, each on its own connection (the permission scenario's runs). Outcomes are
// left empty: the turns pass decides them with its findings (judgeTurns). A scenario recorded
// as skipped is not run, with its reason. The sessions scenario also reads its connections
// after its turn (sessions). nil when the record has no turn scenario.
func deriveTurns(conns []*record.Index, sessions sessionConns, run runModel) []report.Turn {
	skipped := map[string]string{}
	for _, x := range conns {
		for _, f := range x.Events(record.StepSkipped.Kind) {
			if p, ok := record.StepSkipped.Decode(f); ok {
				skipped[p.Name] = p.Reason
			}
		}
	}
	var turns []report.Turn
	for _, s := range record.Scenarios {
		if why, ok := skipped[s.StepName()]; ok {
			turns = append(turns, report.Turn{Scenario: string(s), Outcome: report.TurnNotRun, Reason: why, Runs: []report.TurnRun{}})
			continue
		}
		parts := scenarioParts(conns, s)
		if len(parts) == 0 {
			// Its parts could not run (the agent had gone, the budget was spent): not run.
			for _, name := range slices.Sorted(maps.Keys(skipped)) {
				if s.Of(name) {
					turns = append(turns, report.Turn{Scenario: string(s), Outcome: report.TurnNotRun, Reason: skipped[name], Runs: []report.TurnRun{}})
					break
				}
			}
			continue
		}
		t := report.Turn{Scenario: string(s), Runs: []report.TurnRun{}}
		var all []*turnRun
		for _, p := range parts {
			runs := splitRuns(p.x, p.frames)
			all = append(all, runs...)
			for _, r := range runs {
				f := r.facts()
				f.UnansweredAfterCancel = r.answer == nil && r.cancelled() && !p.x.GoneBefore(r.prompt.Seq)
				t.Runs = append(t.Runs, f)
			}
			switch s {
			case record.ScenarioShapes:
				t.Shapes = shapeDeliveries(runs, promptCaps(p.x))
			case record.ScenarioModels:
				t.Models = modelTruths(p.x, p.frames, runs)
			case record.ScenarioPermission:
				t.Permission = append(t.Permission, permissionTruth(p.x, p.frames, runs))
			case record.ScenarioCancel:
				t.Cancel = cancelTruth(p.frames, runs)
			case record.ScenarioMCP:
				t.MCP = mcpTruths(p.x, p.frames)
			case record.ScenarioSessions:
				t.Sessions = sessionsTruth(p.x, p.frames, runs, sessions)
			}
		}
		if why := notRun(parts[0], s, t, run); why != "" {
			t.Outcome, t.Reason = report.TurnNotRun, why
		}
		turns = append(turns, t)
	}
	return turns
}

// part is one part of a scenario: its step's frames on the connection it ran on.
type part struct {
	x      *record.Index
	step   string
	frames []jsonrpc.Frame
}

// scenarioParts are the steps of scenario s on the connections, in order: its step and the
// steps of its parts (record.Scenario.Part).
func scenarioParts(conns []*record.Index, s record.Scenario) []part {
	var out []part
	for _, x := range conns {
		for _, name := range x.Steps() {
			if s.Of(name) {
				out = append(out, part{x: x, step: name, frames: x.StepRange(name)})
			}
		}
	}
	return out
}

// sessionOf is the session/new a scenario's part made its fresh session with (its request, and
// its answer: nil when none came); nil when the part made none (a record of a version that ran
// every scenario on the probe's session, or a part that needs none).
func sessionOf(x *record.Index, frames []jsonrpc.Frame) (req, answer *jsonrpc.Frame) {
	for i, f := range frames {
		if isClientRequest(f, acp.MethodSessionNew) {
			if a, ok := x.AnswerTo(f.Seq); ok {
				return &frames[i], &a
			}
			return &frames[i], nil
		}
	}
	return nil, nil
}

// sessionResultOf is the session/new result a part's session started with: its own session's,
// else (a record of a version that ran every scenario on the probe's session) the connection's
// first; nil when none succeeded.
func sessionResultOf(x *record.Index, frames []jsonrpc.Frame) json.RawMessage {
	if req, a := sessionOf(x, frames); req != nil {
		if a != nil && a.Msg.Err() == nil {
			return a.Msg.Result
		}
		return nil
	}
	if ex := x.First(acp.MethodSessionNew); ex != nil && ex.Answer != nil && ex.Answer.Msg.Err() == nil {
		return ex.Answer.Msg.Result
	}
	return nil
}

// notRun says why a scenario that began could not run (the agent still refused for want of a
// login, never called the model, went away, or the scenario's premise did not hold); "" when
// it ran. A scenario that could not run is never a pass and never a failure of the agent.
func notRun(p part, s record.Scenario, t report.Turn, run runModel) string {
	x := p.x
	if req, a := sessionOf(x, p.frames); req != nil && s != record.ScenarioMCP {
		switch {
		case a == nil:
			return "the scenario's session/new was not answered"
		case a.Msg.Err() != nil:
			return fmt.Sprintf("the scenario's session/new failed: %d %s", a.Msg.Err().Code, a.Msg.Err().Message)
		}
	}
	if s == record.ScenarioMCP {
		// What the agent does with the sentinels by itself is observed even when no prompt
		// could be sent (no backend profile): the milestones say how far it was observed.
		switch {
		case len(t.MCP) == 0:
			return "the sentinel MCP servers were not offered"
		case t.MCP[0].Delivered == nil:
			return "session/new was not answered"
		}
		return ""
	}
	if len(t.Runs) == 0 {
		if s == record.ScenarioModels {
			return "the session has no model or thought level to select"
		}
		return "no prompt was sent"
	}
	requests, auth := 0, ""
	for _, r := range t.Runs {
		requests += r.ModelRequests
		if r.Code != nil && auth == "" && acp.IsAuthError(&jsonrpc.Error{Code: *r.Code, Message: r.Message}) {
			auth = r.Message
		}
	}
	first := t.Runs[0]
	switch {
	case requests == 0 && auth != "":
		return "the agent still asks for authentication (" + auth + "): the credentials of " + run.route.Describe() + " did not take"
	case first.AnswerSeq == 0 && x.GoneBefore(first.Seq):
		return "the agent exited during the turn"
	case first.UnansweredAfterCancel:
		return "" // it ran: the agent kept the prompt (turn.prompt-unanswered)
	case run.requests == 0:
		return "the agent never called the model emulator in this run: " + run.route.Describe() + " did not take effect" + run.hint()
	case s == record.ScenarioPermission && !slices.ContainsFunc(t.Permission, func(p report.PermissionTruth) bool { return p.Offered }):
		return "the agent offered the model no file-writing tool"
	case s == record.ScenarioCancel && !t.Cancel.Sent:
		return "the turn ended before it streamed anything: session/cancel was not sent mid-turn"
	case s == record.ScenarioSessions:
		return sessionsNotRun(t.Sessions, first)
	}
	return ""
}

// runModel is what the whole run says of the route to the model: the route taken, and the
// model requests of every connection. A scenario is not run for want of a route only when
// no request ever reached the emulator: an agent that called it in one scenario and not in
// another has a route, and the prompt that did not reach the model is a finding.
type runModel struct {
	route    record.RouteInfo
	requests int
}

// runModelOf reads the turn-route event of the main connection x and counts the model
// requests of the whole record (all).
func runModelOf(x *record.Index, all []jsonrpc.Frame) runModel {
	var m runModel
	if f, ok := x.FirstEvent(record.TurnRoute.Kind); ok {
		m.route, _ = record.TurnRoute.Decode(f)
	}
	for _, f := range all {
		if record.ModelRequest.Is(f) {
			m.requests++
		}
	}
	return m
}

// hint says how to choose another route when the one taken found nothing: auto is a guess.
func (m runModel) hint() string {
	if m.route.Kind == record.RouteAuto {
		return "; name the agent's profile with --backend (acpprobe turn --help lists them)"
	}
	return ""
}

// turnRun is one prompt of a scenario and the frames that belong to it: from the prompt to the
// next prompt of the scenario (or the end of its range).
type turnRun struct {
	prompt jsonrpc.Frame
	answer *jsonrpc.Frame
	frames []jsonrpc.Frame
	// models are the model requests made before the answer; modelsAfter counts those after.
	models      []modelCall
	modelsAfter int
}

// modelCall is a model request the emulator recorded during a run, and how it answered.
type modelCall struct {
	model    string
	reason   string
	kinds    []string
	text     string
	answer   string // text, toolCall, error … ("" while unanswered)
	complete bool
}

// modelDoneBefore reports whether the emulator had completed every model answer of the run
// before the line seq (and had answered at least one).
func (r *turnRun) modelDoneBefore(seq int64) bool {
	pending, done := map[int]bool{}, 0
	for _, f := range r.frames {
		if f.Seq >= seq {
			break
		}
		if req, ok := record.ModelRequest.Decode(f); ok && req.Endpoint == "generate" {
			pending[req.Seq] = true
		}
		if resp, ok := record.ModelResponse.Decode(f); ok && resp.Complete && pending[resp.Seq] {
			delete(pending, resp.Seq)
			done++
		}
	}
	return done > 0 && len(pending) == 0
}

// splitRuns cuts a scenario's frames into its prompts.
func splitRuns(x *record.Index, frames []jsonrpc.Frame) []*turnRun {
	var runs []*turnRun
	var cur *turnRun
	byEmu := map[int]int{} // the emulator's request seq → its index in cur.models
	for _, f := range frames {
		if isClientRequest(f, acp.MethodSessionPrompt) {
			cur = &turnRun{prompt: f}
			if a, ok := x.AnswerTo(f.Seq); ok {
				cur.answer = &a
			}
			runs = append(runs, cur)
			continue
		}
		if cur == nil {
			continue
		}
		cur.frames = append(cur.frames, f)
		if req, ok := record.ModelRequest.Decode(f); ok && req.Endpoint == "generate" {
			if cur.answer != nil && f.Seq > cur.answer.Seq {
				cur.modelsAfter++ // the turn had ended
				continue
			}
			byEmu[req.Seq] = len(cur.models)
			cur.models = append(cur.models, modelCall{model: req.Model, reason: req.Reasoning, kinds: req.LastUserKinds, text: req.LastUserText})
		}
		if resp, ok := record.ModelResponse.Decode(f); ok {
			if i, ok := byEmu[resp.Seq]; ok {
				cur.models[i].answer, cur.models[i].complete = resp.Answer, resp.Complete
			}
		}
	}
	return runs
}

func isClientRequest(f jsonrpc.Frame, method string) bool {
	return f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request && f.Msg.Method == method
}

func isUpdate(f jsonrpc.Frame) bool {
	return f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Notification && f.Msg.Method == acp.MethodSessionUpdate
}

// turnKinds are the update kinds that belong to a turn's answer: after the answer, one of these
// is an update of a turn that has ended.
var turnKinds = []string{"agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"}

// maxTurnText bounds the start of the assistant's text kept in a run's facts.
const maxTurnText = 200

// facts are the run's facts for the result.
// cancelled reports whether the client sent session/cancel during the run.
func (r *turnRun) cancelled() bool {
	return slices.ContainsFunc(r.frames, func(f jsonrpc.Frame) bool {
		return f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Notification && f.Msg.Method == acp.MethodSessionCancel
	})
}

func (r *turnRun) facts() report.TurnRun {
	run := report.TurnRun{Seq: r.prompt.Seq, TextIn: []string{}}
	if r.answer != nil {
		run.AnswerSeq = r.answer.Seq
		run.Ms = record.Millis(r.answer.At - r.prompt.At)
		if e := r.answer.Msg.Err(); e != nil {
			code := e.Code
			run.Code, run.Message = &code, e.Message
		} else {
			run.StopReason = acp.ParseObject(r.answer.Msg.Result).String("stopReason")
		}
	}
	texts := map[string]*strings.Builder{}
	tools := map[string]int{}
	for _, f := range r.frames {
		if !isUpdate(f) {
			continue
		}
		u := acp.ParseSessionUpdate(f.Msg.Params)
		if r.answer != nil && f.Seq > r.answer.Seq && slices.Contains(turnKinds, u.Kind) {
			run.UpdatesAfter++
		}
		switch u.Kind {
		case "agent_thought_chunk":
			run.ThoughtChunks++
		case "usage_update":
			run.Usage = true
		case "tool_call", "tool_call_update":
			run.ToolCalls = mergeToolCall(run.ToolCalls, tools, u)
		}
		if u.Text == "" {
			continue
		}
		if u.Kind == "agent_message_chunk" || u.Kind == "agent_thought_chunk" {
			if run.FirstChunkMs == nil {
				d := record.Millis(f.At - r.prompt.At)
				run.FirstChunkMs = &d
			}
			if r.answer != nil && f.Seq < r.answer.Seq {
				d := record.Millis(r.answer.At - f.At)
				run.AnswerAfterChunkMs = &d
			}
		}
		b := texts[u.Kind]
		if b == nil {
			b = &strings.Builder{}
			texts[u.Kind] = b
		}
		if b.Len() < maxTurnText*4 {
			b.WriteString(u.Text)
		}
	}
	for kind, b := range texts {
		if strings.Contains(b.String(), record.TurnReplyMarker) {
			run.TextIn = append(run.TextIn, kind)
		}
	}
	slices.Sort(run.TextIn)
	if b := texts["agent_message_chunk"]; b != nil {
		run.Text = cutRunes(b.String(), maxTurnText)
	}
	run.ModelRequests, run.ModelRequestsAfter = len(r.models), r.modelsAfter
	for _, m := range r.models {
		if m.model != "" && !slices.Contains(run.Models, m.model) {
			run.Models = append(run.Models, m.model)
		}
		if m.reason != "" && !slices.Contains(run.Reasoning, m.reason) {
			run.Reasoning = append(run.Reasoning, m.reason)
		}
		if m.complete {
			run.ModelAnswered = append(run.ModelAnswered, m.answer)
		}
	}
	return run
}

func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// promptCaps are the content types promptCapabilities allows, from the initialize answer
// (text and resource_link always).
func promptCaps(x *record.Index) map[string]bool {
	caps := map[string]bool{"text": true, "resource_link": true}
	if ex := x.First(acp.MethodInitialize); ex != nil && ex.Answer != nil {
		pc := acp.ParseObject(ex.Answer.Msg.Result).Object("agentCapabilities").Object("promptCapabilities")
		caps["image"], caps["audio"], caps["resource"] = pc.Bool("image"), pc.Bool("audio"), pc.Bool("embeddedContext")
	}
	return caps
}

// shapeDeliveries compares, per content block type sent, acceptance with what reached the
// model. The type is the prompt's first block's.
func shapeDeliveries(runs []*turnRun, caps map[string]bool) []report.ShapeDelivery {
	var out []report.ShapeDelivery
	for _, r := range runs {
		blocks := acp.ParseObject(r.prompt.Msg.Params).Array("prompt")
		if len(blocks) == 0 {
			continue
		}
		kind := acp.ParseObject(blocks[0]).String("type")
		d := report.ShapeDelivery{Type: kind, Seq: r.prompt.Seq, Advertised: caps[kind]}
		if r.answer != nil {
			if e := r.answer.Msg.Err(); e != nil {
				code := e.Code
				d.Code = &code
				d.Accepted = !acp.IsValidationError(e)
			} else {
				d.Accepted = true
			}
		}
		for _, m := range r.models {
			d.ReachedAs = m.kinds
			if carries(kind, m) {
				d.Reached = true
			}
		}
		out = append(out, d)
	}
	return out
}

// carries reports whether a model request's last user message carried a block of kind: media
// by its content kind in any dialect (image, input_image, inlineData:image/png …), the others
// by ShapeMarker in its text, or as a document or file part.
func carries(kind string, m modelCall) bool {
	for _, k := range m.kinds {
		switch kind {
		case "image", "audio":
			if strings.Contains(k, kind) {
				return true
			}
		case "resource_link", "resource":
			if k == "document" || k == "file" || strings.Contains(k, "input_file") {
				return true
			}
		}
	}
	return kind != "image" && kind != "audio" && strings.Contains(m.text, record.ShapeMarker)
}

// cancelTruth is how the cancelled turn ended (the scenario's first prompt), and the turn
// after it (its second).
func cancelTruth(frames []jsonrpc.Frame, runs []*turnRun) *report.CancelTruth {
	c := &report.CancelTruth{}
	if len(runs) == 0 {
		return c
	}
	first := runs[0]
	var cancel *jsonrpc.Frame
	for i, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == acp.MethodSessionCancel {
			cancel = &frames[i]
			break
		}
	}
	if cancel != nil && (first.answer == nil || first.answer.Seq > cancel.Seq) {
		c.Sent, c.Seq = true, cancel.Seq
		c.ModelDone = first.modelDoneBefore(cancel.Seq)
	}
	facts := first.facts()
	c.StopReason = facts.StopReason
	if first.answer != nil && cancel != nil && c.Sent {
		d := record.Millis(first.answer.At - cancel.At)
		c.WithinMs = &d
	}
	c.UpdatesAfter = facts.UpdatesAfter
	if len(runs) > 1 {
		next := runs[1].facts()
		c.NextStopReason, c.NextText, c.NextModelRequests = next.StopReason, slices.Contains(next.TextIn, "agent_message_chunk"), next.ModelRequests
		if next.Code != nil {
			c.NextStopReason = ""
		}
	}
	return c
}

// mergeToolCall folds a tool_call or tool_call_update into calls (index: a call's position by
// its id): the first update of an id adds it, later ones set its kind and status when they
// carry them, so each call ends with its last known kind and status.
func mergeToolCall(calls []report.ToolCallTruth, index map[string]int, u acp.SessionUpdate) []report.ToolCallTruth {
	i, ok := index[u.ToolCallID]
	if !ok {
		i = len(calls)
		index[u.ToolCallID] = i
		calls = append(calls, report.ToolCallTruth{ID: u.ToolCallID})
	}
	if u.ToolKind != "" {
		calls[i].Kind = u.ToolKind
	}
	if u.Status != "" {
		calls[i].Status = u.Status
	}
	return calls
}
