package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The sessions scenario's spec pages.
const (
	specSessionSetup = "https://agentclientprotocol.com/protocol/session-setup"
	specSessionList  = "https://agentclientprotocol.com/protocol/session-list"
)

// The checks of session continuity (the sessions turn scenario): what fresh agent processes in
// the same sandbox did with the session of a completed turn.
var (
	sessionsLoadFailed = &Check{ID: "sessions.load-failed", Tier: report.TierCapability, Side: SideAgent,
		Title: "session/load of a session the agent had just run failed on a fresh process", SpecRef: specSessionSetup, Active: true}
	sessionsReplayIncomplete = &Check{ID: "sessions.replay-incomplete", Tier: report.TierCapability, Side: SideAgent,
		Title: "session/load did not replay the turn: its user message, text or tool calls are missing or changed", SpecRef: specSessionSetup, Active: true}
	sessionsReplayAfterAnswer = &Check{ID: "sessions.replay-after-answer", Tier: report.TierMandatory, Side: SideAgent,
		Title: "session/load answered before the replay ended", SpecRef: specSessionSetup, Active: true}
	sessionsResumeReplayed = &Check{ID: "sessions.resume-replayed", Tier: report.TierMandatory, Side: SideAgent,
		Title: "session/resume replayed the history", SpecRef: specSessionSetup, Active: true}
	sessionsResumeFailed = &Check{ID: "sessions.resume-failed", Tier: report.TierCapability, Side: SideAgent,
		Title: "session/resume of a session the agent had just run failed on a fresh process", SpecRef: specSessionSetup, Active: true}
	sessionsListMissing = &Check{ID: "sessions.list-missing", Tier: report.TierCapability, Side: SideAgent,
		Title: "session/list on a fresh process did not list the session in its real cwd", SpecRef: specSessionList, Active: true}
	sessionsCloseKeeps = &Check{ID: "sessions.close-keeps", Tier: report.TierCapability, Side: SideAgent,
		Title: "A prompt on a closed session was not refused", SpecRef: specSessionSetup, Active: true}
	sessionsCloseLeaks = &Check{ID: "sessions.close-leaks", Tier: report.TierCapability, Side: SideAgent,
		Title: "The agent's process count grew over load/close cycles", SpecRef: specSessionSetup, Active: true}
	sessionsForkBroken = &Check{ID: "sessions.fork-broken", Tier: report.TierCapability, Side: SideAgent,
		Title: "session/fork failed, kept the session's id, or the fork lacks the history", SpecRef: specSessionFork, Active: true}
)

// sessionConns are the sessions scenario's connections after the main one (record.Split).
type sessionConns struct {
	load, resume []jsonrpc.Frame
}

// historyKinds are the updates a replay is made of.
var historyKinds = []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"}

// sessionsTruth reads the sessions scenario: the live turn (its first run), then what the
// session-load and session-resume connections saw.
func sessionsTruth(x *record.Index, runs []*turnRun, conns sessionConns) *report.SessionsTruth {
	t := &report.SessionsTruth{Advertised: []string{}, Live: report.SessionHistory{ToolCalls: []report.ToolCallTruth{}}}
	if in := x.First(acp.MethodInitialize); in != nil && in.Answer != nil {
		t.Advertised = probe.SessionMethods(acp.ParseInitializeResult(in.Answer.Msg.Result).Capabilities)
	}
	if ns := x.First(acp.MethodSessionNew); ns != nil {
		t.Cwd = acp.ParseObject(ns.Request.Msg.Params).String("cwd")
	}
	if len(runs) == 0 {
		return t
	}
	t.SessionID = acp.ParseObject(runs[0].prompt.Msg.Params).String("sessionId")
	t.Live = historyOf(runs[0].frames, t.SessionID, 0, endOf(runs[0].answer))
	if lx := conns.load; lx != nil {
		sessionLoadFacts(t, record.New(lx))
	}
	if rx := conns.resume; rx != nil {
		t.Resume = resumeFacts(record.New(rx), t.SessionID)
	}
	return t
}

// endOf is an answer's seq, or no bound when there is none.
func endOf(answer *jsonrpc.Frame) int64 {
	if answer == nil {
		return 1<<63 - 1
	}
	return answer.Seq
}

// historyOf is what the updates of session sid between the lines from and to (exclusive)
// show of a conversation.
func historyOf(frames []jsonrpc.Frame, sid string, from, to int64) report.SessionHistory {
	h := report.SessionHistory{ToolCalls: []report.ToolCallTruth{}}
	tools := map[string]int{}
	var agent strings.Builder
	for _, f := range frames {
		if f.Seq <= from || f.Seq >= to || !isUpdate(f) {
			continue
		}
		u := acp.ParseSessionUpdate(f.Msg.Params)
		if u.SessionID != sid || !slices.Contains(historyKinds, u.Kind) {
			continue
		}
		h.Updates++
		switch u.Kind {
		case "user_message_chunk":
			h.UserText = h.UserText || strings.Contains(u.Text, record.SessionMarker)
		case "agent_message_chunk":
			if agent.Len() < 1<<16 {
				agent.WriteString(u.Text)
			}
		case "tool_call", "tool_call_update":
			h.ToolCalls = mergeToolCall(h.ToolCalls, tools, u)
		}
	}
	h.AgentText = strings.Contains(agent.String(), record.TurnReplyMarker)
	return h
}

// callOf is a request's facts, and its answer's frame (nil: none).
func callOf(x *record.Index, req jsonrpc.Frame) (report.SessionCall, *jsonrpc.Frame) {
	c := report.SessionCall{Seq: req.Seq}
	a, ok := x.AnswerTo(req.Seq)
	if !ok {
		return c, nil
	}
	c.AnswerSeq = a.Seq
	if e := a.Msg.Err(); e != nil {
		code := e.Code
		c.Code, c.Message = &code, e.Message
	}
	return c, &a
}

// loadFacts is one session/load: its replay against the live history, and the updates after
// its answer (until the connection's next request).
func loadFacts(x *record.Index, frames []jsonrpc.Frame, i int, sid string, want report.SessionHistory) *report.SessionLoad {
	c, answer := callOf(x, frames[i])
	l := &report.SessionLoad{SessionCall: c, Missing: []string{}}
	l.Replay = historyOf(frames, sid, c.Seq, endOf(answer))
	if answer != nil {
		next := int64(1<<63 - 1)
		for _, f := range frames[i+1:] {
			if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request && f.Seq > answer.Seq {
				next = f.Seq
				break
			}
		}
		l.UpdatesAfter = historyOf(frames, sid, answer.Seq, next).Updates
	}
	if c.OK() {
		l.Missing = missing(want, l.Replay)
	}
	return l
}

// missing lists the items of want (the live turn, or the replay of the session a fork was
// made of) a replay does not carry, or carries changed.
func missing(live, replay report.SessionHistory) []string {
	out := []string{}
	if live.UserText && !replay.UserText {
		out = append(out, "the user message")
	}
	if live.AgentText && !replay.AgentText {
		out = append(out, "the agent's text")
	}
	for _, tc := range live.ToolCalls {
		i := slices.IndexFunc(replay.ToolCalls, func(r report.ToolCallTruth) bool { return r.ID == tc.ID })
		switch {
		case i < 0:
			out = append(out, fmt.Sprintf("tool call %s (%s, %s)", tc.ID, orNone(tc.Kind, "no kind"), orNone(tc.Status, "no status")))
		case replay.ToolCalls[i].Kind != tc.Kind:
			out = append(out, fmt.Sprintf("tool call %s: kind %s, replayed %s", tc.ID, orNone(tc.Kind, "unset"), orNone(replay.ToolCalls[i].Kind, "unset")))
		case replay.ToolCalls[i].Status != tc.Status:
			out = append(out, fmt.Sprintf("tool call %s: status %s, replayed %s", tc.ID, orNone(tc.Status, "unset"), orNone(replay.ToolCalls[i].Status, "unset")))
		}
	}
	return out
}

// sessionLoadFacts reads the session-load connection: list, the load of the session, the fork
// and its load, the load/close cycles with their process counts, the prompt after the last
// close.
func sessionLoadFacts(t *report.SessionsTruth, x *record.Index) {
	frames := x.Frames()
	forkID := ""
	var cl report.SessionClose
	closes := 0
	for i, f := range frames {
		if p, ok := record.Processes.Decode(f); ok {
			n := len(p.Processes)
			switch {
			case p.Error != "":
			case p.Moment == record.BeforeLoad:
				cl.Before = &n
			case p.Moment == record.AfterSessionClose:
				cl.Processes = append(cl.Processes, n)
			}
			continue
		}
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Kind() != jsonrpc.Request {
			continue
		}
		params := acp.ParseObject(f.Msg.Params)
		sid := params.String("sessionId")
		switch f.Msg.Method {
		case acp.MethodSessionList:
			c, answer := callOf(x, f)
			if t.List == nil || !t.List.Listed {
				t.List = &report.SessionList{SessionCall: c}
			}
			if answer != nil && c.OK() {
				for _, raw := range acp.ParseObject(answer.Msg.Result).Array("sessions") {
					if info := acp.ParseObject(raw); info.String("sessionId") == t.SessionID {
						t.List.Listed, t.List.Cwd = true, info.String("cwd")
					}
				}
			}
		case acp.MethodSessionLoad:
			switch {
			case sid == t.SessionID && t.Load == nil:
				// The prompt was the user message, whether or not the live turn echoed it.
				want := t.Live
				want.UserText = true
				t.Load = loadFacts(x, frames, i, sid, want)
			case sid == forkID && forkID != "" && t.Fork != nil && t.Fork.Load == nil:
				// The fork must hold what the session held: what its own load replayed (its
				// faults are the load's findings), else the live turn.
				want := t.Live
				want.UserText = true
				if t.Load != nil && t.Load.OK() {
					want = t.Load.Replay
				}
				t.Fork.Load = loadFacts(x, frames, i, sid, want)
			}
		case acp.MethodSessionFork:
			c, answer := callOf(x, f)
			t.Fork = &report.SessionFork{SessionCall: c}
			if answer != nil && c.OK() {
				forkID = acp.ParseObject(answer.Msg.Result).String("sessionId")
				t.Fork.NewID, t.Fork.Distinct = forkID, forkID != "" && forkID != t.SessionID
			}
		case acp.MethodSessionClose:
			if sid != t.SessionID {
				continue
			}
			c, _ := callOf(x, f)
			if closes == 0 {
				cl.Close = c
			}
			closes++
			if c.OK() {
				cl.Cycles++
			}
		case acp.MethodSessionPrompt:
			if closes == 0 || cl.Prompt != nil {
				continue
			}
			c, answer := callOf(x, f)
			cl.Prompt = &c
			if answer != nil && c.OK() {
				cl.PromptStop = acp.ParseObject(answer.Msg.Result).String("stopReason")
			}
			for _, g := range frames[i+1:] {
				if req, ok := record.ModelRequest.Decode(g); ok && req.Endpoint == "generate" && (answer == nil || g.Seq < answer.Seq) {
					cl.ModelRequests++
				}
			}
		}
	}
	if closes > 0 {
		if cl.Processes == nil {
			cl.Processes = []int{}
		}
		if n := len(cl.Processes); n > 1 {
			cl.Grew = cl.Processes[n-1] > cl.Processes[0]
		}
		t.Close = &cl
	}
}

// resumeFacts is the session-resume connection's session/resume, and the history it
// replayed (up to the end of the connection: nothing was sent after it).
func resumeFacts(x *record.Index, sid string) *report.SessionResume {
	frames := x.Frames()
	for _, f := range frames {
		if isClientRequest(f, acp.MethodSessionResume) {
			c, _ := callOf(x, f)
			return &report.SessionResume{SessionCall: c, Replayed: historyOf(frames, sid, f.Seq, 1<<63-1).Updates}
		}
	}
	return nil
}

// sessionsNotRun says why the sessions scenario could not run past its turn ("" when it ran).
func sessionsNotRun(t *report.SessionsTruth, first report.TurnRun) string {
	switch {
	case first.Code != nil || first.AnswerSeq == 0:
		return "the turn was not answered with a result: there is no session to load"
	case len(t.Advertised) == 0:
		return "the agent advertises none of loadSession, session/list, fork, close and resume"
	}
	return ""
}

// judgeSessions judges session continuity from its facts.
func judgeSessions(s *report.SessionsTruth, add func(*Check, int64, string, string, ...any)) {
	has := func(m string) bool { return slices.Contains(s.Advertised, m) }
	if l := s.List; l != nil {
		switch {
		case !l.OK():
			add(sessionsListMissing, l.Seq, "", "session/list failed on a fresh process: %s", l.Outcome())
		case !l.Listed:
			add(sessionsListMissing, l.Seq, "", "session/list on a fresh process did not list session %s", s.SessionID)
		case l.Cwd != s.Cwd:
			add(sessionsListMissing, l.Seq, "", "session/list gives session %s the cwd %q; it was created in %q", s.SessionID, l.Cwd, s.Cwd)
		}
	}
	if l := s.Load; l != nil {
		judgeLoad(l, "session/load", add)
	} else if has(probe.SessionLoadMethod) {
		add(sessionsLoadFailed, 0, "", "loadSession is advertised, and session/load was never answered on the session-load connection")
	}
	if f := s.Fork; f != nil {
		switch {
		case !f.OK():
			add(sessionsForkBroken, f.Seq, "", "session/fork of the session failed: %s", f.Outcome())
		case !f.Distinct:
			add(sessionsForkBroken, f.AnswerSeq, "/result/sessionId", "session/fork answered the id %q, not a new one", f.NewID)
		case f.Load != nil && (!f.Load.OK() || len(f.Load.Missing) > 0):
			what := f.Load.Outcome()
			if f.Load.OK() {
				what = "its replay lacks " + strings.Join(f.Load.Missing, "; ")
			}
			add(sessionsForkBroken, f.Load.Seq, "", "session/load of the fork %s: %s", f.NewID, what)
		}
	}
	if c := s.Close; c != nil {
		if c.Prompt != nil && c.Prompt.OK() {
			add(sessionsCloseKeeps, c.Prompt.Seq, "", "after session/close, a prompt on the session was answered (stopReason %s, %d model request(s)) instead of refused", orNone(c.PromptStop, "unset"), c.ModelRequests)
		}
		if c.Grew {
			add(sessionsCloseLeaks, c.Close.Seq, "", "the agent's other processes after each of %d load/close cycles: %s (before the first load: %s): each cycle leaves processes behind",
				len(c.Processes), c.Counts(), c.BeforeCount())
		}
	}
	if r := s.Resume; r != nil {
		switch {
		case !r.OK():
			add(sessionsResumeFailed, r.Seq, "", "session/resume failed on a fresh process: %s", r.Outcome())
		case r.Replayed > 0:
			add(sessionsResumeReplayed, r.Seq, "", "session/resume replayed %d history update(s); it must not replay", r.Replayed)
		}
	}
}

// judgeLoad judges one session/load.
func judgeLoad(l *report.SessionLoad, what string, add func(*Check, int64, string, string, ...any)) {
	switch {
	case !l.OK():
		add(sessionsLoadFailed, l.Seq, "", "%s failed on a fresh process: %s", what, l.Outcome())
		return
	case len(l.Missing) > 0:
		add(sessionsReplayIncomplete, l.AnswerSeq, "", "%s replayed %d update(s), without %s", what, l.Replay.Updates, strings.Join(l.Missing, "; "))
	}
	if l.UpdatesAfter > 0 {
		add(sessionsReplayAfterAnswer, l.AnswerSeq, "", "%d history update(s) came after the %s answer; the replay comes before it", l.UpdatesAfter, what)
	}
}
