// Package acptest is acpprobe's reference ACP agent: personas modelled on real agents
// (claude, codebuddy, codex, gemini, minimal) and faults that misbehave on purpose. It runs
// in-process (Serve, or Launcher for a transport.Pipe) or as a process (`acpprobe agent`), so
// the probe and its tests have a known agent to talk to without any network or model.
//
// The model persona is the one that talks to a model: its session/prompt runs a real prompt
// turn over HTTP on loopback (against the emulator package, which its acptest-model profile
// points it at), with tools, permissions, cancel, MCP servers and sessions that load in
// another process, so each turn scenario has a passing agent; each of its ModelFaults makes
// one scenario fail.
package acptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/transport"
)

// Faults make the reference agent misbehave.
type Faults struct {
	// HangOn: when this method arrives, stop reading and answering until the agent is stopped
	// (a signal, or the context for an in-process agent). Closing stdin does not end it.
	HangOn string
	// ExitBefore: when this method arrives, exit with status 3 without answering.
	ExitBefore string
	// GarbageStdout writes a line that is not JSON on stdout before the first answer.
	GarbageStdout bool
	// SlowStart waits this long before reading anything.
	SlowStart time.Duration
	// AnswerVersion, when not 0, replaces the protocolVersion of the initialize answer.
	AnswerVersion int
	// ClientRequests are agent→client requests (fs/read_text_file, terminal/create,
	// session/request_permission, …) sent before answering session/new.
	ClientRequests []string
	// StdoutBanner writes a log line on stdout at start, before reading anything.
	StdoutBanner bool
	// BadEnvelope follows the initialize answer with broken envelopes: a response to an id
	// never sent, one with both result and error, a notification without "jsonrpc".
	BadEnvelope bool
	// WrongInvalidParamsCode answers invalid params with -32603 instead of -32602.
	WrongInvalidParamsCode bool
	// AnswerNotifications answers unknown notifications with an error (without an id).
	AnswerNotifications bool
	// IgnoreStdinEOF keeps the agent running after stdin closes, until it is signalled.
	IgnoreStdinEOF bool
	// ExtraKeys adds keys outside _meta to the initialize answer.
	ExtraKeys bool
	// IgnoreUnknownRequests leaves requests for unknown methods unanswered.
	IgnoreUnknownRequests bool
	// GenericErrors answers unknown methods and invalid params alike with -32603 "Internal
	// error" and no data, as some agents do: method detection cannot tell them apart.
	GenericErrors bool
	// Drift plays the next release of the persona: agentInfo.version 0.2.0, and session/delete
	// implemented and advertised (for testing acpprobe diff).
	Drift bool
	// ForkAnySession answers session/fork of a session that does not exist with a new session,
	// as sudocode does: a session created from nothing (the persona must implement fork).
	ForkAnySession bool
	// RequireAdmission refuses session/new without the private codebuddy.ai/sessionAdmissionV2
	// _meta, as CodeBuddy's multi-owner plane does (a breach of the zero-_meta contract on the
	// standard plane).
	RequireAdmission bool
	// RequireAuthEnv names a variable that stands for a login: session/new answers -32000
	// unless the agent's environment (Config.Env) gives it a value. The agent also advertises
	// auth/status (agentCapabilities.auth.status), answers it with the state, and pushes the
	// state after initialize as the vendor _auth/status_update.
	RequireAuthEnv string
	// LeakSecrets writes the values of the environment variables named in LeakEnv on stderr
	// (whole, and the first split across two writes) and in the initialize answer (_meta
	// credential keys, a bearer header, plain text, \uXXXX escapes), to test that they are
	// redacted.
	LeakEnv []string
}

// BannerLine is what the StdoutBanner fault writes.
const BannerLine = "acptest agent starting (this banner belongs on stderr)"

// Config selects a persona and its faults.
type Config struct {
	Persona string
	Faults
	Stress
	ModelFaults
	// Env is the agent's environment (KEY=VALUE): the model persona takes ANTHROPIC_BASE_URL,
	// ANTHROPIC_API_KEY and HOME from it, and gives it to the stdio MCP servers it starts.
	// Main sets it to the process environment; an in-process agent sees only what it is
	// given (nil: no model, no HOME, no session store). Args does not render it: a process
	// gets its environment from whoever launches it.
	Env []string
}

// ExitError ends an agent with an exit status.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return "exit status " + strconv.Itoa(e.Code) }

// ExitCode is the status the agent exits with.
func (e *ExitError) ExitCode() int { return e.Code }

// ExitBeforeStatus is the exit status of the ExitBefore fault.
const ExitBeforeStatus = 3

// GarbageLine is what the GarbageStdout fault writes.
const GarbageLine = "acptest: this line is not JSON-RPC"

// Launcher runs the reference agent in-process behind a transport.Pipe.
func Launcher(cfg Config) transport.Launcher {
	return transport.Pipe{Name: "acptest-" + cfg.Persona, Serve: func(ctx context.Context, in io.Reader, out, errw io.Writer) error {
		return Serve(ctx, in, out, errw, cfg)
	}}
}

// Serve runs the reference agent on the given streams until stdin ends (nil), a fault ends it
// (an *ExitError), or ctx is cancelled.
func Serve(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, cfg Config) error {
	p, ok := LookupPersona(cfg.Persona)
	if !ok {
		return fmt.Errorf("acptest: unknown persona %q (have %v)", cfg.Persona, PersonaNames())
	}
	if cfg.SlowStart > 0 {
		t := time.NewTimer(cfg.SlowStart)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	if cfg.Drip > 0 {
		stdout = dripWriter{w: stdout, delay: cfg.Drip, ctx: ctx}
	}
	a := &agent{p: p, cfg: cfg, out: stdout, errw: stderr, sessions: map[string]*session{}, calls: map[string]chan *jsonrpc.Message{}}
	if done, err := a.stressStart(); done || err != nil {
		return err
	}
	if p.Model {
		a.m = newModelHost(ctx, a)
		defer a.m.shutdown()
	}
	if cfg.StdoutBanner {
		if _, err := io.WriteString(stdout, BannerLine+"\n"); err != nil {
			return err
		}
	}
	lines, readErr := jsonrpc.Feed(ctx, stdin, 0)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				if cfg.IgnoreStdinEOF {
					<-ctx.Done()
					return ctx.Err()
				}
				return nil
			}
			return err
		case line := <-lines:
			if err := a.handle(ctx, line.Raw); err != nil {
				return err
			}
		}
	}
}

type session struct {
	mode   string
	config map[string]string
}

type agent struct {
	p        *Persona
	cfg      Config
	out      io.Writer
	errw     io.Writer
	mu       sync.Mutex
	garbaged bool
	nextID   int
	sessions map[string]*session
	// answered is set once the first answer is about to be written.
	answered bool
	// m runs the prompt turns and sessions of a Model persona; nil for the others.
	m *modelHost

	// callMu guards nextRequest and calls: the agent's own requests to the client, numbered
	// from 1, and the ones whose answer a turn waits for.
	callMu      sync.Mutex
	nextRequest int
	calls       map[string]chan *jsonrpc.Message
}

func (a *agent) handle(ctx context.Context, raw []byte) error {
	msg, err := jsonrpc.Decode(raw)
	if err != nil {
		return a.writeError(json.RawMessage("null"), &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "Parse error"})
	}
	switch msg.Kind() {
	case jsonrpc.Request:
	case jsonrpc.Notification:
		if a.m != nil && msg.Method == acp.MethodSessionCancel {
			a.m.cancel(acp.ParseObject(msg.Params).String("sessionId"))
		}
		if a.cfg.AnswerNotifications && msg.Method != acp.MethodSessionCancel && msg.Method != acp.MethodCancelRequest {
			line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "error": map[string]any{"code": jsonrpc.CodeMethodNotFound, "message": "Method not found", "data": msg.Method}})
			return a.write(line)
		}
		return nil // session/cancel, $/cancel_request need nothing
	case jsonrpc.Response:
		a.deliver(msg) // an answer to one of our own requests
		return nil
	default:
		return a.writeError(json.RawMessage("null"), &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request"})
	}
	if msg.Method == a.cfg.ExitBefore {
		fmt.Fprintf(a.errw, "acptest: exiting before answering %s\n", msg.Method)
		return &ExitError{Code: ExitBeforeStatus}
	}
	if msg.Method == a.cfg.CloseStdoutBefore && msg.Method != "" {
		if c, ok := a.out.(io.Closer); ok {
			c.Close()
		}
		fmt.Fprintf(a.errw, "acptest: closed stdout before %s, still running\n", msg.Method)
		<-ctx.Done()
		return ctx.Err()
	}
	if msg.Method == a.cfg.HangOn {
		fmt.Fprintf(a.errw, "acptest: hanging on %s\n", msg.Method)
		<-ctx.Done()
		return ctx.Err()
	}
	a.sideEffectsOn(msg.Method)
	if msg.Method == acp.MethodSessionNew {
		if err := a.askClient(acp.ParseObject(msg.Params).String("cwd")); err != nil {
			return err
		}
		if err := a.notificationFlood(); err != nil {
			return err
		}
	}
	if !a.answered {
		a.answered = true
		if err := a.beforeFirstAnswer(); err != nil {
			return err
		}
	}
	var result json.RawMessage
	var rpcErr *jsonrpc.Error
	if a.m != nil && msg.Method == acp.MethodSessionPrompt {
		// The turn answers on its own goroutine, so that session/cancel and the answers to
		// its permission requests are read meanwhile; only a refused prompt is answered here.
		if rpcErr = a.m.startTurn(msg); rpcErr == nil {
			return nil
		}
	} else {
		result, rpcErr = a.dispatch(msg)
	}
	if rpcErr == errNotFound && a.cfg.IgnoreUnknownRequests {
		return nil
	}
	if a.cfg.GenericErrors && rpcErr != nil && (rpcErr == errNotFound || rpcErr.Code == jsonrpc.CodeInvalidParams) {
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
	if rpcErr != nil {
		return a.writeError(msg.ID, rpcErr)
	}
	if a.cfg.WrongID && msg.Method == acp.MethodInitialize {
		var n int64
		_ = json.Unmarshal(msg.ID, &n)
		msg.ID = json.RawMessage(strconv.FormatInt(n+1000, 10))
	}
	if err := a.writeResult(msg.ID, result); err != nil {
		return err
	}
	if a.cfg.DuplicateID && msg.Method == acp.MethodInitialize {
		if err := a.writeResult(msg.ID, result); err != nil {
			return err
		}
	}
	if msg.Method == acp.MethodInitialize && a.cfg.RequireAuthEnv != "" {
		if err := a.notify(acp.MethodVendorAuthStatusUpdate, map[string]string{"state": a.authState()}); err != nil {
			return err
		}
	}
	if msg.Method == acp.MethodInitialize && a.cfg.BadEnvelope {
		for _, line := range []string{
			`{"jsonrpc":"2.0","id":4242,"result":{}}`,
			`{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{},"error":{"code":-32603,"message":"both"}}`,
			`{"method":"session/update","params":{"sessionId":"none","update":{"sessionUpdate":"current_mode_update","currentModeId":"default"}}}`,
		} {
			if err := a.write([]byte(line)); err != nil {
				return err
			}
		}
	}
	if msg.Method == acp.MethodSessionNew {
		sid := acp.ParseObject(result).String("sessionId")
		for _, u := range a.p.AfterNewSession {
			if err := a.notify(acp.MethodSessionUpdate, map[string]any{"sessionId": sid, "update": u}); err != nil {
				return err
			}
		}
		for _, n := range a.p.Notifications {
			if err := a.notify(n.Method, n.Params); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	errUnknownSession = &jsonrpc.Error{Code: jsonrpc.CodeResourceNotFound, Message: "Resource not found: session"}
	errAuth           = &jsonrpc.Error{Code: jsonrpc.CodeAuthRequired, Message: "Authentication required"}
	errNotFound       = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
)

func invalidParams(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + msg}
}

func (a *agent) dispatch(msg *jsonrpc.Message) (json.RawMessage, *jsonrpc.Error) {
	params := acp.ParseObject(msg.Params)
	switch msg.Method {
	case acp.MethodInitialize:
		if _, ok := params.Int("protocolVersion"); !ok {
			return nil, invalidParams("protocolVersion must be an integer")
		}
		o := acp.ParseObject(a.p.Initialize)
		if a.cfg.AnswerVersion != 0 {
			o["protocolVersion"] = json.RawMessage(strconv.Itoa(a.cfg.AnswerVersion))
		}
		if len(a.cfg.LeakEnv) > 0 {
			var vals []string
			for _, name := range a.cfg.LeakEnv {
				vals = append(vals, os.Getenv(name))
			}
			fmt.Fprintf(a.errw, "acptest: leaking %s\n", strings.Join(vals, " "))
			// The same secret split across two writes: only a reader that joins them sees it.
			half := len(vals[0]) / 2
			fmt.Fprintf(a.errw, "acptest: split %s", vals[0][:half])
			fmt.Fprintf(a.errw, "%s\n", vals[0][half:])
			meta := map[string]any{"codebuddy.ai/accessToken": vals[0], "authSession": vals[len(vals)-1],
				"note": "Authorization: Bearer " + vals[0], "text": strings.Join(vals, ","),
				// Spelled with JSON escapes: only a reader that decodes the string sees it.
				"escaped": json.RawMessage(unicodeEscaped(vals[0]))}
			o["_meta"], _ = json.Marshal(meta)
		}
		if a.cfg.Drift {
			advertise(o, "sessionCapabilities", "delete")
			if info := o.Object("agentInfo"); info != nil {
				info["version"] = json.RawMessage(`"0.2.0"`)
				o["agentInfo"], _ = json.Marshal(info)
			}
		}
		if a.cfg.RequireAuthEnv != "" {
			advertise(o, "auth", "status")
		}
		if a.cfg.ExtraKeys {
			o["vendorBuild"] = json.RawMessage(`"acptest"`)
			caps := o.Object("agentCapabilities")
			if caps == nil {
				caps = acp.Object{}
			}
			caps["streaming"] = json.RawMessage("true")
			o["agentCapabilities"], _ = json.Marshal(caps)
		}
		out, _ := json.Marshal(o)
		return out, nil
	case acp.MethodAuthStatus:
		if a.cfg.RequireAuthEnv != "" {
			return raw(`{"state":"` + a.authState() + `"}`), nil
		}
	case acp.MethodSessionNew:
		if a.authState() == "unauthenticated" {
			return nil, errAuth
		}
		if a.cfg.RequireAdmission && !params.Object("_meta").Has("codebuddy.ai/sessionAdmissionV2") {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "ACP Session request is missing sessionAdmissionV2 metadata"}
		}
		if a.p.NewSessionError != nil {
			return nil, a.p.NewSessionError
		}
		if !params.Has("cwd") || params.Array("mcpServers") == nil {
			return nil, invalidParams("cwd and mcpServers are required")
		}
		if a.m != nil {
			return a.m.newSession(params)
		}
		return a.newSession(), nil
	case acp.MethodSessionPrompt:
		return a.prompt(params)
	}
	behaviour, ok := a.p.Methods[msg.Method]
	if a.cfg.Drift && msg.Method == acp.MethodSessionDelete {
		behaviour, ok = Works, true
	}
	if !ok {
		return nil, errNotFound
	}
	if err := validateParams(msg.Method, params, a.p.PromptErrors, a.paramsErrorCode()); err != nil {
		return nil, err
	}
	if behaviour == NeedsAuth {
		return nil, errAuth
	}
	if a.m != nil {
		return a.m.method(msg.Method, params)
	}
	if msg.Method == acp.MethodSessionList {
		return raw(`{"sessions":[]}`), nil
	}
	s := a.sessions[params.String("sessionId")]
	if s == nil {
		if a.cfg.ForkAnySession && msg.Method == acp.MethodSessionFork {
			return a.newSession(), nil
		}
		if behaviour == InvalidParamsOnUnknown {
			return nil, invalidParams("Session not found: " + params.String("sessionId"))
		}
		return nil, errUnknownSession
	}
	switch msg.Method {
	case acp.MethodSetConfigOption:
		return a.setConfigOption(s.config, params)
	case acp.MethodSetMode:
		s.mode = params.String("modeId")
		return raw(`{}`), nil
	case acp.MethodSessionClose:
		delete(a.sessions, params.String("sessionId"))
		return raw(`{}`), nil
	}
	return raw(`{}`), nil
}

// authState is the RequireAuthEnv fault's state: "unauthenticated" when the variable it
// names has no value in the agent's environment, "authenticated" when it has; "" without the
// fault.
func (a *agent) authState() string {
	if a.cfg.RequireAuthEnv == "" {
		return ""
	}
	for _, kv := range a.cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == a.cfg.RequireAuthEnv && v != "" {
			return "authenticated"
		}
	}
	return "unauthenticated"
}

// prompt validates the prompt first (as the SDKs do, before any session lookup), then answers
// a valid prompt on a known session with one agent message chunk and the end of the turn.
// paramsErrorCode is the code of an invalid-params answer: -32602, or -32603 with the
// wrong-code fault (as gemini-cli answers).
func (a *agent) paramsErrorCode() int {
	if a.cfg.WrongInvalidParamsCode {
		return jsonrpc.CodeInternalError
	}
	return 0
}

func (a *agent) prompt(params acp.Object) (json.RawMessage, *jsonrpc.Error) {
	if err := validatePrompt(params["prompt"], a.p.PromptErrors, a.paramsErrorCode()); err != nil {
		return nil, err
	}
	sid := params.String("sessionId")
	if a.sessions[sid] == nil {
		if a.p.NewSessionError != nil {
			return nil, a.p.NewSessionError
		}
		return nil, errUnknownSession
	}
	if err := a.notify(acp.MethodSessionUpdate, map[string]any{"sessionId": sid,
		"update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": "pong"}}}); err != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return raw(`{"stopReason":"end_turn"}`), nil
}

func (a *agent) notify(method string, params any) error {
	line, err := jsonrpc.EncodeNotification(method, params)
	if err != nil {
		return err
	}
	return a.write(line)
}

func (a *agent) writeResult(id json.RawMessage, result json.RawMessage) error {
	if n := a.cfg.HugeAnswers; n > 0 && bytes.HasPrefix(bytes.TrimSpace(result), []byte("{")) {
		var o map[string]json.RawMessage
		if json.Unmarshal(result, &o) == nil {
			o["_meta"], _ = json.Marshal(map[string]string{"acptest.pad": strings.Repeat("x", n)})
			result, _ = json.Marshal(o)
		}
	}
	line, err := jsonrpc.EncodeResult(id, result)
	if err != nil {
		return err
	}
	return a.write(a.order(line, id))
}

func (a *agent) writeError(id json.RawMessage, e *jsonrpc.Error) error {
	line, err := jsonrpc.EncodeError(id, e)
	if err != nil {
		return err
	}
	return a.write(a.order(line, id))
}

// order moves "id" to the end of a response when the persona writes it that way.
func (a *agent) order(line []byte, id json.RawMessage) []byte {
	if !a.p.IDLast {
		return line
	}
	prefix := []byte(`{"jsonrpc":"2.0","id":` + string(id) + `,`)
	if !bytes.HasPrefix(line, prefix) {
		return line
	}
	rest := line[len(prefix) : len(line)-1]
	return []byte(`{"jsonrpc":"2.0",` + string(rest) + `,"id":` + string(id) + `}`)
}

// writeRaw writes a line as is (no garbage prefix).
func (a *agent) writeRaw(line []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, err := a.out.Write(append(append([]byte(nil), line...), '\n'))
	return err
}

func (a *agent) write(line []byte) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.cfg.GarbageStdout && !a.garbaged {
		a.garbaged = true
		if _, err := io.WriteString(a.out, GarbageLine+"\n"); err != nil {
			return err
		}
	}
	_, err := a.out.Write(append(line, '\n'))
	return err
}

// unicodeEscaped is s as a JSON string with every character written as a \uXXXX escape.
func unicodeEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		fmt.Fprintf(&b, "\\u%04x", r)
	}
	b.WriteByte('"')
	return b.String()
}

// advertise adds agentCapabilities.<group>.<name> = {} to an initialize result o.
func advertise(o acp.Object, group, name string) {
	caps := o.Object("agentCapabilities")
	if caps == nil {
		caps = acp.Object{}
	}
	g := caps.Object(group)
	if g == nil {
		g = acp.Object{}
	}
	g[name] = json.RawMessage("{}")
	caps[group], _ = json.Marshal(g)
	o["agentCapabilities"], _ = json.Marshal(caps)
}
