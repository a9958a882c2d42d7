package probe

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/transport"
)

// FromFrames derives the Result of a probe from its record: the frames of both directions,
// stderr chunks and the engine's events (see the Event… constants). Run uses it on the live
// log; analysing a transcript uses it on the recorded one.
func FromFrames(frames []jsonrpc.Frame) *Result {
	b := &builder{frames: frames, answers: map[int64]jsonrpc.Frame{}}
	b.index()
	b.build()
	return b.r
}

type builder struct {
	frames []jsonrpc.Frame
	r      *Result

	spawn    SpawnInfo
	spawnAt  time.Duration
	events   map[string][]jsonrpc.Frame
	requests []jsonrpc.Frame         // client requests in order
	answers  map[int64]jsonrpc.Frame // seq of a client request → the agent's first answer to it
}

// index collects events, client requests and the first answer to each.
func (b *builder) index() {
	b.events = map[string][]jsonrpc.Frame{}
	open := map[string]int64{} // id key → seq of the unanswered client request
	for _, f := range b.frames {
		switch {
		case f.Dir == jsonrpc.DirEvent:
			b.events[f.Kind] = append(b.events[f.Kind], f)
			if f.Kind == EventSpawn {
				_ = json.Unmarshal(f.Raw, &b.spawn)
				b.spawnAt = f.At
			}
		case f.Msg == nil:
		case f.Dir == jsonrpc.DirClient && f.Msg.Kind() == jsonrpc.Request:
			b.requests = append(b.requests, f)
			if key, ok := jsonrpc.IDKey(f.Msg.ID); ok {
				open[key] = f.Seq
			}
		case f.Dir == jsonrpc.DirAgent && f.Msg.Kind() == jsonrpc.Response:
			key, ok := jsonrpc.IDKey(f.Msg.ID)
			if seq, pending := open[key]; ok && pending {
				b.answers[seq] = f
				delete(open, key)
			}
		}
	}
}

// event returns the first event of a kind, and whether there was one.
func (b *builder) event(kind string) (jsonrpc.Frame, bool) {
	if evs := b.events[kind]; len(evs) > 0 {
		return evs[0], true
	}
	return jsonrpc.Frame{}, false
}

// stageEvent finds an event of kind whose payload names stage.
func (b *builder) stageEvent(kind, stage string) bool {
	for _, f := range b.events[kind] {
		var p struct{ Stage string }
		if json.Unmarshal(f.Raw, &p) == nil && p.Stage == stage {
			return true
		}
	}
	return false
}

// request returns the first client request for method, and its answer if any.
func (b *builder) request(method string) (req, answer *jsonrpc.Frame) {
	for i := range b.requests {
		if b.requests[i].Msg.Method == method {
			req = &b.requests[i]
			if a, ok := b.answers[req.Seq]; ok {
				answer = &a
			}
			return req, answer
		}
	}
	return nil, nil
}

func (b *builder) build() {
	b.r = newResult(b.spawn)
	r := b.r
	if f, ok := b.event(EventStarted); ok {
		var p struct{ PID int }
		_ = json.Unmarshal(f.Raw, &p)
		r.Agent.PID = p.PID
	}
	if f, ok := b.event(EventExit); ok {
		var x transport.Exit
		if json.Unmarshal(f.Raw, &x) == nil {
			r.Exit = &x
		}
	}
	b.stderr()
	b.counts()
	b.timings()
	defer func() {
		r.SupportsConfigOption = r.Methods[acp.MethodSetConfigOption].Support == Supported
		if r.Error != nil {
			r.Error.Stderr = r.StderrTail
		}
	}()

	if f, ok := b.event(EventSpawnFailed); ok {
		var p struct{ Message string }
		_ = json.Unmarshal(f.Raw, &p)
		b.fail(ErrSpawnFailed, StageSpawn, p.Message, nil)
		b.methods()
		return
	}
	if !b.initialize() || b.spawn.InitializeOnly {
		b.methods()
		return
	}
	if f, ok := b.event(EventAuthPolicyStop); ok {
		var p struct{ AuthMethods int }
		_ = json.Unmarshal(f.Raw, &p)
		r.Auth = AuthStatus{Status: AuthRequired, Evidence: []string{
			fmt.Sprintf("the agent advertises %d authMethods and the auth policy is fail: session/new was not called", p.AuthMethods)}}
		b.fail(ErrAuthRequired, StageSessionNew, "authentication methods advertised (auth policy fail)", nil)
	} else {
		b.newSession()
	}
	b.methods()
}

// initialize reads the initialize exchange; false means the probe stopped there.
func (b *builder) initialize() bool {
	r := b.r
	req, answer := b.request(acp.MethodInitialize)
	if req == nil {
		b.noAnswer(StageInitialize, ErrInitializeTimeout, "the probe stopped before initialize")
		return false
	}
	if answer == nil {
		b.noAnswer(StageInitialize, ErrInitializeTimeout, fmt.Sprintf("no answer to initialize within %s", msDuration(b.spawn.StartupTimeoutMs)))
		return false
	}
	if rpcErr := answer.Msg.Err(); rpcErr != nil {
		code := ErrUnknown
		if acp.IsAuthError(rpcErr) {
			code = ErrAuthRequired
			r.Auth = AuthStatus{Status: AuthRequired, Evidence: []string{"initialize answered " + errorText(rpcErr)}}
		}
		b.fail(code, StageInitialize, "initialize failed: "+errorText(rpcErr), rpcErr.Raw)
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
		b.fail(ErrProtocolMismatch, StageInitialize, "initialize result has no integer protocolVersion", nil)
		return false
	}
	v := init.ProtocolVersion
	r.ProtocolVersion = &v
	if v != acp.ProtocolVersion {
		b.fail(ErrProtocolMismatch, StageInitialize, fmt.Sprintf(
			"the agent answered protocolVersion %d to a request for %d; acpprobe speaks version %d",
			v, b.spawn.ProtocolVersion, acp.ProtocolVersion), nil)
		return false
	}
	return true
}

func (b *builder) newSession() {
	r := b.r
	req, answer := b.request(acp.MethodSessionNew)
	if req == nil || answer == nil {
		b.noAnswer(StageSessionNew, ErrSessionNewTimeout, "no answer to session/new within the total budget")
		return
	}
	if rpcErr := answer.Msg.Err(); rpcErr != nil {
		if acp.IsAuthError(rpcErr) {
			r.Auth = AuthStatus{Status: AuthRequired, Evidence: []string{"session/new answered " + errorText(rpcErr)}}
			b.fail(ErrAuthRequired, StageSessionNew, "session/new requires authentication: "+errorText(rpcErr), rpcErr.Raw)
			return
		}
		if key, demands := extensions.Default().MetadataDemand(rpcErr.Message + " " + string(rpcErr.Data)); demands {
			r.Auth.Evidence = append(r.Auth.Evidence, "session/new demands vendor metadata ("+key+") before anything else")
			b.fail(ErrMetadataRequired, StageSessionNew, fmt.Sprintf("session/new requires vendor _meta %s, which a standard client never sends: %s", key, errorText(rpcErr)), rpcErr.Raw)
			return
		}
		r.Auth.Evidence = append(r.Auth.Evidence, "session/new failed with an error that does not name authentication: "+errorText(rpcErr))
		b.fail(ErrUnknown, StageSessionNew, "session/new failed: "+errorText(rpcErr), rpcErr.Raw)
		return
	}
	r.Raw.NewSession = answer.Msg.Result
	s := acp.ParseSessionResult(answer.Msg.Result)
	evidence := "session/new succeeded without authenticate"
	if len(r.AuthMethods) > 0 {
		evidence += fmt.Sprintf(" (the agent advertises %d authMethods; a prompt may still ask for them)", len(r.AuthMethods))
	}
	r.Auth = AuthStatus{Status: AuthAuthenticated, Evidence: []string{evidence}}
	if s.Modes != nil {
		r.Modes = s.Modes
	}
	r.CurrentModeID = s.CurrentModeID
	if s.ConfigOptions != nil {
		r.ConfigOptions = s.ConfigOptions
	}
	if s.LegacyModels != nil {
		r.LegacyModels = s.LegacyModels
	}
	deriveModels(r)
}

// noAnswer classifies a request that got no answer: the caller interrupted, a budget ran out
// (timeoutCode), or the agent went away (agent_crashed, told from the exit record).
func (b *builder) noAnswer(stage, timeoutCode, timeoutMsg string) {
	switch {
	case b.stageEvent(EventInterrupted, stage):
		b.fail(ErrInterrupted, stage, "interrupted", nil)
	case b.stageEvent(EventTimeout, stage):
		b.fail(timeoutCode, stage, timeoutMsg, nil)
	default:
		b.fail(ErrAgentCrashed, stage, b.crashMessage(stage), nil)
	}
}

func (b *builder) crashMessage(stage string) string {
	x := b.r.Exit
	if x != nil && x.By == "self" {
		switch {
		case x.Signal != "":
			return fmt.Sprintf("the agent was killed by %s before answering %s", x.Signal, stage)
		case x.Code != nil:
			return fmt.Sprintf("the agent exited with status %d before answering %s", *x.Code, stage)
		}
	}
	return "the agent closed its output before answering " + stage + " (the process was still running)"
}

// methodsEnd is the seq where method detection ended: the first step or teardown event (0
// when neither happened).
func (b *builder) methodsEnd() int64 {
	var end int64
	for _, kind := range []string{EventStep, EventTeardown} {
		if f, ok := b.event(kind); ok && (end == 0 || f.Seq < end) {
			end = f.Seq
		}
	}
	return end
}

// methods reads the optional-method probes: the requests for probed methods sent before the
// first step or teardown.
func (b *builder) methods() {
	r := b.r
	if f, ok := b.event(EventMethodsSkipped); ok {
		var p struct{ Reason string }
		_ = json.Unmarshal(f.Raw, &p)
		for _, m := range acp.ProbedMethods {
			r.Methods[m] = MethodSupport{Support: Skipped, Message: p.Reason}
		}
		return
	}
	end := b.methodsEnd()
	eof, sawEOF := b.event(EventEOF)
	goneEarly := sawEOF && (end == 0 || eof.Seq < end)
	probed := map[string]bool{}
	for _, req := range b.requests {
		m := req.Msg.Method
		if !isProbed(m) || probed[m] || (end != 0 && req.Seq > end) {
			continue
		}
		probed[m] = true
		s := MethodSupport{Support: Unknown}
		answer, ok := b.answers[req.Seq]
		switch {
		case !ok && goneEarly:
			s.Message = "the agent ended its output before answering"
		case !ok:
			s.Message = fmt.Sprintf("no answer within %s", msDuration(b.spawn.RequestTimeoutMs))
		case answer.Msg.Err() != nil:
			rpcErr := answer.Msg.Err()
			code := rpcErr.Code
			s.Code, s.Message, s.Support = &code, rpcErr.Message, Supported
			if code == jsonrpc.CodeMethodNotFound {
				s.Support = Unsupported
			}
		default:
			s.Support = Supported
		}
		if ok {
			s.Ms = ms(answer.At - req.At)
		}
		r.Methods[m] = s
	}
	for _, m := range acp.ProbedMethods {
		if _, ok := r.Methods[m]; !ok {
			r.Methods[m] = MethodSupport{Support: Skipped, Message: "not probed"}
		}
	}
	if len(probed) == 0 {
		return
	}
	switch {
	case b.stageEvent(EventInterrupted, StageMethods):
		b.fail(ErrInterrupted, StageMethods, "interrupted", nil)
	case goneEarly && len(probed) > 0:
		for m := range probed {
			if r.Methods[m].Support == Unknown {
				b.fail(ErrAgentCrashed, StageMethods, b.crashMessage(StageMethods), nil)
				break
			}
		}
	}
}

func isProbed(method string) bool {
	for _, m := range acp.ProbedMethods {
		if m == method {
			return true
		}
	}
	return false
}

// fail records the first error; later ones are consequences.
func (b *builder) fail(code, stage, msg string, agentErr json.RawMessage) {
	if b.r.Error == nil {
		b.r.Error = &Error{Code: code, Stage: stage, Message: msg, AgentError: agentErr}
	}
}

// stderr rebuilds the stderr tail and total from the recorded chunks (a log keeps only the
// bytes of recent ones; every chunk keeps its size).
func (b *builder) stderr() {
	tail := transport.NewTailBuffer(transport.DefaultStderrTail)
	for _, f := range b.frames {
		if f.Dir == jsonrpc.DirStderr {
			_, _ = tail.Write(f.Raw)
			b.r.StderrBytes += f.Size
		}
	}
	b.r.StderrTail = string(tail.Bytes())
}

// counts tallies the agent's notifications and requests.
func (b *builder) counts() {
	r := b.r
	for _, f := range b.frames {
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
	if req, answer := b.request(acp.MethodInitialize); answer != nil {
		t.SpawnToInitializeMs = ms(answer.At - b.spawnAt)
		t.InitializeMs = ms(answer.At - req.At)
	}
	if req, answer := b.request(acp.MethodSessionNew); answer != nil {
		t.SessionNewMs = ms(answer.At - req.At)
	}
	teardown, hasTeardown := b.event(EventTeardown)
	methodsEnd := b.methodsEnd()
	var endAt time.Duration
	for _, f := range b.frames {
		if f.Seq == methodsEnd {
			endAt = f.At
		}
	}
	var first, last time.Duration = -1, -1
	for _, req := range b.requests {
		if !isProbed(req.Msg.Method) || (methodsEnd != 0 && req.Seq > methodsEnd) {
			continue
		}
		if first < 0 {
			first = req.At
		}
		end := endAt
		if a, ok := b.answers[req.Seq]; ok {
			end = a.At
		}
		last = max(last, end)
	}
	if first >= 0 && last >= first {
		t.MethodsMs = ms(last - first)
	}
	if exit, ok := b.event(EventExit); ok && hasTeardown {
		t.TeardownMs = ms(exit.At - teardown.At)
	}
	end := b.spawnAt
	if len(b.frames) > 0 {
		end = b.frames[len(b.frames)-1].At
	}
	if done, ok := b.event(EventDone); ok {
		end = done.At
	}
	t.TotalMs = ms(end - b.spawnAt)
	b.r.Agent.DurationMs = t.TotalMs
}

func newResult(s SpawnInfo) *Result {
	r := &Result{
		Schema:        ResultSchema,
		Agent:         AgentRef{Command: s.Command, Argv: s.Argv, Cwd: s.Cwd, ProbedAt: s.ProbedAt},
		AuthMethods:   []json.RawMessage{},
		Auth:          AuthStatus{Status: AuthUnknown, Evidence: []string{}},
		Models:        []acp.Model{},
		LegacyModels:  []acp.Model{},
		Modes:         []acp.Mode{},
		ConfigOptions: []acp.ConfigOption{},
		Methods:       map[string]MethodSupport{},
		Notifications: Notifications{ByMethod: map[string]int{}, BySessionUpdate: map[string]int{}},
		AgentRequests: map[string]int{},
		Findings:      []Finding{},
		Raw:           Raw{Initialize: json.RawMessage("null"), NewSession: json.RawMessage("null")},
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

// deriveModels fills models, modelConfig and reasoning from the config options, falling back
// to the legacy models list.
func deriveModels(r *Result) {
	if opt := acp.ModelOption(r.ConfigOptions); opt != nil {
		r.ModelConfig = &ModelConfig{ConfigID: opt.ID, Values: opt.Values(), CurrentValue: opt.Current()}
		r.Models = make([]acp.Model, 0, len(opt.Options))
		for _, o := range opt.Options {
			r.Models = append(r.Models, acp.Model{ID: o.Value, Name: o.Name, Description: o.Description})
		}
	} else {
		r.Models = append([]acp.Model{}, r.LegacyModels...)
	}
	if opt := acp.ThoughtLevelOption(r.ConfigOptions); opt != nil {
		r.Reasoning = &Reasoning{ConfigID: opt.ID, Values: opt.Values(), DefaultValue: opt.Current()}
	}
}

func capabilities(c acp.Object) Capabilities {
	prompt := c.Object("promptCapabilities")
	mcp := c.Object("mcpCapabilities")
	sess := c.Object("sessionCapabilities")
	return Capabilities{
		LoadSession:        c.Bool("loadSession"),
		PromptCapabilities: PromptCapabilities{Image: prompt.Bool("image"), Audio: prompt.Bool("audio"), EmbeddedContext: prompt.Bool("embeddedContext")},
		McpCapabilities:    McpCapabilities{HTTP: mcp.Bool("http"), SSE: mcp.Bool("sse"), ACP: mcp.Bool("acp"), Meta: mcp.Has("_meta")},
		SessionCapabilities: SessionCapabilities{Close: sess.Has("close"), List: sess.Has("list"), Resume: sess.Has("resume"),
			Fork: sess.Has("fork"), AdditionalDirectories: sess.Has("additionalDirectories"), Delete: sess.Has("delete")},
		Auth:         AuthCapabilities{Logout: c.Object("auth").Has("logout")},
		Experimental: Experimental{Auth: c.Has("auth"), NES: c.Has("nes"), Providers: c.Has("providers"), PositionEncoding: c.Has("positionEncoding")},
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
