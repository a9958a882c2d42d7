package render

import (
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/report"
)

// sessionsText is the sessions scenario's summary: whether a load replays the turn's tool
// calls, and whether close frees the session and its processes.
func sessionsText(s *report.SessionsTruth) string {
	var parts []string
	if s.Load != nil {
		parts = append(parts, "load "+loadVerdict(s.Load))
	}
	if c := s.Close; c != nil {
		parts = append(parts, "close "+closeVerdict(c))
	}
	if len(parts) == 0 {
		return "advertises " + orDash(strings.Join(s.Advertised, ", "))
	}
	return strings.Join(parts, "; ")
}

// loadVerdict says in a few words what a load replayed.
func loadVerdict(l *report.SessionLoad) string {
	switch {
	case !l.OK():
		return "failed (" + l.Outcome() + ")"
	case len(l.Missing) > 0:
		return "misses " + foldList(l.Missing, missingMax, "; ")
	case len(l.Replay.ToolCalls) > 0:
		return "replays the tool calls"
	}
	return "replays the turn"
}

// closeVerdict says whether close freed the session and its processes.
func closeVerdict(c *report.SessionClose) string {
	var parts []string
	switch {
	case c.Prompt != nil && c.Prompt.OK():
		parts = append(parts, "KEEPS the session (a prompt after it ran)")
	case c.Prompt != nil:
		parts = append(parts, "frees the session")
	}
	switch {
	case c.Grew:
		parts = append(parts, "LEAKS processes ("+c.Counts()+")")
	case len(c.Processes) > 0:
		parts = append(parts, "processes flat ("+c.Counts()+")")
	}
	if len(parts) == 0 {
		return c.Close.Outcome()
	}
	return strings.Join(parts, ", ")
}

// sessionsDetails are the sessions scenario's lines: one per part, null parts said so.
func sessionsDetails(s *report.SessionsTruth) [][2]string {
	adv := func(m string) string {
		for _, a := range s.Advertised {
			if a == m {
				return "not reached"
			}
		}
		return "not advertised"
	}
	out := [][2]string{{"live turn", historyText(s.Live)}}
	switch l := s.List; {
	case l == nil:
		out = append(out, [2]string{"list", adv(acp.SessionListMethod)})
	case !l.OK():
		out = append(out, [2]string{"list", "failed (" + l.Outcome() + ")"})
	case !l.Listed:
		out = append(out, [2]string{"list", "the session is not listed"})
	default:
		out = append(out, [2]string{"list", fmt.Sprintf("listed, cwd %s", l.Cwd)})
	}
	if l := s.Load; l != nil {
		out = append(out, [2]string{"load", loadText(l)})
	} else {
		out = append(out, [2]string{"load", adv(acp.SessionLoadMethod)})
	}
	switch f := s.Fork; {
	case f == nil:
		out = append(out, [2]string{"fork", adv(acp.SessionForkMethod)})
	case !f.OK():
		out = append(out, [2]string{"fork", "failed (" + f.Outcome() + ")"})
	default:
		t := "new id " + f.NewID
		if !f.Distinct {
			t = "the SAME id " + f.NewID
		}
		if f.Load != nil {
			t += "; its load " + loadText(f.Load)
		}
		out = append(out, [2]string{"fork", t})
	}
	if c := s.Close; c != nil {
		t := fmt.Sprintf("%d load/close cycle(s), %s; other processes before %s, after each close %s", c.Cycles, closeVerdict(c), c.BeforeCount(), orDash(c.Counts()))
		if c.Prompt != nil {
			t += "; a prompt after close: " + c.Prompt.Outcome()
		}
		out = append(out, [2]string{"close", t})
	} else {
		out = append(out, [2]string{"close", adv(acp.SessionCloseMethod)})
	}
	switch r := s.Resume; {
	case r == nil:
		out = append(out, [2]string{"resume", adv(acp.SessionResumeMethod)})
	case !r.OK():
		out = append(out, [2]string{"resume", "failed (" + r.Outcome() + ")"})
	case r.Replayed > 0:
		out = append(out, [2]string{"resume", fmt.Sprintf("REPLAYED %d update(s)", r.Replayed)})
	default:
		out = append(out, [2]string{"resume", "resumed, no replay"})
	}
	return out
}

// sessionsCell is the matrix cell's fact: what a load replays, what close frees.
func sessionsCell(s *report.SessionsTruth) string {
	var parts []string
	switch l := s.Load; {
	case l == nil:
	case !l.OK():
		parts = append(parts, "load fails")
	case len(l.Missing) > 0:
		parts = append(parts, "load partial")
	case len(l.Replay.ToolCalls) > 0:
		parts = append(parts, "load replays tools")
	default:
		parts = append(parts, "load replays")
	}
	if c := s.Close; c != nil {
		switch {
		case c.Grew:
			parts = append(parts, "close leaks")
		case c.Prompt != nil && c.Prompt.OK():
			parts = append(parts, "close keeps")
		default:
			parts = append(parts, "close frees")
		}
	}
	if len(parts) == 0 {
		return "no load/close"
	}
	return strings.Join(parts, ", ")
}

func loadText(l *report.SessionLoad) string {
	t := loadVerdict(l)
	if l.OK() {
		t += "; replay " + historyText(l.Replay)
	}
	if l.UpdatesAfter > 0 {
		t += fmt.Sprintf("; %d update(s) AFTER the answer", l.UpdatesAfter)
	}
	return t
}

// historyText says what a turn's updates carried: the user's message, the agent's text, the
// tool calls counted by kind and status.
func historyText(h report.SessionHistory) string {
	var parts []string
	if h.UserText {
		parts = append(parts, "user message")
	}
	if h.AgentText {
		parts = append(parts, "agent text")
	}
	if calls := toolCallsText(h.ToolCalls); calls != "" {
		parts = append(parts, calls)
	}
	return fmt.Sprintf("%d update(s): %s", h.Updates, orDash(strings.Join(parts, ", ")))
}
