package derive

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// sessionConns are the sessions scenario's connections after the main one (record.Split).
type sessionConns struct {
	load, resume []jsonrpc.Frame
}

// historyKinds are the updates a replay is made of.
var historyKinds = []string{"user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update"}

// sessionsTruth reads the sessions scenario: the live turn (its first run), then what the
// session-load and session-resume connections saw.
func sessionsTruth(x *record.Index, frames []jsonrpc.Frame, runs []*turnRun, conns sessionConns) *report.SessionsTruth {
	t := &report.SessionsTruth{Advertised: []string{}, Live: report.SessionHistory{ToolCalls: []report.ToolCallTruth{}}}
	if in := x.First(acp.MethodInitialize); in != nil && in.Answer != nil {
		t.Advertised = acp.SessionMethods(acp.ParseInitializeResult(in.Answer.Msg.Result).Capabilities)
	}
	if req, _ := sessionOf(x, frames); req != nil {
		t.Cwd = acp.ParseObject(req.Msg.Params).String("cwd")
	} else if ns := x.First(acp.MethodSessionNew); ns != nil { // a record of a version without fresh sessions
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
		t.Resume = resumeFacts(record.New(rx), t.SessionID, t.Live)
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
			out = append(out, fmt.Sprintf("tool call %s (%s, %s)", tc.ID, cmp.Or(tc.Kind, "no kind"), cmp.Or(tc.Status, "no status")))
		case replay.ToolCalls[i].Kind != tc.Kind:
			out = append(out, fmt.Sprintf("tool call %s: kind %s, replayed %s", tc.ID, cmp.Or(tc.Kind, "unset"), cmp.Or(replay.ToolCalls[i].Kind, "unset")))
		case replay.ToolCalls[i].Status != tc.Status:
			out = append(out, fmt.Sprintf("tool call %s: status %s, replayed %s", tc.ID, cmp.Or(tc.Status, "unset"), cmp.Or(replay.ToolCalls[i].Status, "unset")))
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

// resumeFacts is the session-resume connection's session/resume, and how many updates after it
// (up to the end of the connection: nothing was sent after it) repeated the live history.
func resumeFacts(x *record.Index, sid string, live report.SessionHistory) *report.SessionResume {
	frames := x.Frames()
	for _, f := range frames {
		if isClientRequest(f, acp.MethodSessionResume) {
			c, _ := callOf(x, f)
			return &report.SessionResume{SessionCall: c, Replayed: repeatsOf(frames, sid, f.Seq, live)}
		}
	}
	return nil
}

// repeatsOf counts the updates of session sid after the line from that repeat the live
// history: the user message of the turn (its SessionMarker), the answer's text (its
// TurnReplyMarker), a tool call of the turn (its id).
func repeatsOf(frames []jsonrpc.Frame, sid string, from int64, live report.SessionHistory) int {
	n := 0
	for _, f := range frames {
		if f.Seq <= from || !isUpdate(f) {
			continue
		}
		u := acp.ParseSessionUpdate(f.Msg.Params)
		if u.SessionID != sid {
			continue
		}
		switch u.Kind {
		case "user_message_chunk":
			if strings.Contains(u.Text, record.SessionMarker) {
				n++
			}
		case "agent_message_chunk", "agent_thought_chunk":
			if strings.Contains(u.Text, record.TurnReplyMarker) {
				n++
			}
		case "tool_call", "tool_call_update":
			if slices.ContainsFunc(live.ToolCalls, func(c report.ToolCallTruth) bool { return c.ID == u.ToolCallID }) {
				n++
			}
		}
	}
	return n
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
