package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// Drive probes one agent and records the session: every frame in both directions, stderr and
// the engine's events go to opts.Log (a new log when nil), which it returns. It judges nothing:
// the report is derived from the record (the root acpprobe package's Run and Analyze). The
// error is non-nil only when the options are unusable; everything that goes wrong with the
// agent is in the record. Cancelling ctx interrupts the probe (an interrupted event) and still
// tears the agent down.
func Drive(ctx context.Context, opts Options) (*jsonrpc.Log, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &engine{opts: opts, log: opts.Log}
	e.permission.Store(opts.Permission)
	e.log.SetBudget(record.Budget(opts.MaxRecord))
	e.run(ctx)
	return e.log, nil
}

type engine struct {
	opts  Options
	log   *jsonrpc.Log
	agent transport.Agent
	conn  *jsonrpc.Conn
	eof   chan struct{} // closed once the eof event is in the log

	parent           context.Context // the caller's context: its end means "interrupted"
	sessionID        string
	newSessionResult json.RawMessage
	initResult       json.RawMessage
	interrupted      bool // an interrupted event is in the record
	canClose         bool // the agent advertises sessionCapabilities.close
	authAdvertis     int  // number of authMethods advertised
	// permission is how session/request_permission is answered now (a Permission): the
	// options' policy, which a step may change for a while (Session.SetPermission).
	permission atomic.Value
}

func (e *engine) run(parent context.Context) {
	e.parent = parent
	ctx, cancel := context.WithTimeout(parent, e.opts.Timeout)
	defer cancel()
	defer record.Done.Emit(e.log, record.None{})

	record.Spawn.Emit(e.log, record.SpawnInfo{
		AgentID: e.opts.AgentID, Command: e.opts.Command, Argv: e.opts.Launcher.CommandLine(), Cwd: e.opts.Cwd,
		ProbedAt:        time.Now().UTC().Format(time.RFC3339Nano),
		ProtocolVersion: e.opts.ProtocolVersion, AuthPolicy: string(e.opts.AuthPolicy),
		TimeoutMs: record.Millis(e.opts.Timeout), StartupTimeoutMs: record.Millis(e.opts.StartupTimeout), RequestTimeoutMs: record.Millis(e.opts.RequestTimeout),
		InitializeOnly: e.opts.InitializeOnly, Purpose: e.opts.Purpose,
	})
	agent, err := e.opts.Launcher.Launch(ctx, stderrSink{e.log})
	if err != nil {
		if parent.Err() != nil { // the caller's end (Ctrl-C) stopped the launch: no fault of the agent
			e.interrupt(record.StageSpawn)
			return
		}
		record.SpawnFailed.Emit(e.log, record.Message{Message: err.Error()})
		return
	}
	e.agent = agent
	record.Started.Emit(e.log, record.Process{PID: agent.PID()})
	e.conn = jsonrpc.NewConn(agent.Stdout(), agent.Stdin(), jsonrpc.ConnOptions{
		Log: e.log, MaxLineSize: e.opts.MaxLineSize, Handler: e.answer,
	})
	e.eof = make(chan struct{})
	go func() {
		<-e.conn.Done()
		record.EOF.Emit(e.log, record.None{})
		close(e.eof)
	}()
	e.conn.Start()
	defer e.teardown()

	if !e.initialize(ctx) {
		e.skipMethods("not probed: the handshake failed")
		return
	}
	if e.opts.InitializeOnly {
		e.skipMethods("not probed (initialize only)")
		e.runSteps(ctx)
		return
	}
	if e.opts.AuthPolicy == AuthPolicyFail && e.authAdvertis > 0 {
		record.AuthPolicyStop.Emit(e.log, record.AuthPolicy{Policy: string(AuthPolicyFail), AuthMethods: e.authAdvertis})
	} else {
		if e.opts.Authenticate != nil {
			e.authenticate(ctx)
		}
		e.newSession(ctx)
	}
	switch {
	case e.opts.SkipMethods:
		e.skipMethods("not probed (method detection turned off)")
	case !e.alive():
		e.skipMethods("not probed: the agent had gone")
	case ctx.Err() != nil:
		e.interruptedOr(record.StageMethods, func() { e.skipMethods("not probed: the total budget was spent") })
	default:
		e.probeMethods(ctx)
		if parent.Err() != nil {
			e.interrupt(record.StageMethods)
			return
		}
	}
	e.runSteps(ctx)
}

// runSteps runs the extra steps in order while the agent is there and the budget lasts. The
// steps it cannot run any more are recorded as skipped, with the reason: a scenario after an
// agent's crash is reported not run because of it, rather than missing from the report.
func (e *engine) runSteps(ctx context.Context) {
	s := &Session{e: e, ID: e.sessionID, NewSession: e.newSessionResult, Initialize: e.initResult, Cwd: e.opts.Cwd, RequestTimeout: e.opts.RequestTimeout}
	for i, step := range e.opts.Steps {
		if why := e.cannotRun(ctx); why != "" {
			for _, left := range e.opts.Steps[i:] {
				record.StepSkipped.Emit(e.log, record.StepInfo{Name: left.Name(), Reason: why})
			}
			return
		}
		record.Step.Emit(e.log, record.StepInfo{Name: step.Name()})
		step.Run(ctx, s)
	}
}

// cannotRun says why no more steps can run ("" while they can): the agent has gone, the
// budget is spent, or the probe was interrupted.
func (e *engine) cannotRun(ctx context.Context) string {
	switch {
	case !e.alive():
		return "the agent had exited before this step"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "the run's budget (--timeout) was spent before this step"
	case ctx.Err() != nil:
		return "interrupted before this step"
	}
	return ""
}

// Step is an extra exchange run by the engine after method detection, before teardown. The
// conformance package provides them; everything they send and receive is in the log, where
// the checks find it.
type Step interface {
	Name() string
	Run(ctx context.Context, s *Session)
}

// Session is what a Step may do with the agent.
type Session struct {
	e *engine
	// ID is the session the probe created ("" when session/new failed).
	ID string
	// NewSession is session/new's result (nil when it failed): its modes, config options
	// and legacy models. Initialize is initialize's result (its capabilities).
	NewSession json.RawMessage
	Initialize json.RawMessage
	// Cwd is the absolute cwd of the probe.
	Cwd string
	// RequestTimeout is the budget of one request.
	RequestTimeout time.Duration
}

// SetPermission changes how the agent's permission requests are answered from now on, and
// returns the policy it replaces (to put back).
func (s *Session) SetPermission(p Permission) Permission {
	return s.e.permission.Swap(p).(Permission)
}

// Call sends a request and waits for its answer within ctx.
func (s *Session) Call(ctx context.Context, method string, params any) (*jsonrpc.Message, error) {
	return s.e.conn.Call(ctx, method, params)
}

// Notify sends a notification.
func (s *Session) Notify(method string, params any) error { return s.e.conn.Notify(method, params) }

// Alive reports whether the agent's output is still open.
func (s *Session) Alive() bool { return s.e.alive() }

// Sweep records the agent's other processes alive now (a processes event at the moment at:
// the agent itself is left out), signalling none of them, and returns how many there are;
// -1 when they cannot be counted (an agent that is not a process, no /proc). The sessions
// turn scenario counts them after each session/close.
func (s *Session) Sweep(at record.Moment) int { return s.e.sweep(at, false) }

// Scope names the agent's other processes (the zero Scope for an agent that is not a
// process), for a step that counts them without recording (transport.Sweep).
func (s *Session) Scope() transport.Scope { return s.e.agent.Scope() }

// Log is the session's record, for a step's own events (see the record package).
func (s *Session) Log() *jsonrpc.Log { return s.e.log }

// Watch calls match with every frame recorded from now on and returns a channel that gets
// the first one it accepts, and a function that stops watching (call it when done). match
// runs while the record is locked: it must be quick and must not record anything.
func (s *Session) Watch(match func(jsonrpc.Frame) bool) (<-chan jsonrpc.Frame, func()) {
	ch := make(chan jsonrpc.Frame, 1)
	var once sync.Once
	stop := s.e.log.Observe(func(f jsonrpc.Frame) {
		if match(f) {
			once.Do(func() { ch <- f })
		}
	})
	return ch, stop
}

// initialize performs the first exchange; false means the probe cannot go on.
func (e *engine) initialize(ctx context.Context) bool {
	ictx, cancel := context.WithTimeout(ctx, e.opts.StartupTimeout)
	defer cancel()
	notACP, unwatch := e.watchNotJSONRPC(cancel)
	defer unwatch()
	caps := e.opts.ClientCapabilities
	if len(caps) == 0 {
		caps = MinimalClientCapabilities
	}
	info := e.opts.ClientInfo
	if info == nil {
		info = &acp.Implementation{Name: "acpprobe", Title: "acpprobe", Version: Version}
	}
	params := map[string]any{
		"protocolVersion":    e.opts.ProtocolVersion,
		"clientCapabilities": caps,
		"clientInfo":         info,
	}
	resp, err := e.conn.Call(ictx, acp.MethodInitialize, params)
	if err != nil && notACP.Load() {
		record.NotJSONRPC.Emit(e.log, record.Lines{Lines: NotJSONRPCLines})
		return false
	}
	if err != nil {
		e.noAnswer(record.StageInitialize, err)
		return false
	}
	if resp.Err() != nil {
		return false
	}
	e.initResult = resp.Result
	init := acp.ParseInitializeResult(resp.Result)
	e.canClose = init.Capabilities.Object("sessionCapabilities").Has("close")
	e.authAdvertis = len(init.AuthMethods)
	return init.VersionOK && init.ProtocolVersion == acp.ProtocolVersion
}

// NotJSONRPCLines is how many lines an agent may write on stdout, without one JSON-RPC
// message among them, before the probe stops waiting for initialize: a program that is not an
// ACP agent (yes, a shell, a server's log) would otherwise spend the whole startup budget and
// fill the record. A real agent's banner is a few lines.
const NotJSONRPCLines = 1000

// watchNotJSONRPC calls stop once the agent has written NotJSONRPCLines lines on stdout
// without a JSON-RPC message among them, and says so in the flag it returns; unwatch ends the
// watch.
func (e *engine) watchNotJSONRPC(stop func()) (tripped *atomic.Bool, unwatch func()) {
	tripped = new(atomic.Bool)
	lines, seen := 0, false // the log calls its observers one at a time
	unwatch = e.log.Observe(func(f jsonrpc.Frame) {
		if f.Dir != jsonrpc.DirAgent || seen || tripped.Load() {
			return
		}
		if f.Msg != nil {
			seen = true
			return
		}
		if lines++; lines >= NotJSONRPCLines {
			tripped.Store(true)
			stop()
		}
	})
	return tripped, unwatch
}

// authenticate calls the configured auth method; its answer is in the record (Derive says
// whether session/new then worked).
func (e *engine) authenticate(ctx context.Context) {
	actx, cancel := context.WithTimeout(ctx, e.opts.RequestTimeout)
	defer cancel()
	if _, err := e.conn.Call(actx, acp.MethodAuthenticate, e.opts.Authenticate.Params()); err != nil {
		e.noAnswer(record.StageAuthenticate, err)
	}
}

func (e *engine) newSession(ctx context.Context) {
	mcp := e.opts.MCPServers
	if mcp == nil {
		mcp = []any{}
	}
	resp, err := e.conn.Call(ctx, acp.MethodSessionNew, map[string]any{"cwd": e.opts.Cwd, "mcpServers": mcp})
	if err != nil {
		e.noAnswer(record.StageSessionNew, err)
		return
	}
	if resp.Err() == nil {
		e.sessionID = acp.ParseSessionResult(resp.Result).SessionID
		e.newSessionResult = resp.Result
	}
}

// noAnswer records why a call got no answer: the caller gave up (interrupted) or the budget ran
// out (timeout). When the agent went away, the eof and exit events already say so.
func (e *engine) noAnswer(stage record.Stage, err error) {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		e.interruptedOr(stage, func() { record.Timeout.Emit(e.log, record.StageInfo{Stage: stage}) })
		return
	}
	// The agent went away (its output ended, or writing to it failed): let its output drain
	// to the end so that teardown sees it gone.
	t := time.NewTimer(e.opts.Grace)
	defer t.Stop()
	select {
	case <-e.conn.Done():
	case <-t.C:
	}
}

func (e *engine) interruptedOr(stage record.Stage, otherwise func()) {
	if e.parent.Err() != nil {
		e.interrupt(stage)
		return
	}
	otherwise()
}

// probeMethods detects the optional methods (see detect.go): every method with invalid
// params, and the control, at once in a fixed order; then, for the answers that could not be
// told from the control's, the same methods on a session that does not exist.
func (e *engine) probeMethods(ctx context.Context) {
	calls := []call{{record.DetectionControlMethod, map[string]any{}}}
	for _, m := range acp.ProbedMethods {
		calls = append(calls, call{m, derive.DetectionParams(m)})
	}
	answers := e.askAll(ctx, calls)
	control := answers[0]
	var again []call
	for i, m := range acp.ProbedMethods {
		if a := answers[i+1]; a != nil {
			if _, decided := derive.Classify(report.DetectedByInvalidParams, a, control); !decided {
				again = append(again, call{m, derive.MethodParams(m, e.opts.Cwd)})
			}
		}
	}
	if len(again) > 0 && ctx.Err() == nil {
		e.askAll(ctx, again)
	}
}

// call is one request of method detection.
type call struct {
	method string
	params any
}

// askAll sends every call at once, in order, then waits for the answers, each within its own
// budget; an answer is nil when none came.
func (e *engine) askAll(ctx context.Context, calls []call) []*jsonrpc.Message {
	answers := make([]*jsonrpc.Message, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		p, err := e.conn.Request(c.method, c.params)
		if err != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mctx, cancel := context.WithTimeout(ctx, e.opts.RequestTimeout)
			defer cancel()
			answers[i], _ = p.Wait(mctx)
		}()
	}
	wg.Wait()
	return answers
}

// alive reports whether the agent's output is still open.
func (e *engine) alive() bool {
	select {
	case <-e.conn.Done():
		return false
	default:
		return true
	}
}

// teardown closes the session when the agent advertises session/close, runs the transport's
// ladder, and waits for the output to drain. It runs on its own clock: an expired budget or an
// interrupt still tears the agent down.
func (e *engine) teardown() {
	// An interrupt (the caller's context ending, Ctrl-C) cuts the teardown short: after one
	// during the probe, each step waits InterruptGrace at most; after one during the teardown,
	// the agent gets InterruptGrace in all, then the remaining steps run at once.
	grace := e.opts.Grace
	tctx, stop := afterDone(e.parent, InterruptGrace)
	defer stop()
	if e.parent.Err() != nil {
		grace = min(grace, InterruptGrace)
		tctx = context.Background()
	}
	if !e.alive() {
		// The agent closed its output: the eof event goes in the record before teardown, and
		// the agent gets the grace to exit by itself, so the record says how it ended rather
		// than how the ladder ended it.
		<-e.eof
		t := time.NewTimer(grace)
		select {
		case <-e.agent.Exited():
		case <-t.C:
		case <-tctx.Done():
		}
		t.Stop()
	}
	if e.sessionID != "" && e.canClose && e.alive() {
		record.Teardown.Emit(e.log, record.TeardownInfo{Step: record.TeardownSessionClose})
		cctx, cancel := context.WithTimeout(tctx, min(e.opts.RequestTimeout, grace))
		_, _ = e.conn.Call(cctx, acp.MethodSessionClose, map[string]any{"sessionId": e.sessionID})
		cancel()
		e.sweep(record.AfterSessionClose, false)
	}
	ladder := transport.Ladder{Grace: grace}
	if e.opts.WaitForExit {
		ladder.StdinWait = grace
	}
	if ladder.StdinWait > 0 {
		// Without a wait, what runs an instant after stdin closed says nothing: the agent had
		// no time to end anything.
		ladder.AfterStdin = func(left bool) { _ = e.sweep(record.AfterStdin, left) }
	}
	wait := record.Millis(ladder.StdinWait)
	record.Teardown.Emit(e.log, record.TeardownInfo{Step: record.TeardownLadder, StdinWaitMs: &wait})
	exit := e.agent.Shutdown(tctx, ladder)
	<-e.eof
	e.conn.Wait()
	e.log.FlushStderr()
	if e.parent.Err() != nil && !e.interrupted {
		record.Interrupted.Emit(e.log, record.StageInfo{Stage: record.StageTeardown})
	}
	record.Exit.Emit(e.log, exit)
}

// sweep records the agent's other processes alive at a moment of the teardown (a processes
// event), signalling none of them, and returns how many there are. An in-memory agent has
// none: nothing is recorded, and the count is -1, as when the sweep could not look.
func (e *engine) sweep(at record.Moment, agentExited bool) int {
	scope := e.agent.Scope()
	if scope == (transport.Scope{}) {
		return -1
	}
	info := record.ProcessesInfo{Moment: at, AgentExited: agentExited, Processes: []record.Proc{}}
	procs, err := transport.Sweep(scope)
	if err != nil {
		info.Error = err.Error()
	}
	if procs != nil {
		info.Processes = procs
	}
	record.Processes.Emit(e.log, info)
	if err != nil {
		return -1
	}
	return len(procs)
}

// InterruptGrace bounds the teardown of an interrupted probe (Ctrl-C): each step of the
// ladder after an interrupt during the probe, the whole rest after one during the teardown.
const InterruptGrace = 100 * time.Millisecond

// afterDone returns a context that ends d after parent does (and the function that releases
// it); it never ends while parent runs.
func afterDone(parent context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(parent, func() {
		t := time.AfterFunc(d, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})
	return ctx, func() { stop(); cancel() }
}

// interrupt records that the caller interrupted the probe at stage.
func (e *engine) interrupt(stage record.Stage) {
	e.interrupted = true
	record.Interrupted.Emit(e.log, record.StageInfo{Stage: stage})
}

func (e *engine) skipMethods(reason string) {
	record.MethodsSkipped.Emit(e.log, record.Reason{Reason: reason})
}

// stderrSink records each stderr chunk of the agent in the log.
type stderrSink struct{ log *jsonrpc.Log }

func (s stderrSink) Write(p []byte) (int, error) {
	s.log.AppendStderr(p)
	return len(p), nil
}

var _ io.Writer = stderrSink{}

// answer answers every request an agent makes of the probe: permission requests by the policy
// in force (cancelled — the outcome the protocol defines for "no decision" — the reject
// option, or the allow option), an elicitation declined when the client declared elicitation
// (a client profile's), everything else as an unknown method: whatever the client profile
// claims, the probe reads no file, runs no command and asks the user nothing.
func (e *engine) answer(_ context.Context, req *jsonrpc.Message) (any, *jsonrpc.Error) {
	if req.Method == acp.MethodElicitationCreate && e.declaresElicitation() {
		return map[string]string{"action": "decline"}, nil
	}
	if req.Method != acp.MethodRequestPermission {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: acpprobe grants no client capability"}
	}
	opts := acp.ParsePermissionRequest(req.Params).Options
	id := ""
	switch e.permission.Load().(Permission) {
	case PermissionReject:
		id = cmp.Or(opts["reject_once"], opts["reject_always"])
	case PermissionAllow:
		id = cmp.Or(opts["allow_once"], opts["allow_always"])
	}
	if id != "" {
		return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": id}}, nil
	}
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}, nil
}

// declaresElicitation reports whether the client's capabilities declare elicitation (any
// mode): such a client answers elicitation/create, and acpprobe's answer is decline.
func (e *engine) declaresElicitation() bool {
	return acp.ParseObject(e.opts.ClientCapabilities).Object("elicitation") != nil
}
