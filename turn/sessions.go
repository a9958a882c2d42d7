package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// SessionCycles is the number of load/close cycles of the sessions scenario.
const SessionCycles = 5

// sessionsPrompt asks for a file write (the agent asks, acpprobe refuses) and a reply: a turn
// with a user message, a tool call and the agent's text, which a replay must carry.
const sessionsPrompt = record.SessionMarker + ": create the file %s containing one line, using your file-writing tool, then reply with one short line."

// Bounds of the process count after a session/close: the agent may end a session's processes
// a moment after answering, so the count is taken again until it is back to what it was
// before that load, or closeSettle has passed.
const (
	closeSettle = 1500 * time.Millisecond
	settlePoll  = 100 * time.Millisecond
)

// sessions is the sessions scenario's part on its own connection: one turn with a tool call
// (the model asks to write a file, acpprobe refuses, the model then answers record.TurnReply)
// on a fresh session. Everything else happens on fresh agent processes after it
// (sessionsThen), when this turn was answered.
func (sc *scene) sessions(ctx context.Context, s *probe.Session, l *live) {
	path := sc.path("sessions")
	sc.srv.SetScript(emulator.WriteFile(path, FileContent, record.TurnReply))
	sc.promptOn(ctx, s, l.id, text(fmt.Sprintf(sessionsPrompt, path)))
	_ = os.Remove(path)
}

// sessionsTarget is what the connections after the sessions turn need of it: its session, the
// cwd it was made with, and the session methods the agent advertises.
type sessionsTarget struct {
	id, cwd    string
	advertised []string
}

func (t sessionsTarget) has(m string) bool { return slices.Contains(t.advertised, m) }

// targetOf reads the target from the record so far: the connection whose sessions step ran
// (the main one, or a fresh process after a scenario that may have changed the agent). False
// when the sessions turn was not answered with a result (nothing to load, and the scenario
// says why).
func targetOf(sofar record.Connections) (sessionsTarget, bool) {
	var t sessionsTarget
	x, ok := stepConnection(sofar, record.ScenarioSessions.StepName())
	if !ok {
		return t, false
	}
	frames := x.StepRange(record.ScenarioSessions.StepName())
	for _, f := range frames {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		a, ok := x.AnswerTo(f.Seq)
		if !ok || a.Msg.Err() != nil {
			return t, false
		}
		t.id = acp.ParseObject(f.Msg.Params).String("sessionId")
		break
	}
	for _, f := range frames { // the session/new of the step made the session
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Method != acp.MethodSessionNew {
			continue
		}
		if a, ok := x.AnswerTo(f.Seq); ok && acp.ParseObject(a.Msg.Result).String("sessionId") == t.id {
			t.cwd = acp.ParseObject(f.Msg.Params).String("cwd")
		}
	}
	in := x.First(acp.MethodInitialize)
	if t.id == "" || t.cwd == "" || in == nil || in.Answer == nil {
		return t, false
	}
	t.advertised = acp.SessionMethods(acp.ParseInitializeResult(in.Answer.Msg.Result).Capabilities)
	return t, true
}

// stepConnection is the index of the connection, the main one or one of purpose turn, where
// the step ran.
func stepConnection(sofar record.Connections, name string) (*record.Index, bool) {
	conns := [][]jsonrpc.Frame{sofar.Main}
	for _, c := range sofar.Extra {
		if c.Purpose == record.PurposeTurn {
			conns = append(conns, c.Frames)
		}
	}
	for _, frames := range conns {
		x := record.New(frames)
		if x.HasStep(name) {
			return x, true
		}
	}
	return nil, false
}

// sessionsThen are the connections of the sessions scenario after its turn, each to a fresh
// agent process in the same sandbox: session-load (list, load, fork, load/close cycles, a
// prompt on the closed session) and session-resume. authenticate is the route's authenticate
// call (nil for none).
func sessionsThen(sc *scene, authenticate *probe.Authenticate) []acpprobe.Then {
	return []acpprobe.Then{
		{Purpose: record.PurposeSessionLoad, Steps: func(sofar record.Connections) []probe.Step {
			t, ok := targetOf(sofar)
			if !ok || !(t.has(acp.SessionLoadMethod) || t.has(acp.SessionListMethod) || t.has(acp.SessionForkMethod) || t.has(acp.SessionCloseMethod)) {
				return nil
			}
			return []probe.Step{loadStep{t: t, sc: sc, auth: authenticate}}
		}},
		{Purpose: record.PurposeSessionResume, Steps: func(sofar record.Connections) []probe.Step {
			t, ok := targetOf(sofar)
			if !ok || !t.has(acp.SessionResumeMethod) {
				return nil
			}
			return []probe.Step{resumeStep{t: t, sc: sc, auth: authenticate}}
		}},
	}
}

// call sends one request within d and returns its result, or nil on an error or no answer.
func call(ctx context.Context, s *probe.Session, d time.Duration, method string, params map[string]any) acp.Object {
	return acp.ParseObject(answer(ctx, s, d, method, params))
}

// answer sends one request within d and returns its raw result (the record's bytes, not a
// copy), or nil on an error or no answer.
func answer(ctx context.Context, s *probe.Session, d time.Duration, method string, params map[string]any) json.RawMessage {
	cctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	a, err := s.Call(cctx, method, params)
	if err != nil || a.Err() != nil {
		return nil
	}
	return a.Result
}

// login calls authenticate when the route needs it (an initialize-only connection does not
// by itself).
func login(ctx context.Context, s *probe.Session, a *probe.Authenticate) {
	if a != nil {
		call(ctx, s, s.RequestTimeout, acp.MethodAuthenticate, a.Params())
	}
}

// maxListPages bounds the pages of session/list read while looking for the session.
const maxListPages = 5

// loadStep runs on the session-load connection.
type loadStep struct {
	t    sessionsTarget
	sc   *scene
	auth *probe.Authenticate
}

func (loadStep) Name() string { return record.ScenarioSessions.StepName() + "/load" }

func (l loadStep) Run(ctx context.Context, s *probe.Session) {
	login(ctx, s, l.auth)
	cwd := l.t.cwd
	if l.t.has(acp.SessionListMethod) {
		// The cwd the list gives is the one a client loads the session with.
		if listed := l.list(ctx, s); listed != "" {
			cwd = listed
		}
	}
	load := func(id string) bool {
		ok := call(ctx, s, l.sc.turn, acp.MethodSessionLoad, map[string]any{"sessionId": id, "cwd": cwd, "mcpServers": []any{}}) != nil
		listen(ctx, afterWindow)
		return ok
	}
	before := s.Sweep(record.BeforeLoad)
	loaded := l.t.has(acp.SessionLoadMethod) && load(l.t.id)
	if l.t.has(acp.SessionForkMethod) && ctx.Err() == nil {
		fork := call(ctx, s, l.sc.turn, acp.MethodSessionFork, map[string]any{"sessionId": l.t.id, "cwd": cwd, "mcpServers": []any{}})
		if id := fork.String("sessionId"); id != "" && id != l.t.id && l.t.has(acp.SessionLoadMethod) {
			load(id)
			if l.t.has(acp.SessionCloseMethod) {
				call(ctx, s, s.RequestTimeout, acp.MethodSessionClose, map[string]any{"sessionId": id})
			}
		}
	}
	if !l.t.has(acp.SessionCloseMethod) || !l.t.has(acp.SessionLoadMethod) {
		return
	}
	// N load/close cycles (the first load is the one above), counting the agent's other
	// processes after each close.
	for i := range SessionCycles {
		if ctx.Err() != nil || !s.Alive() {
			return
		}
		if i > 0 {
			before = count(s)
			loaded = load(l.t.id)
		}
		if !loaded {
			return
		}
		call(ctx, s, s.RequestTimeout, acp.MethodSessionClose, map[string]any{"sessionId": l.t.id})
		settle(ctx, s, before)
		s.Sweep(record.AfterSessionClose)
	}
	// The session is closed: a prompt on it must be refused.
	l.sc.srv.SetScript(emulator.Text(record.TurnReply))
	l.sc.promptOn(ctx, s, l.t.id, text(completionPrompt))
}

// list reads session/list (following nextCursor a few pages) until it finds the session, and
// returns the cwd it lists for it ("" when it is not listed).
func (l loadStep) list(ctx context.Context, s *probe.Session) string {
	cursor := ""
	for range maxListPages {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res := call(ctx, s, s.RequestTimeout, acp.MethodSessionList, params)
		for _, raw := range res.Array("sessions") {
			if info := acp.ParseObject(raw); info.String("sessionId") == l.t.id {
				return info.String("cwd")
			}
		}
		if cursor = res.String("nextCursor"); cursor == "" {
			return ""
		}
	}
	return ""
}

// count is the number of the agent's other processes now, without recording it (-1: unknown).
func count(s *probe.Session) int {
	procs, err := transport.Sweep(s.Scope())
	if err != nil || s.Scope() == (transport.Scope{}) {
		return -1
	}
	return len(procs)
}

// settle waits until the agent has as few other processes as before (it may end a session's
// processes a moment after answering session/close), at most closeSettle.
func settle(ctx context.Context, s *probe.Session, before int) {
	deadline := time.NewTimer(closeSettle)
	defer deadline.Stop()
	tick := time.NewTicker(settlePoll)
	defer tick.Stop()
	for before >= 0 {
		if n := count(s); n < 0 || n <= before {
			return
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// resumeStep runs on the session-resume connection: session/resume of the session, then a
// moment to see whether anything is replayed (it must not be).
type resumeStep struct {
	t    sessionsTarget
	sc   *scene
	auth *probe.Authenticate
}

func (resumeStep) Name() string { return record.ScenarioSessions.StepName() + "/resume" }

func (r resumeStep) Run(ctx context.Context, s *probe.Session) {
	login(ctx, s, r.auth)
	call(ctx, s, r.sc.turn, acp.MethodSessionResume, map[string]any{"sessionId": r.t.id, "cwd": r.t.cwd, "mcpServers": []any{}})
	listen(ctx, afterWindow)
}
