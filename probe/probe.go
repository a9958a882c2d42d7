// Package probe is the engine: it launches an agent, performs the ACP handshake
// (initialize, session/new), detects which optional methods exist without side effects, tears
// the agent down, and reports everything as a Result.
//
// The probe spends no model tokens and changes nothing: it declares no client capability,
// never calls authenticate or logout, never sends a prompt, refuses every request the agent
// makes (permission requests get the outcome "cancelled"), and detects method support with
// calls on a session id that does not exist.
package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/transport"
)

// Version is acpprobe's version, sent as clientInfo.version.
var Version = "0.1.0-dev"

// Default budgets.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultStartupTimeout = 20 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// NonexistentSessionID is the session id used to detect method support: no agent has it, so
// no call made with it can change anything.
const NonexistentSessionID = "acpprobe-nonexistent-session"

// AuthPolicy says what to do when the agent advertises authentication methods.
type AuthPolicy string

// Auth policies (as acp-probe's authPolicy).
const (
	AuthPolicySkip AuthPolicy = "skip" // record authMethods and go on with session/new
	AuthPolicyFail AuthPolicy = "fail" // stop before session/new: auth_required
)

// Options configure a probe. Launcher is required; everything else has a default.
type Options struct {
	Launcher transport.Launcher
	// AgentID is the registry or config id the agent was resolved from ("" for a raw command).
	AgentID string
	// Command is the command line as the user gave it (default: the launcher's argv joined).
	Command string
	// Cwd is the absolute directory sent in session/new (default: the current directory).
	Cwd string

	Timeout        time.Duration // total budget (DefaultTimeout)
	StartupTimeout time.Duration // budget for the first answer (DefaultStartupTimeout, capped by Timeout)
	RequestTimeout time.Duration // budget of each optional method probe (DefaultRequestTimeout)
	Grace          time.Duration // each step of the teardown ladder (transport.DefaultGrace)

	// ProtocolVersion is sent in initialize (default acp.ProtocolVersion).
	ProtocolVersion int
	AuthPolicy      AuthPolicy
	// SkipMethods turns off method-support detection.
	SkipMethods bool
	// MaxLineSize bounds a line kept whole (jsonrpc.DefaultMaxLineSize when 0).
	MaxLineSize int
	// Log, when set, receives every frame; pass one to read the session afterwards or to
	// write a transcript as it happens.
	Log *jsonrpc.Log
}

func (o Options) withDefaults() (Options, error) {
	if o.Launcher == nil {
		return o, errors.New("probe: no agent to launch")
	}
	if o.Cwd == "" {
		wd, err := filepath.Abs(".")
		if err != nil {
			return o, err
		}
		o.Cwd = wd
	}
	if !filepath.IsAbs(o.Cwd) {
		return o, fmt.Errorf("probe: cwd %q is not absolute", o.Cwd)
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.StartupTimeout <= 0 {
		o.StartupTimeout = DefaultStartupTimeout
	}
	if o.StartupTimeout > o.Timeout {
		o.StartupTimeout = o.Timeout
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Grace <= 0 {
		o.Grace = transport.DefaultGrace
	}
	if o.ProtocolVersion == 0 {
		o.ProtocolVersion = acp.ProtocolVersion
	}
	switch o.AuthPolicy {
	case "":
		o.AuthPolicy = AuthPolicySkip
	case AuthPolicySkip, AuthPolicyFail:
	default:
		return o, fmt.Errorf("probe: unknown auth policy %q (want skip or fail)", o.AuthPolicy)
	}
	if o.Command == "" {
		o.Command = strings.Join(o.Launcher.CommandLine(), " ")
	}
	if o.Log == nil {
		o.Log = jsonrpc.NewLog()
	}
	return o, nil
}

// Run probes one agent. The error is non-nil only when the options are unusable; everything
// that goes wrong with the agent is reported in Result.Error, next to what was learned.
// Cancelling ctx interrupts the probe (Error.Code "interrupted") and still tears the agent down.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	e := &engine{opts: opts, log: opts.Log, r: newResult(opts)}
	e.run(ctx)
	return e.r, nil
}

func newResult(opts Options) *Result {
	r := &Result{
		Schema:        ResultSchema,
		Agent:         AgentRef{Command: opts.Command, Argv: opts.Launcher.CommandLine(), Cwd: opts.Cwd},
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
	r.Capabilities.MetaKeys = []string{}
	if opts.AgentID != "" {
		id := opts.AgentID
		r.Agent.ID = &id
	}
	return r
}

type engine struct {
	opts  Options
	log   *jsonrpc.Log
	r     *Result
	agent transport.Agent
	conn  *jsonrpc.Conn

	parent    context.Context // the caller's context: its end means "interrupted"
	sessionID string
	caps      acp.Object
}

func (e *engine) run(parent context.Context) {
	e.parent = parent
	start := time.Now()
	e.r.Agent.ProbedAt = start.UTC().Format(time.RFC3339Nano)
	defer func() {
		e.r.Timings.TotalMs = ms(time.Since(start))
		e.r.Agent.DurationMs = e.r.Timings.TotalMs
	}()

	ctx, cancel := context.WithTimeout(parent, e.opts.Timeout)
	defer cancel()

	e.event("spawn", map[string]any{"argv": e.opts.Launcher.CommandLine(), "cwd": e.opts.Cwd})
	agent, err := e.opts.Launcher.Launch(ctx)
	if err != nil {
		e.fail(ErrSpawnFailed, StageSpawn, err.Error(), nil)
		if parent.Err() != nil {
			e.fail(ErrInterrupted, StageSpawn, "interrupted before the agent started", nil)
		}
		return
	}
	e.agent = agent
	e.r.Agent.PID = agent.PID()
	e.conn = jsonrpc.NewConn(agent.Stdout(), agent.Stdin(), jsonrpc.ConnOptions{
		Log: e.log, MaxLineSize: e.opts.MaxLineSize, Handler: refuse,
	})
	e.conn.Start()
	defer e.teardown()

	if !e.initialize(ctx, start) {
		e.skipMethods("not probed: the handshake failed")
		return
	}
	if e.opts.AuthPolicy == AuthPolicyFail && len(e.r.AuthMethods) > 0 {
		e.r.Auth = AuthStatus{Status: AuthRequired, Evidence: []string{
			fmt.Sprintf("the agent advertises %d authMethods and the auth policy is fail: session/new was not called", len(e.r.AuthMethods))}}
		e.fail(ErrAuthRequired, StageSessionNew, "authentication methods advertised (auth policy fail)", nil)
	} else {
		e.newSession(ctx)
	}
	switch {
	case e.opts.SkipMethods:
		e.skipMethods("not probed (method detection turned off)")
	case !e.alive():
		e.skipMethods("not probed: the agent had gone")
	case ctx.Err() != nil:
		e.skipMethods("not probed: the total budget was spent")
	default:
		e.probeMethods(ctx)
	}
	e.r.SupportsConfigOption = e.r.Methods[acp.MethodSetConfigOption].Support == Supported
	if parent.Err() != nil {
		e.fail(ErrInterrupted, StageMethods, "interrupted", nil)
	}
}

func (e *engine) skipMethods(why string) {
	for _, m := range acp.ProbedMethods {
		e.r.Methods[m] = MethodSupport{Support: Skipped, Message: why}
	}
}

// initialize performs the first exchange; false means the probe cannot go on.
func (e *engine) initialize(ctx context.Context, spawned time.Time) bool {
	ictx, cancel := context.WithTimeout(ctx, e.opts.StartupTimeout)
	defer cancel()
	params := map[string]any{
		"protocolVersion": e.opts.ProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "acpprobe", "title": "acpprobe", "version": Version},
	}
	t0 := time.Now()
	resp, err := e.conn.Call(ictx, acp.MethodInitialize, params)
	e.r.Timings.InitializeMs = ms(time.Since(t0))
	e.r.Timings.SpawnToInitializeMs = ms(time.Since(spawned))
	if err != nil {
		e.callFailed(StageInitialize, ErrInitializeTimeout, err,
			fmt.Sprintf("no answer to initialize within %s", e.opts.StartupTimeout))
		return false
	}
	if rpcErr := resp.Err(); rpcErr != nil {
		code := ErrUnknown
		if acp.IsAuthError(rpcErr) {
			code = ErrAuthRequired
			e.r.Auth = AuthStatus{Status: AuthRequired, Evidence: []string{"initialize answered: " + errorText(rpcErr)}}
		}
		e.fail(code, StageInitialize, "initialize failed: "+errorText(rpcErr), rpcErr.Raw)
		return false
	}
	e.r.Raw.Initialize = resp.Result
	init := acp.ParseInitializeResult(resp.Result)
	e.caps = init.Capabilities
	e.r.Capabilities = capabilities(init.Capabilities)
	if init.AuthMethods != nil {
		e.r.AuthMethods = init.AuthMethods
	}
	e.r.AgentInfo = init.AgentInfo
	if !init.VersionOK {
		e.fail(ErrProtocolMismatch, StageInitialize, "initialize result has no integer protocolVersion", nil)
		return false
	}
	v := init.ProtocolVersion
	e.r.ProtocolVersion = &v
	if v != acp.ProtocolVersion {
		e.fail(ErrProtocolMismatch, StageInitialize, fmt.Sprintf(
			"the agent answered protocolVersion %d to a request for %d; acpprobe speaks version %d",
			v, e.opts.ProtocolVersion, acp.ProtocolVersion), nil)
		return false
	}
	return true
}

func (e *engine) newSession(ctx context.Context) {
	t0 := time.Now()
	resp, err := e.conn.Call(ctx, acp.MethodSessionNew, map[string]any{"cwd": e.opts.Cwd, "mcpServers": []any{}})
	e.r.Timings.SessionNewMs = ms(time.Since(t0))
	if err != nil {
		e.callFailed(StageSessionNew, ErrSessionNewTimeout, err, "no answer to session/new within the total budget")
		return
	}
	if rpcErr := resp.Err(); rpcErr != nil {
		if acp.IsAuthError(rpcErr) {
			e.r.Auth = AuthStatus{Status: AuthRequired, Evidence: []string{"session/new answered " + errorText(rpcErr)}}
			e.fail(ErrAuthRequired, StageSessionNew, "session/new requires authentication: "+errorText(rpcErr), rpcErr.Raw)
			return
		}
		e.r.Auth.Evidence = append(e.r.Auth.Evidence, "session/new failed with an error that does not name authentication: "+errorText(rpcErr))
		e.fail(ErrUnknown, StageSessionNew, "session/new failed: "+errorText(rpcErr), rpcErr.Raw)
		return
	}
	e.r.Raw.NewSession = resp.Result
	s := acp.ParseSessionResult(resp.Result)
	e.sessionID = s.SessionID
	evidence := "session/new succeeded without authenticate"
	if len(e.r.AuthMethods) > 0 {
		evidence += fmt.Sprintf(" (the agent advertises %d authMethods; a prompt may still ask for them)", len(e.r.AuthMethods))
	}
	e.r.Auth = AuthStatus{Status: AuthAuthenticated, Evidence: []string{evidence}}
	if s.Modes != nil {
		e.r.Modes = s.Modes
	}
	e.r.CurrentModeID = s.CurrentModeID
	if s.ConfigOptions != nil {
		e.r.ConfigOptions = s.ConfigOptions
	}
	if s.LegacyModels != nil {
		e.r.LegacyModels = s.LegacyModels
	}
	deriveModels(e.r)
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

// methodParams are the side-effect-free calls that detect each method: every one names a
// session that does not exist, or only reads.
func (e *engine) methodParams(method string) any {
	sid := NonexistentSessionID
	switch method {
	case acp.MethodSetConfigOption:
		return map[string]any{"sessionId": sid, "configId": "acpprobe-nonexistent-option", "value": "acpprobe-nonexistent-value"}
	case acp.MethodSetMode:
		return map[string]any{"sessionId": sid, "modeId": "acpprobe-nonexistent-mode"}
	case acp.MethodSetModel:
		return map[string]any{"sessionId": sid, "modelId": "acpprobe-nonexistent-model"}
	case acp.MethodSessionLoad, acp.MethodSessionResume, acp.MethodSessionFork:
		return map[string]any{"sessionId": sid, "cwd": e.opts.Cwd, "mcpServers": []any{}}
	case acp.MethodSessionList:
		return map[string]any{"cwd": e.opts.Cwd}
	default: // session/close, session/delete
		return map[string]any{"sessionId": sid}
	}
}

// probeMethods calls every optional method at once, each with its own budget.
func (e *engine) probeMethods(ctx context.Context) {
	t0 := time.Now()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, method := range acp.ProbedMethods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mctx, cancel := context.WithTimeout(ctx, e.opts.RequestTimeout)
			defer cancel()
			s0 := time.Now()
			resp, err := e.conn.Call(mctx, method, e.methodParams(method))
			support := MethodSupport{Support: Unknown, Ms: ms(time.Since(s0))}
			switch {
			case err != nil:
				support.Message = err.Error()
				if errors.Is(err, context.DeadlineExceeded) {
					support.Message = fmt.Sprintf("no answer within %s", e.opts.RequestTimeout)
				}
			case resp.Err() != nil:
				rpcErr := resp.Err()
				code := rpcErr.Code
				support.Code = &code
				support.Message = rpcErr.Message
				support.Support = Supported
				if code == jsonrpc.CodeMethodNotFound {
					support.Support = Unsupported
				}
			default:
				support.Support = Supported
			}
			mu.Lock()
			e.r.Methods[method] = support
			mu.Unlock()
		}()
	}
	wg.Wait()
	e.r.Timings.MethodsMs = ms(time.Since(t0))
	if !e.alive() && e.r.Error == nil {
		e.crashed(StageMethods)
	}
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

// callFailed classifies a call that got no answer: the caller gave up (interrupted), the agent
// went away (crashed), or the budget ran out (timeoutCode).
func (e *engine) callFailed(stage, timeoutCode string, err error, timeoutMsg string) {
	switch {
	case e.parent.Err() != nil:
		e.fail(ErrInterrupted, stage, "interrupted", nil)
	case errors.Is(err, jsonrpc.ErrClosed):
		e.crashed(stage)
	case errors.Is(err, context.DeadlineExceeded):
		e.event("timeout", map[string]any{"stage": stage})
		e.fail(timeoutCode, stage, timeoutMsg, nil)
	default:
		// Writing to the agent failed: it has gone.
		e.crashed(stage)
	}
}

// crashed reports that the agent ended its output before answering; it waits a grace for the
// exit status so the report can say how it ended.
func (e *engine) crashed(stage string) {
	t := time.NewTimer(e.opts.Grace)
	defer t.Stop()
	select {
	case <-e.agent.Exited():
	case <-t.C:
	}
	msg := "the agent closed its output before answering " + stage
	select {
	case <-e.agent.Exited():
		x := e.agent.Exit()
		switch {
		case x.Signal != "":
			msg = fmt.Sprintf("the agent was killed by %s before answering %s", x.Signal, stage)
		case x.Code != nil:
			msg = fmt.Sprintf("the agent exited with status %d before answering %s", *x.Code, stage)
		}
	default:
		msg += " (the process is still running)"
	}
	e.fail(ErrAgentCrashed, stage, msg, nil)
}

// fail records the first error; later ones are consequences and are dropped.
func (e *engine) fail(code, stage, msg string, agentErr json.RawMessage) {
	if e.r.Error != nil && e.r.Error.Code != ErrSpawnFailed {
		return
	}
	e.r.Error = &Error{Code: code, Stage: stage, Message: msg, AgentError: agentErr}
}

// teardown closes the session when the agent advertises session/close, runs the transport's
// ladder, waits for the output to drain, and collects what the process left behind. It runs
// on its own clock: an expired budget or an interrupt still tears the agent down.
func (e *engine) teardown() {
	t0 := time.Now()
	if e.sessionID != "" && e.caps.Object("sessionCapabilities").Has("close") && e.alive() {
		budget := min(e.opts.RequestTimeout, e.opts.Grace)
		cctx, cancel := context.WithTimeout(context.Background(), budget)
		_, _ = e.conn.Call(cctx, acp.MethodSessionClose, map[string]any{"sessionId": e.sessionID})
		cancel()
		e.event("teardown", map[string]any{"step": "session/close"})
	}
	e.event("teardown", map[string]any{"step": "close-stdin"})
	exit := e.agent.Shutdown(context.Background(), e.opts.Grace)
	<-e.conn.Done()
	e.conn.Wait()
	e.r.Exit = &exit
	e.event("exit", exit)
	e.r.Timings.TeardownMs = ms(time.Since(t0))
	e.r.StderrTail = string(e.agent.StderrTail())
	e.r.StderrBytes = e.agent.StderrBytes()
	if e.r.Error != nil && e.r.Error.Stderr == "" {
		e.r.Error.Stderr = e.r.StderrTail
	}
	e.count()
}

// count tallies notifications and agent requests from the log.
func (e *engine) count() {
	for _, f := range e.log.Frames() {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil {
			continue
		}
		switch f.Msg.Kind() {
		case jsonrpc.Notification:
			e.r.Notifications.Total++
			e.r.Notifications.ByMethod[f.Msg.Method]++
			if f.Msg.Method == acp.MethodSessionUpdate {
				kind := acp.ParseObject(f.Msg.Params).Object("update").String("sessionUpdate")
				if kind == "" {
					kind = "(none)"
				}
				e.r.Notifications.BySessionUpdate[kind]++
			}
		case jsonrpc.Request:
			e.r.AgentRequests[f.Msg.Method]++
		}
	}
}

func (e *engine) event(kind string, payload any) {
	b, _ := json.Marshal(payload)
	e.log.Event(kind, b)
}

// refuse answers every request an agent makes of the probe: permission requests are
// cancelled (the outcome the protocol defines for "no decision"), everything else is an
// unknown method, since the probe declares no client capability.
func refuse(_ context.Context, req *jsonrpc.Message) (any, *jsonrpc.Error) {
	if req.Method == acp.MethodRequestPermission {
		return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: acpprobe grants no client capability"}
}

func capabilities(c acp.Object) Capabilities {
	prompt := c.Object("promptCapabilities")
	mcp := c.Object("mcpCapabilities")
	sess := c.Object("sessionCapabilities")
	caps := Capabilities{
		LoadSession:        c.Bool("loadSession"),
		PromptCapabilities: PromptCapabilities{Image: prompt.Bool("image"), Audio: prompt.Bool("audio"), EmbeddedContext: prompt.Bool("embeddedContext")},
		McpCapabilities:    McpCapabilities{HTTP: mcp.Bool("http"), SSE: mcp.Bool("sse"), ACP: mcp.Bool("acp"), Meta: mcp.Has("_meta")},
		SessionCapabilities: SessionCapabilities{Close: sess.Has("close"), List: sess.Has("list"), Resume: sess.Has("resume"),
			Fork: sess.Has("fork"), AdditionalDirectories: sess.Has("additionalDirectories"), Delete: sess.Has("delete")},
		Auth:         AuthCapabilities{Logout: c.Object("auth").Has("logout")},
		Experimental: Experimental{Auth: c.Has("auth"), NES: c.Has("nes"), Providers: c.Has("providers"), PositionEncoding: c.Has("positionEncoding")},
		MetaKeys:     c.Object("_meta").Keys(),
	}
	return caps
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
