package derive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Connection builds the Result of one connection from its record: the frames of both
// directions, stderr chunks and the engine's events. cat recognises errors that demand vendor
// metadata (extensions.Default() when nil). It is bounded by ctx (Ctrl-C, what is left of
// --timeout): the facts read from a fixed number of frames (the handshake, the events, the
// exit) are always derived; the walks whose cost grows with the record (the totals of
// notifications, requests and stderr, the method timings, method detection) stop when ctx
// ends, and the result then says its totals are partial (Coverage.Partial).
func Connection(ctx context.Context, x *record.Index, cat *extensions.Catalogue) *report.Result {
	if cat == nil {
		cat = extensions.Default()
	}
	b := &builder{ctx: ctx, x: x, cat: cat, spawn: x.Spawn()}
	_, closed := x.FirstEvent(record.Done.Kind)
	b.truncated = !closed
	if f, ok := x.FirstEvent(record.Spawn.Kind); ok {
		b.spawnAt = f.At
	}
	b.build()
	if b.partial {
		if b.r.Coverage == nil {
			b.r.Coverage = &report.Coverage{}
		}
		b.r.Coverage.Partial = true
	}
	b.r.Coverage.Explain()
	return b.r
}

type builder struct {
	// ctx bounds the walks over the record (see more).
	ctx context.Context
	// partial is set when ctx ended a walk before the end of the record.
	partial bool
	x       *record.Index
	cat     *extensions.Catalogue
	r       *report.Result
	spawn   record.SpawnInfo
	spawnAt time.Duration
	// truncated: the record ends without its done event (a transcript cut short).
	truncated bool
	// cutInMethods: a truncated record ends before a method detection request was answered.
	cutInMethods bool
}

// checkEvery is how many frames a walk reads between two looks at the context.
const checkEvery = 64

// more reports whether a walk at its i-th frame may go on: false, and the result partial,
// once the context has ended.
func (b *builder) more(i int) bool {
	if i%checkEvery == 0 && b.ctx.Err() != nil {
		b.partial = true
	}
	return !b.partial
}

// request returns the client's first request for method, and its answer if it came in time:
// an answer after the budget of stage ran out (a timeout event) is late, and late says by
// how long.
func (b *builder) request(method string, stage record.Stage) (req, answer *jsonrpc.Frame, late time.Duration) {
	ex := b.x.First(method)
	if ex == nil {
		return nil, nil, 0
	}
	if ex.Answer != nil {
		for _, f := range b.x.Events(record.Timeout.Kind) {
			if p, _ := record.Timeout.Decode(f); p.Stage == stage && f.Seq < ex.Answer.Seq {
				return &ex.Request, nil, ex.Answer.At - f.At
			}
		}
	}
	return &ex.Request, ex.Answer, 0
}

func (b *builder) build() {
	b.r = newResult(b.spawn)
	r := b.r
	if f, ok := b.x.FirstEvent(record.Started.Kind); ok {
		p, _ := record.Started.Decode(f)
		r.Agent.PID = p.PID
	}
	if f, ok := b.x.FirstEvent(record.Exit.Kind); ok {
		if x, ok := record.Exit.Decode(f); ok {
			r.Exit = &x
		}
	}
	b.stderr()
	b.counts()
	b.timings()
	defer func() {
		// Interrupted while the agent was being stopped: the probe itself had ended.
		if b.x.AtStage(record.Interrupted, record.StageTeardown) {
			b.fail(report.ErrInterrupted, record.StageTeardown, "stopped by a signal (Ctrl-C) during the teardown: the agent was torn down without the rest of its graces", nil)
		}
		if b.truncated {
			stage := record.StageTeardown
			if b.cutInMethods {
				stage = record.StageMethods
			}
			b.failTruncated(stage)
		}
		if s := r.Methods[acp.MethodSetConfigOption].Support; s == report.Supported || s == report.Unsupported {
			yes := s == report.Supported
			r.SupportsConfigOption = &yes
		}
		if r.Error != nil {
			r.Error.Stderr = r.StderrTail
		}
	}()

	if b.x.AtStage(record.Interrupted, record.StageSpawn) {
		b.fail(report.ErrInterrupted, record.StageSpawn, "stopped by a signal (Ctrl-C) before the agent started", nil)
		b.methods()
		return
	}
	if f, ok := b.x.FirstEvent(record.SpawnFailed.Kind); ok {
		p, _ := record.SpawnFailed.Decode(f)
		b.fail(report.ErrSpawnFailed, record.StageSpawn, p.Message, nil)
		b.methods()
		return
	}
	if !b.initialize() || b.spawn.InitializeOnly {
		b.methods()
		return
	}
	if f, ok := b.x.FirstEvent(record.AuthPolicyStop.Kind); ok {
		p, _ := record.AuthPolicyStop.Decode(f)
		r.Auth = report.AuthStatus{Status: report.AuthRequired, Evidence: []string{
			fmt.Sprintf("the agent advertises %d authMethods and the auth policy is fail: session/new was not called", p.AuthMethods)}}
		b.fail(report.ErrAuthRequired, record.StageSessionNew, "authentication methods advertised (auth policy fail)", nil)
	} else {
		b.newSession()
	}
	b.methods()
}

// initialize reads the initialize exchange; false means the probe stopped there.
func (b *builder) initialize() bool {
	r := b.r
	req, answer, late := b.request(acp.MethodInitialize, record.StageInitialize)
	if req == nil {
		b.noAnswer(record.StageInitialize, report.ErrInitializeTimeout, "the probe stopped before initialize")
		return false
	}
	if f, ok := b.x.FirstEvent(record.NotJSONRPC.Kind); ok && answer == nil {
		p, _ := record.NotJSONRPC.Decode(f)
		b.fail(report.ErrProtocolMismatch, record.StageInitialize, fmt.Sprintf(
			"the program wrote %d lines on stdout and not one JSON-RPC message: not an ACP agent (the probe stopped waiting for initialize)", p.Lines), nil)
		return false
	}
	if answer == nil {
		msg := fmt.Sprintf("no answer to initialize within %s", msDuration(b.spawn.StartupTimeoutMs))
		switch {
		case late > 0:
			msg += fmt.Sprintf("; the agent answered %s after the budget ran out: raise --startup-timeout", late.Round(time.Millisecond))
		case b.busyBefore(record.StageInitialize, req.At):
			msg += "; the agent was busy (writing on stderr) near the deadline: it may need a longer --startup-timeout"
		}
		b.noAnswer(record.StageInitialize, report.ErrInitializeTimeout, msg)
		return false
	}
	if b.echoed(req) {
		b.fail(report.ErrProtocolMismatch, record.StageInitialize,
			"the program echoes the client's messages (it wrote acpprobe's initialize request back on stdout): not an ACP agent", nil)
		return false
	}
	if rpcErr := answer.Msg.Err(); rpcErr != nil {
		code := report.ErrUnknown
		if acp.IsAuthError(rpcErr) {
			code = report.ErrAuthRequired
			r.Auth = report.AuthStatus{Status: report.AuthRequired, Evidence: []string{"initialize answered " + errorText(rpcErr)}}
		}
		b.fail(code, record.StageInitialize, "initialize failed: "+errorText(rpcErr), rpcErr.Raw)
		return false
	}
	r.Raw.Initialize = answer.Msg.Result
	init := acp.ParseInitializeResult(answer.Msg.Result)
	r.Capabilities = capabilities(init.Capabilities)
	if init.AuthMethods != nil {
		r.AuthMethods = init.AuthMethods
	}
	r.AgentInfo = init.AgentInfo
	if !init.VersionOK {
		b.fail(report.ErrProtocolMismatch, record.StageInitialize, "initialize result has no integer protocolVersion", nil)
		return false
	}
	v := init.ProtocolVersion
	r.ProtocolVersion = &v
	if v != acp.ProtocolVersion {
		b.fail(report.ErrProtocolMismatch, record.StageInitialize, fmt.Sprintf(
			"the agent answered protocolVersion %d to a request for %d; acpprobe speaks version %d",
			v, b.spawn.ProtocolVersion, acp.ProtocolVersion), nil)
		return false
	}
	return true
}

// echoed reports whether the agent wrote req back on its stdout, byte for byte: a program
// that copies its input to its output (cat), whose "answers" are acpprobe's own messages, its
// refusal of the echoed request included.
func (b *builder) echoed(req *jsonrpc.Frame) bool {
	for i, f := range b.x.Frames() {
		if !b.more(i) {
			return false
		}
		if f.Dir == jsonrpc.DirAgent && f.Seq > req.Seq && bytes.Equal(f.Raw, req.Raw) {
			return true
		}
	}
	return false
}

func (b *builder) newSession() {
	r := b.r
	req, answer, late := b.request(acp.MethodSessionNew, record.StageSessionNew)
	if req == nil || answer == nil {
		msg := "no answer to session/new within the total budget"
		if late > 0 {
			msg += fmt.Sprintf("; the agent answered %s after the budget ran out: raise --timeout", late.Round(time.Millisecond))
		}
		b.noAnswer(record.StageSessionNew, report.ErrSessionNewTimeout, msg)
		return
	}
	if rpcErr := answer.Msg.Err(); rpcErr != nil {
		if acp.IsAuthError(rpcErr) {
			r.Auth = report.AuthStatus{Status: report.AuthRequired, Evidence: []string{"session/new answered " + errorText(rpcErr)}}
			if auth := b.x.First(acp.MethodAuthenticate); auth != nil && auth.Request.Seq < req.Seq {
				r.Auth.Evidence = append(r.Auth.Evidence, fmt.Sprintf("even after authenticate (methodId %s)", acp.ParseObject(auth.Request.Msg.Params).String("methodId")))
			}
			b.fail(report.ErrAuthRequired, record.StageSessionNew, "session/new requires authentication: "+errorText(rpcErr), rpcErr.Raw)
			return
		}
		if key, demands := b.cat.MetadataDemand(rpcErr.Message + " " + string(rpcErr.Data)); demands {
			r.Auth.Evidence = append(r.Auth.Evidence, "session/new demands vendor metadata ("+key+") before anything else")
			b.fail(report.ErrMetadataRequired, record.StageSessionNew, fmt.Sprintf("session/new requires vendor _meta %s, which a standard client never sends: %s", key, errorText(rpcErr)), rpcErr.Raw)
			return
		}
		r.Auth.Evidence = append(r.Auth.Evidence, "session/new failed with an error that does not name authentication: "+errorText(rpcErr))
		b.fail(report.ErrUnknown, record.StageSessionNew, "session/new failed: "+errorText(rpcErr), rpcErr.Raw)
		return
	}
	r.Raw.NewSession = answer.Msg.Result
	s := acp.ParseSessionResult(answer.Msg.Result)
	evidence := "session/new succeeded without authenticate"
	if auth := b.x.First(acp.MethodAuthenticate); auth != nil && auth.Request.Seq < req.Seq {
		evidence = fmt.Sprintf("session/new succeeded after authenticate (methodId %s", acp.ParseObject(auth.Request.Msg.Params).String("methodId"))
		if auth.Answer != nil && auth.Answer.Msg.Err() != nil {
			evidence += ", which answered " + errorText(auth.Answer.Msg.Err())
		}
		evidence += ")"
	} else if len(r.AuthMethods) > 0 {
		evidence += fmt.Sprintf(" (the agent advertises %d authMethods; a prompt may still ask for them)", len(r.AuthMethods))
	}
	r.Auth = report.AuthStatus{Status: report.AuthAuthenticated, Evidence: []string{evidence}}
	if s.Modes != nil {
		r.Modes = s.Modes
	}
	r.CurrentModeID = s.CurrentModeID
	if s.ConfigOptions != nil {
		r.ConfigOptions = s.ConfigOptions
	}
	if s.LegacyModels != nil {
		r.Models = s.LegacyModels
	}
	deriveModels(r)
}

// noAnswer classifies a request that got no answer: the caller interrupted, a budget ran out
// (timeoutCode), or the agent went away (agent_crashed, told from the exit record).
func (b *builder) noAnswer(stage record.Stage, timeoutCode report.ErrorCode, timeoutMsg string) {
	switch {
	case b.x.AtStage(record.Interrupted, stage):
		b.fail(report.ErrInterrupted, stage, interruptedAt(stage), nil)
	case b.x.AtStage(record.Timeout, stage):
		b.fail(timeoutCode, stage, timeoutMsg, nil)
	case b.truncated:
		b.failTruncated(stage)
	default:
		b.fail(report.ErrAgentCrashed, stage, b.crashMessage(stage), nil)
	}
}

// failTruncated reports a record cut short before stage was over.
func (b *builder) failTruncated(stage record.Stage) {
	frames := b.x.Frames()
	var end jsonrpc.Frame
	if len(frames) > 0 {
		end = frames[len(frames)-1]
	}
	b.fail(report.ErrTruncated, stage, fmt.Sprintf("the record ends at seq %d (%s in) without the events that close a session: it was cut short during %s, and what happened after that is unknown",
		end.Seq, end.At.Round(time.Millisecond), stage), nil)
}

// busyBefore reports whether the agent wrote on stderr in the last stretch before the budget
// of stage ran out (the last quarter of the wait, at most busyWindow): a sign it was still
// starting, not hung. Output right after the request says nothing about that.
func (b *builder) busyBefore(stage record.Stage, sent time.Duration) bool {
	for _, f := range b.x.Events(record.Timeout.Kind) {
		if p, _ := record.Timeout.Decode(f); p.Stage != stage {
			continue
		}
		window := min(busyWindow, (f.At-sent)/4)
		for i, g := range b.x.Frames() {
			if !b.more(i) {
				return false
			}
			if g.Dir == jsonrpc.DirStderr && g.Seq < f.Seq && f.At-g.At <= window {
				return true
			}
		}
	}
	return false
}

// busyWindow bounds how close to a deadline stderr output counts as "still busy".
const busyWindow = 2 * time.Second

func (b *builder) crashMessage(stage record.Stage) string {
	x := b.r.Exit
	if x != nil && x.By == record.ExitSelf {
		switch {
		case x.Signal != "":
			return fmt.Sprintf("the agent was killed by %s before answering %s", x.Signal, stage)
		case x.Code != nil:
			return fmt.Sprintf("the agent exited with status %d before answering %s", *x.Code, stage)
		}
	}
	return fmt.Sprintf("the agent closed its output before answering %s (the process was still running)", stage)
}

// methods reads the optional-method probes: the requests for probed methods sent before the
// first step or teardown.
func (b *builder) methods() {
	r := b.r
	if f, ok := b.x.FirstEvent(record.MethodsSkipped.Kind); ok {
		p, _ := record.MethodsSkipped.Decode(f)
		for _, m := range acp.ProbedMethods {
			r.Methods[m] = report.MethodSupport{Support: report.Skipped, Message: p.Reason}
		}
		return
	}
	end := b.x.ActiveEnd()
	eof, sawEOF := b.x.FirstEvent(record.EOF.Kind)
	goneEarly := sawEOF && (end == 0 || eof.Seq < end)
	// The detection requests: per method the first (invalid params, or a made-up session in
	// older recordings) and the fallback asked after an ambiguous first answer; and the control.
	asked := map[string][]*record.Exchange{}
	var control *jsonrpc.Message
	for i, ex := range b.x.Calls(jsonrpc.DirClient) {
		m := ex.Method()
		if (end != 0 && ex.Request.Seq > end) || !b.more(i) {
			break
		}
		switch {
		case m == record.DetectionControlMethod && control == nil && ex.Answer != nil:
			control = ex.Answer.Msg
		case isProbed(m):
			asked[m] = append(asked[m], ex)
		}
	}
	probed := map[string]bool{}
	for m, exs := range asked {
		probed[m] = true
		s := b.detect(exs[0], control, goneEarly)
		if s.Support == report.Unknown && len(exs) > 1 && s.DetectedBy == report.DetectedByInvalidParams && exs[0].Answer != nil {
			s = b.detect(exs[1], control, goneEarly)
		}
		r.Methods[m] = s
	}
	for _, m := range acp.ProbedMethods {
		if _, ok := r.Methods[m]; !ok {
			r.Methods[m] = report.MethodSupport{Support: report.Skipped, Message: "not probed"}
		}
	}
	if len(probed) == 0 {
		return
	}
	switch {
	case b.x.AtStage(record.Interrupted, record.StageMethods):
		b.fail(report.ErrInterrupted, record.StageMethods, interruptedAt(record.StageMethods), nil)
	case goneEarly && len(probed) > 0:
		for m := range probed {
			if r.Methods[m].Support == report.Unknown {
				b.fail(report.ErrAgentCrashed, record.StageMethods, b.crashMessage(record.StageMethods), nil)
				break
			}
		}
	}
}

// detect reads one detection request and its answer.
func (b *builder) detect(ex *record.Exchange, control *jsonrpc.Message, goneEarly bool) report.MethodSupport {
	form := detectionForm(ex.Method(), ex.Request.Msg.Params)
	s := report.MethodSupport{Support: report.Unknown, DetectedBy: form}
	switch {
	case ex.Answer == nil && goneEarly:
		s.Message = "the agent ended its output before answering"
	case ex.Answer == nil && b.truncated:
		s.Message = "the record ends before an answer"
		b.cutInMethods = true
	case ex.Answer == nil:
		s.Message = fmt.Sprintf("no answer within %s", msDuration(b.spawn.RequestTimeoutMs))
	default:
		s, _ = Classify(form, ex.Answer.Msg, control)
		s.DetectedBy = form
		s.Ms = record.Millis(ex.Answer.At - ex.Request.At)
	}
	return s
}

func isProbed(method string) bool {
	for _, m := range acp.ProbedMethods {
		if m == method {
			return true
		}
	}
	return false
}

// interruptedAt is the message of a probe stopped by a signal (Ctrl-C) at stage: said once,
// as the error line prints it after the code.
func interruptedAt(stage record.Stage) string {
	return fmt.Sprintf("stopped by a signal (Ctrl-C) during the %s stage; the agent was torn down", stage)
}

// fail records the first error; later ones are consequences. An agent error acpprobe knows
// the cause of carries its hint (knownAgentErrors).
func (b *builder) fail(code report.ErrorCode, stage record.Stage, msg string, agentErr json.RawMessage) {
	if b.r.Error == nil {
		b.r.Error = &report.Error{Code: code, Stage: stage, Message: msg, AgentError: agentErr, Hint: agentErrorHint(agentErr)}
	}
}

// stderr rebuilds the stderr tail and total from the recorded chunks (a log keeps only the
// bytes of recent ones; every chunk keeps its size).
func (b *builder) stderr() {
	tail := record.NewTailBuffer(record.DefaultStderrTail)
	for i, f := range b.x.Frames() {
		if !b.more(i) {
			break
		}
		switch f.Dir {
		case jsonrpc.DirStderr:
			_, _ = tail.Write(f.Raw)
			b.r.StderrBytes += f.Size
		case jsonrpc.DirFolded:
			_, _ = tail.Write(f.Folded.StderrTail)
			b.r.StderrBytes += f.Folded.StderrBytes
		}
	}
	b.r.StderrTail = string(tail.Bytes())
}

// counts tallies the agent's notifications and requests, those the record folded included.
func (b *builder) counts() {
	r := b.r
	for _, run := range b.x.Folded() {
		for _, c := range record.FoldedCounts(run) {
			switch {
			case c.Notification:
				r.Notifications.Total += int(c.N)
				r.Notifications.ByMethod[c.Method] += int(c.N)
				if c.SessionUpdate != "" {
					r.Notifications.BySessionUpdate[c.SessionUpdate] += int(c.N)
				}
			case c.Request:
				r.AgentRequests[c.Method] += int(c.N)
			}
		}
		if r.Coverage == nil {
			r.Coverage = &report.Coverage{}
		}
		r.Coverage.FoldedFrames += run.Frames
		r.Coverage.FoldedBytes += run.Bytes
	}
	for i, f := range b.x.Frames() {
		if !b.more(i) {
			break
		}
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil {
			continue
		}
		switch f.Msg.Kind() {
		case jsonrpc.Notification:
			r.Notifications.Total++
			r.Notifications.ByMethod[f.Msg.Method]++
			if f.Msg.Method == acp.MethodSessionUpdate {
				kind := acp.ParseObject(f.Msg.Params).Object("update").String("sessionUpdate")
				if kind == "" {
					kind = "(none)"
				}
				r.Notifications.BySessionUpdate[kind]++
			}
		case jsonrpc.Request:
			r.AgentRequests[f.Msg.Method]++
		}
	}
}

// timings measures the steps from the frames' monotonic times.
func (b *builder) timings() {
	t := &b.r.Timings
	if req, answer, _ := b.request(acp.MethodInitialize, record.StageInitialize); answer != nil {
		t.SpawnToInitializeMs = record.Millis(answer.At - b.spawnAt)
		t.InitializeMs = record.Millis(answer.At - req.At)
	}
	if req, answer, _ := b.request(acp.MethodSessionNew, record.StageSessionNew); answer != nil {
		t.SessionNewMs = record.Millis(answer.At - req.At)
	}
	frames := b.x.Frames()
	teardown, hasTeardown := b.x.FirstEvent(record.Teardown.Kind)
	methodsEnd := b.x.ActiveEnd()
	var endAt time.Duration
	for i, f := range frames {
		if !b.more(i) {
			break
		}
		if f.Seq == methodsEnd {
			endAt = f.At
		}
	}
	var first, last time.Duration = -1, -1
	for i, ex := range b.x.Calls(jsonrpc.DirClient) {
		if !b.more(i) {
			break
		}
		req := ex.Request
		if !isProbed(req.Msg.Method) || (methodsEnd != 0 && req.Seq > methodsEnd) {
			continue
		}
		if first < 0 {
			first = req.At
		}
		end := endAt
		if ex.Answer != nil {
			end = ex.Answer.At
		}
		last = max(last, end)
	}
	if first >= 0 && last >= first {
		t.MethodsMs = record.Millis(last - first)
	}
	if exit, ok := b.x.FirstEvent(record.Exit.Kind); ok && hasTeardown {
		t.TeardownMs = record.Millis(exit.At - teardown.At)
	}
	end := b.spawnAt
	if len(frames) > 0 {
		end = frames[len(frames)-1].At
	}
	if done, ok := b.x.FirstEvent(record.Done.Kind); ok {
		end = done.At
	}
	t.TotalMs = record.Millis(end - b.spawnAt)
	b.r.Agent.DurationMs = t.TotalMs
}

func newResult(s record.SpawnInfo) *report.Result {
	r := &report.Result{
		Schema:        report.ResultSchema,
		Agent:         report.AgentRef{Command: s.Command, Argv: s.Argv, Cwd: s.Cwd, ProbedAt: s.ProbedAt},
		AuthMethods:   []json.RawMessage{},
		Auth:          report.AuthStatus{Status: report.AuthUnknown, Evidence: []string{}},
		Models:        []acp.Model{},
		Modes:         []acp.Mode{},
		ConfigOptions: []acp.ConfigOption{},
		Methods:       map[string]report.MethodSupport{},
		Notifications: report.Notifications{ByMethod: map[string]int{}, BySessionUpdate: map[string]int{}},
		AgentRequests: map[string]int{},
		Findings:      []report.Finding{},
		Raw:           report.Raw{Initialize: json.RawMessage("null"), NewSession: json.RawMessage("null")},
	}
	if r.Agent.Argv == nil {
		r.Agent.Argv = []string{}
	}
	r.Capabilities.MetaKeys = []string{}
	if s.AgentID != "" {
		id := s.AgentID
		r.Agent.ID = &id
	}
	return r
}

// deriveModels fills modelConfig and reasoning from the config options.
func deriveModels(r *report.Result) {
	if opt := acp.ModelOption(r.ConfigOptions); opt != nil {
		r.ModelConfig = &report.ModelConfig{ConfigID: opt.ID, Values: opt.Values(), CurrentValue: opt.Current()}
	}
	if opt := acp.ThoughtLevelOption(r.ConfigOptions); opt != nil {
		r.Reasoning = &report.Reasoning{ConfigID: opt.ID, Values: opt.Values(), DefaultValue: opt.Current()}
	}
}

func capabilities(c acp.Object) report.Capabilities {
	prompt := c.Object("promptCapabilities")
	mcp := c.Object("mcpCapabilities")
	sess := c.Object("sessionCapabilities")
	return report.Capabilities{
		LoadSession:        c.Bool("loadSession"),
		PromptCapabilities: report.PromptCapabilities{Image: prompt.Bool("image"), Audio: prompt.Bool("audio"), EmbeddedContext: prompt.Bool("embeddedContext")},
		McpCapabilities:    report.McpCapabilities{HTTP: mcp.Bool("http"), SSE: mcp.Bool("sse"), ACP: mcp.Bool("acp"), Meta: mcp.Has("_meta")},
		SessionCapabilities: report.SessionCapabilities{Close: sess.Has("close"), List: sess.Has("list"), Resume: sess.Has("resume"),
			Fork: sess.Has("fork"), AdditionalDirectories: sess.Has("additionalDirectories"), Delete: sess.Has("delete")},
		Auth:         report.AuthCapabilities{Logout: c.Object("auth").Has("logout")},
		Experimental: report.Experimental{NES: c.Has("nes"), Providers: c.Has("providers"), PositionEncoding: c.Has("positionEncoding")},
		MetaKeys:     c.Object("_meta").Keys(),
	}
}

func errorText(e *jsonrpc.Error) string {
	s := fmt.Sprintf("%d %s", e.Code, e.Message)
	if len(e.Data) > 0 && string(e.Data) != "null" {
		d := string(e.Data)
		if len(d) > 300 {
			d = d[:300] + "…"
		}
		s += " " + d
	}
	return s
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
