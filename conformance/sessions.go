package conformance

import (
	"cmp"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
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
	} else if has(acp.SessionLoadMethod) {
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
			add(sessionsCloseKeeps, c.Prompt.Seq, "", "after session/close, a prompt on the session was answered (stopReason %s, %d model request(s)) instead of refused", cmp.Or(c.PromptStop, "unset"), c.ModelRequests)
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
