package derive

import (
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// deriveTurns reads the facts of the prompt-turn scenarios (acpprobe turn) from their step
// ranges: each scenario's prompts with what came back on the wire, the model requests the
// emulator recorded during each, and what the scenario observed outside the wire. Outcomes are
// left empty: the turns pass decides them with its findings (judgeTurns). A scenario recorded
// as skipped is not run, with its reason. The sessions scenario also reads its connections
// after the main one (conns). nil when the record has no turn scenario.
func deriveTurns(x *record.Index, conns sessionConns, run runModel) []report.Turn {
	skipped := map[string]string{}
	for _, f := range x.Events(record.StepSkipped.Kind) {
		if p, ok := record.StepSkipped.Decode(f); ok {
			skipped[p.Name] = p.Reason
		}
	}
	began := map[string]bool{} // from the index of events: no scan of a record without turns
	for _, f := range x.Events(record.Step.Kind) {
		if p, ok := record.Step.Decode(f); ok {
			began[p.Name] = true
		}
	}
	var turns []report.Turn
	for _, s := range record.Scenarios {
		name := s.StepName()
		if why, ok := skipped[name]; ok {
			turns = append(turns, report.Turn{Scenario: string(s), Outcome: report.TurnNotRun, Reason: why, Runs: []report.TurnRun{}})
			continue
		}
		if !began[name] {
			continue
		}
		frames := x.StepRange(name)
		t := report.Turn{Scenario: string(s), Runs: []report.TurnRun{}}
		runs := splitRuns(x, frames)
		for _, r := range runs {
			t.Runs = append(t.Runs, r.facts())
		}
		switch s {
		case record.ScenarioShapes:
			t.Shapes = shapeDeliveries(runs, promptCaps(x))
		case record.ScenarioModels:
			t.Models = modelTruths(x, frames, runs)
		case record.ScenarioPermission:
			t.Permission = permissionTruth(x, frames, runs)
		case record.ScenarioCancel:
			t.Cancel = cancelTruth(frames, runs)
		case record.ScenarioMCP:
			t.MCP = mcpTruths(x, frames)
		case record.ScenarioSessions:
			t.Sessions = sessionsTruth(x, runs, conns)
		}
		if why := notRun(x, s, t, run); why != "" {
			t.Outcome, t.Reason = report.TurnNotRun, why
		}
		turns = append(turns, t)
	}
	return turns
}

// notRun says why a scenario that began could not run (the agent still refused for want of a
// login, never called the model, went away, or the scenario's premise did not hold); "" when
// it ran. A scenario that could not run is never a pass and never a failure of the agent.
func notRun(x *record.Index, s record.Scenario, t report.Turn, run runModel) string {
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
	case run.requests == 0:
		return "the agent never called the model emulator in this run: " + run.route.Describe() + " did not take effect" + run.hint()
	case s == record.ScenarioPermission && !t.Permission.Offered:
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
		if run.FirstChunkMs == nil && (u.Kind == "agent_message_chunk" || u.Kind == "agent_thought_chunk") {
			d := record.Millis(f.At - r.prompt.At)
			run.FirstChunkMs = &d
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

// modelTruths pairs each selection (session/set_config_option of the model or thought level
// option, or the legacy session/set_model) with the prompt that follows it, and what the model
// requests of that prompt asked for.
func modelTruths(x *record.Index, frames []jsonrpc.Frame, runs []*turnRun) []report.ModelTruth {
	var opts []acp.ConfigOption
	var legacy []acp.Model
	if ex := x.First(acp.MethodSessionNew); ex != nil && ex.Answer != nil && ex.Answer.Msg.Err() == nil {
		ns := acp.ParseSessionResult(ex.Answer.Msg.Result)
		opts, legacy = ns.ConfigOptions, ns.LegacyModels
	}
	thought := acp.ThoughtLevelOption(opts)
	var out []report.ModelTruth
	for _, f := range frames {
		var t report.ModelTruth
		var p acp.Object
		if f.Msg != nil {
			p = acp.ParseObject(f.Msg.Params)
		}
		switch {
		case isClientRequest(f, acp.MethodSetConfigOption):
			t.Option, t.Value = p.String("configId"), p.String("value")
		case isClientRequest(f, acp.MethodSetModel):
			t.Option, t.Value = acp.MethodSetModel, p.String("modelId")
		default:
			continue
		}
		t.Seq, t.Requested = f.Seq, []string{}
		if a, ok := x.AnswerTo(f.Seq); ok && a.Msg.Err() == nil {
			t.Set = true
		}
		isThought := thought != nil && t.Option == thought.ID
		if r := runAfter(runs, f.Seq); r != nil && t.Set {
			for _, m := range r.models {
				v := m.model
				if isThought {
					v = m.reason
				}
				if v != "" && !slices.Contains(t.Requested, v) {
					t.Requested = append(t.Requested, v)
				}
			}
		}
		var others []string
		if t.Option == acp.MethodSetModel {
			for _, m := range legacy {
				others = append(others, m.ID)
			}
		} else {
			for _, o := range opts {
				if o.ID == t.Option {
					others = o.Values()
				}
			}
		}
		t.Reached = reached(t.Value, others, t.Requested)
		out = append(out, t)
	}
	return out
}

// runAfter is the first prompt after seq.
func runAfter(runs []*turnRun, seq int64) *turnRun {
	for _, r := range runs {
		if r.prompt.Seq > seq {
			return r
		}
	}
	return nil
}

// reached says whether the requests asked for value: true when value is the option's value a
// request names best, false when another of the option's values is, nil when nothing tells
// (no request, or an alias such as "default" or "auto" that names no model).
func reached(value string, values, requested []string) *bool {
	if len(requested) == 0 || value == "" {
		return nil
	}
	if !slices.Contains(values, value) {
		values = append(slices.Clone(values), value)
	}
	yes, no := true, false
	for _, req := range requested {
		if best(req, values) == value {
			return &yes
		}
	}
	if alias(value) {
		return nil
	}
	for _, req := range requested {
		if b := best(req, values); b != "" && !alias(b) {
			return &no
		}
	}
	return nil
}

// best is the value a requested model names best: the one it equals, else the one with the
// most words that it names ("gpt-5.1-codex-mini" names gpt-5.1-codex-mini before
// gpt-5.1-codex); "" when it names none or two equally.
func best(requested string, values []string) string {
	top, topWords, tie := "", 0, false
	for _, v := range values {
		if !names(requested, v) {
			continue
		}
		if normalise(v) == strings.ToLower(requested) {
			return v
		}
		switch n := len(words(normalise(v))); {
		case n > topWords:
			top, topWords, tie = v, n, false
		case n == topWords:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return top
}

// alias reports whether a value names a choice rather than a model or a level.
func alias(value string) bool {
	v := strings.ToLower(value)
	return strings.Contains(v, "default") || strings.Contains(v, "auto")
}

// names reports whether a requested model (or reasoning setting) names value: the whole
// value, or every word of it, appears in the request as whole words ("sonnet[1m]" names
// "claude-sonnet-4-6"; "high" names "effort=high" but not "effort=xhigh").
func names(requested, value string) bool {
	req, val := strings.ToLower(requested), normalise(value)
	if val == "" {
		return false
	}
	if req == val || strings.HasSuffix(req, "/"+val) {
		return true
	}
	have, want := words(req), words(val)
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		if !slices.Contains(have, w) {
			return false
		}
	}
	return true
}

// normalise lowers a value and drops what names no model: a context-size suffix
// ("sonnet[1m]") and Gemini's "models/" prefix.
func normalise(value string) string {
	v := strings.ToLower(value)
	if i := strings.IndexByte(v, '['); i > 0 {
		v = v[:i]
	}
	return strings.TrimPrefix(v, "models/")
}

// words splits a model name into its words (letters, digits and dots).
func words(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '.') })
}

// permissionTruth is what the agent did when the model asked to write a file: the tool call it
// reported, whether it asked, acpprobe's answer, and whether the file appeared (the
// scenario's file-exists observation).
func permissionTruth(x *record.Index, frames []jsonrpc.Frame, runs []*turnRun) *report.PermissionTruth {
	p := &report.PermissionTruth{}
	toolCallID := ""
	for _, f := range frames {
		switch {
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request && f.Msg.Method == acp.MethodRequestPermission:
			if !p.Asked {
				p.Asked, p.AskedSeq = true, f.Seq
				toolCallID = acp.ParsePermissionRequest(f.Msg.Params).ToolCallID
				if a, ok := x.AnswerTo(f.Seq); ok {
					o := acp.ParseObject(a.Msg.Result).Object("outcome")
					p.Answer = o.String("optionId")
					if p.Answer == "" {
						p.Answer = o.String("outcome")
					}
				}
			}
		case record.Observation.Is(f):
			if o, ok := record.Observation.Decode(f); ok && o.Name == "file-exists" {
				p.FileWritten = o.Value == true
			}
		}
	}
	for _, r := range runs {
		for _, m := range r.models {
			if m.answer == "toolCall" {
				p.Offered = true
			}
		}
		facts := r.facts()
		if p.StopReason == "" {
			p.StopReason = facts.StopReason
		}
		for _, tc := range facts.ToolCalls {
			p.ToolCall = true
			if toolCallID == "" || tc.ID == toolCallID {
				p.ToolStatus = tc.Status
			}
		}
	}
	return p
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
