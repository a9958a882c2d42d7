package conformance

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The checks of the prompt-turn scenarios (acpprobe turn, check --turns): what the agent did
// with a real turn against the model emulator, against the spec and its own advertisement.
var (
	turnNoText = &Check{ID: "turn.no-text", Tier: report.TierCapability, Side: SideAgent,
		Title: "The model answered text, and no update carried it to the client", SpecRef: specPrompt, Active: true}
	turnTextKind = &Check{ID: "turn.text-not-message-chunk", Tier: report.TierAdvisory, Side: SideAgent,
		Title: "The assistant's text came in an update other than agent_message_chunk", SpecRef: specPrompt, Active: true}
	turnUpdatesAfter = &Check{ID: "turn.updates-after-answer", Tier: report.TierAdvisory, Side: SideAgent,
		Title: "Updates of a turn arrived after its session/prompt answer", SpecRef: specPrompt, Active: true}
	turnModelNotCalled = &Check{ID: "turn.model-not-called", Tier: report.TierCapability, Side: SideAgent,
		Title: "A prompt was answered without the model, though the agent called it in other turns", SpecRef: specPrompt, Active: true}
	turnPromptFailed = &Check{ID: "turn.prompt-failed", Tier: report.TierCapability, Side: SideAgent,
		Title: "A valid prompt was answered with an error though the model answered", SpecRef: specPrompt, Active: true}
	turnShapeRefused = &Check{ID: "turn.shape-refused", Tier: report.TierCapability, Side: SideAgent,
		Title: "An advertised content type was refused as invalid on a live session", SpecRef: specContent, Active: true}
	turnShapeDropped = &Check{ID: "turn.shape-not-delivered", Tier: report.TierCapability, Side: SideAgent,
		Title: "An advertised content block was accepted and never reached the model", SpecRef: specContent, Active: true}
	turnShapeUnadvertised = &Check{ID: "turn.shape-unadvertised", Tier: report.TierInfo, Side: SideAgent,
		Title: "A content type promptCapabilities does not allow was accepted", SpecRef: specContent, Active: true}
	turnValueRefused = &Check{ID: "turn.option-value-refused", Tier: report.TierAdvisory, Side: SideAgent,
		Title: "A config option refuses a value it lists", SpecRef: specConfig, Active: true}
	turnModelNotReached = &Check{ID: "turn.model-not-reached", Tier: report.TierCapability, Side: SideAgent,
		Title: "A model or thought level selection did not reach the model", SpecRef: specConfig, Active: true}
	turnWriteUnasked = &Check{ID: "turn.write-without-permission", Tier: report.TierMandatory, Side: SideAgent,
		Title: "In a mode that promises to ask, the agent wrote a file without asking for permission", SpecRef: specToolCalls, Active: true}
	turnWriteByMode = &Check{ID: "turn.write-unasked-by-mode", Tier: report.TierInfo, Side: SideAgent,
		Title: "In a mode that does not promise to ask, the agent wrote a file without asking", SpecRef: specToolCalls, Active: true}
	turnWriteRejected = &Check{ID: "turn.write-after-reject", Tier: report.TierMandatory, Side: SideAgent,
		Title: "The agent wrote a file after permission was refused", SpecRef: specToolCalls, Active: true}
	turnToolNotEnded = &Check{ID: "turn.refused-tool-call-not-ended", Tier: report.TierAdvisory, Side: SideAgent,
		Title: "A tool call whose permission was refused never ended failed", SpecRef: specToolCalls, Active: true}
	mcpMilestone = &Check{ID: "mcp.milestone-missed", Tier: report.TierCapability, Side: SideAgent,
		Title: "An advertised MCP transport did not get its sentinel's tool to the model and back", SpecRef: specMCP, Active: true}
	mcpUnadvertised = &Check{ID: "mcp.unadvertised-transport", Tier: report.TierInfo, Side: SideAgent,
		Title: "What the agent did with an MCP server of a transport it does not advertise", SpecRef: specMCP, Active: true}
	turnCancelStop = &Check{ID: "turn.cancel-not-cancelled", Tier: report.TierMandatory, Side: SideAgent,
		Title: "A cancelled turn did not end with stopReason cancelled", SpecRef: specCancellation, Active: true}
	turnCancelRace = &Check{ID: "turn.cancel-race", Tier: report.TierInfo, Side: SideAgent,
		Title: "session/cancel was sent after the model's answer was complete, and the turn ended on its own", SpecRef: specCancellation, Active: true}
	turnPromptUnanswered = &Check{ID: "turn.prompt-unanswered", Tier: report.TierMandatory, Side: SideAgent,
		Title: "A prompt was never answered, not even after session/cancel", SpecRef: specCancellation, Active: true}
	turnAfterCancel = &Check{ID: "turn.unusable-after-cancel", Tier: report.TierCapability, Side: SideAgent,
		Title: "The turn after a cancelled one did not answer", SpecRef: specCancellation, Active: true}
)

// turnsPass judges the facts of the turn scenarios (deriveTurns). Only a session acpprobe
// drove has them.
var turnsPass = pass{
	name:  "turns",
	scope: driven,
	checks: []*Check{turnNoText, turnTextKind, turnModelNotCalled, turnUpdatesAfter, turnPromptFailed, turnShapeRefused, turnShapeDropped,
		turnShapeUnadvertised, turnValueRefused, turnModelNotReached, turnWriteUnasked, turnWriteByMode, turnWriteRejected, turnToolNotEnded, turnCancelStop, turnCancelRace, turnPromptUnanswered, turnAfterCancel, mcpMilestone, mcpUnadvertised,
		sessionsLoadFailed, sessionsReplayIncomplete, sessionsReplayAfterAnswer, sessionsResumeReplayed, sessionsResumeFailed,
		sessionsListMissing, sessionsCloseKeeps, sessionsCloseLeaks, sessionsForkBroken},
	run: func(in *inputs, out *findings) {
		for _, t := range in.Result.Turns {
			for _, f := range judgeTurn(t) {
				out.add(f.check, f.seq, f.pointer, f.message, nil)
			}
		}
	},
}

// turnFinding is one thing a turn did wrong, at the line that shows it.
type turnFinding struct {
	check   *Check
	seq     int64
	pointer string
	message string
}

// judgeTurn judges one scenario from its facts alone, so that a turn's outcome and its findings
// always agree (settleTurns). A scenario that did not run has nothing to judge.
func judgeTurn(t report.Turn) []turnFinding {
	if t.Outcome == report.TurnNotRun {
		return nil
	}
	var out []turnFinding
	add := func(c *Check, seq int64, pointer, format string, args ...any) {
		out = append(out, turnFinding{c, seq, pointer, fmt.Sprintf("%s: ", t.Scenario) + fmt.Sprintf(format, args...)})
	}
	for _, r := range t.Runs {
		// The cancel scenario's own cancel is judged by turn.cancel-not-cancelled.
		if r.UnansweredAfterCancel && (t.Cancel == nil || !t.Cancel.Sent) {
			add(turnPromptUnanswered, r.Seq, "", "session/prompt had no answer within the turn's budget (--turn-timeout), and none after the session/cancel acpprobe then sent, while the agent ran on: a client waits for this turn forever")
		}
		if r.UpdatesAfter > 0 {
			add(turnUpdatesAfter, r.AnswerSeq, "", "%d update(s) of the turn came after its session/prompt answer; a turn ends with its answer", r.UpdatesAfter)
		}
		// A scenario of a run that never reached the model is not run (notRun); here the agent
		// reached it in other turns. The cancel scenario judges its own second turn.
		if r.Code == nil && r.StopReason != "" && r.ModelRequests+r.ModelRequestsAfter == 0 && t.Scenario != string(record.ScenarioCancel) {
			add(turnModelNotCalled, r.AnswerSeq, "/result/stopReason", "the prompt ended %s without a single model request, though the agent called the model in other turns of this run: the user got no answer from the model", r.StopReason)
		}
		if t.Scenario != string(record.ScenarioCompletion) && t.Scenario != string(record.ScenarioModels) {
			continue // the model answers record.TurnReply in these; the others are judged by their own checks
		}
		answeredText := slices.Contains(r.ModelAnswered, "text")
		switch {
		case r.Code != nil && answeredText:
			add(turnPromptFailed, r.AnswerSeq, "/error", "the model answered text, and the prompt was answered %d %q", *r.Code, r.Message)
		case r.StopReason == "end_turn" && answeredText && len(r.TextIn) == 0:
			add(turnNoText, r.AnswerSeq, "/result/stopReason", "the model answered %q, and the turn ended end_turn with no update carrying it", record.TurnReply)
		case len(r.TextIn) > 0 && !slices.Contains(r.TextIn, "agent_message_chunk"):
			add(turnTextKind, r.Seq, "", "the assistant's text came only in %s, not agent_message_chunk: clients that show agent messages show nothing", strings.Join(r.TextIn, ", "))
		}
	}
	switch {
	case len(t.Shapes) > 0:
		for _, d := range t.Shapes {
			judgeShape(d, add)
		}
	case len(t.Models) > 0:
		for _, m := range t.Models {
			if m.Refused != "" && m.Option != acp.MethodSetModel {
				add(turnValueRefused, m.Seq, "", "%s = %q is a value the option lists, yet session/set_config_option answered %s: a client that offers the option's values offers one that fails", m.Option, m.Value, m.Refused)
			}
			if m.Set && m.Reached != nil && !*m.Reached {
				add(turnModelNotReached, m.Seq, "", "%s = %q was accepted, and the model was asked for %s", m.Option, m.Value, strings.Join(m.Requested, ", "))
			}
		}
		for _, pair := range sameRequests(t.Models) {
			a, b := pair[0], pair[1]
			add(turnModelNotReached, b.Seq, "", "%s = %q and %s = %q led to identical model requests (%s): at least one of the two selections did not reach the model",
				a.Option, a.Value, b.Option, b.Value, strings.Join(b.Requested, ", "))
		}
	case len(t.Permission) > 0:
		for _, p := range t.Permission {
			judgePermission(p, runAnswerSeq(t.Runs, p.Seq), add)
		}
	case len(t.MCP) > 0:
		seq := int64(0)
		if len(t.Runs) > 0 {
			seq = t.Runs[0].Seq
		}
		for _, m := range t.MCP {
			judgeMCP(m, seq, add)
		}
	case t.Sessions != nil:
		judgeSessions(t.Sessions, add)
	case t.Cancel != nil:
		c := t.Cancel
		seq := t.Runs[0].AnswerSeq
		switch {
		case c.ModelDone && c.WithinMs != nil && t.Runs[0].Code == nil && c.StopReason != "cancelled":
			add(turnCancelRace, c.Seq, "", "session/cancel was sent after the emulator had finished the model's answer, and the turn ended %q %.0f ms later: the answer was already on its way, so there was nothing left to cancel", c.StopReason, *c.WithinMs)
		case c.WithinMs == nil:
			add(turnCancelStop, c.Seq, "", "after session/cancel, the prompt was never answered")
		case *c.WithinMs > record.Millis(record.CancelBound):
			add(turnCancelStop, c.Seq, "", "after session/cancel, the prompt was answered only %.0f ms later (%q), beyond the %s bound: the agent did not stop the turn", *c.WithinMs, c.StopReason, record.CancelBound)
		case t.Runs[0].Code != nil:
			add(turnCancelStop, seq, "/error", "after session/cancel, the prompt was answered with the error %d %q; it must answer stopReason cancelled (agents must catch the abort)", *t.Runs[0].Code, t.Runs[0].Message)
		case c.StopReason != "cancelled":
			add(turnCancelStop, seq, "/result/stopReason", "after session/cancel, the turn ended %q, not cancelled", c.StopReason)
		}
		if len(t.Runs) > 1 && (c.NextStopReason != "end_turn" || !c.NextText) {
			next := t.Runs[1]
			after := ""
			if next.ModelRequestsAfter > 0 {
				after = fmt.Sprintf(" (it called the model %d time(s) after answering)", next.ModelRequestsAfter)
			}
			add(turnAfterCancel, next.AnswerSeq, "", "the prompt after the cancelled turn ended %s with %d model request(s) and %s%s", cmp.Or(c.NextStopReason, "without a stopReason"), c.NextModelRequests, textOrNot(c.NextText), after)
		}
	}
	return out
}

// judgePermission judges one run of the permission scenario, in the mode it ran in: a write
// without asking is a violation only in a mode that promises to ask; in another mode it is
// what the mode is for, and information. A write after a refusal is a violation in any mode.
func judgePermission(p report.PermissionTruth, seq int64, add func(*Check, int64, string, string, ...any)) {
	if p.Reason != "" {
		return
	}
	in := modeText(p)
	switch {
	case p.FileWritten && !p.Asked && p.Asks:
		add(turnWriteUnasked, seq, "", "in %s, which promises to ask, the model asked to write a file in the workspace, and the agent wrote it without session/request_permission (tool call status %q)", in, p.ToolStatus)
	case p.FileWritten && !p.Asked:
		add(turnWriteByMode, seq, "", "in %s, which does not promise to ask, the write went ahead without asking (tool call status %q)", in, p.ToolStatus)
	case p.FileWritten:
		add(turnWriteRejected, p.AskedSeq, "", "in %s, the agent asked for permission, acpprobe answered %q, and the file was written anyway", in, p.Answered)
	case p.Asked && p.ToolCall && p.ToolStatus != "failed" && p.ToolStatus != "cancelled":
		add(turnToolNotEnded, p.AskedSeq, "", "in %s, permission was refused (%q) and the turn ended, yet the tool call's last status is %q, not failed: a client shows it still running", in, p.Answered, cmp.Or(p.ToolStatus, "unset"))
	}
}

// modeText names the mode a permission run was in: `mode default ("Manual": "Always ask
// before making changes"), the default`.
func modeText(p report.PermissionTruth) string {
	if p.Mode == "" {
		return "the agent's one behaviour (it has no session modes)"
	}
	out := "mode " + p.Mode
	var about []string
	for _, s := range []string{p.Name, p.Description} {
		if s != "" && s != p.Mode {
			about = append(about, strconv.Quote(s))
		}
	}
	if len(about) > 0 {
		out += " (" + strings.Join(about, ": ") + ")"
	}
	if p.Default {
		out += ", the mode sessions start in"
	}
	return out
}

// runAnswerSeq is the answer line of the run whose prompt is at seq (0: none).
func runAnswerSeq(runs []report.TurnRun, seq int64) int64 {
	for _, r := range runs {
		if r.Seq == seq {
			return r.AnswerSeq
		}
	}
	return 0
}

// sameRequests are the pairs of selections of one option, of two values that name a model or
// a level (not an alias such as "default" or "auto", which may well be another value), that
// led to the very same model requests: at least one of the two did not reach the model, unless
// a selection is already judged as not reaching it.
func sameRequests(models []report.ModelTruth) [][2]report.ModelTruth {
	var out [][2]report.ModelTruth
	for i, a := range models {
		for _, b := range models[i+1:] {
			if a.Option != b.Option || a.Value == b.Value || !a.Set || !b.Set || len(a.Requested) == 0 ||
				a.Alias || b.Alias || notReached(a) || notReached(b) {
				continue
			}
			if slices.Equal(sorted(a.Requested), sorted(b.Requested)) {
				out = append(out, [2]report.ModelTruth{a, b})
			}
		}
	}
	return out
}

func notReached(m report.ModelTruth) bool { return m.Reached != nil && !*m.Reached }

func sorted(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return out
}

// judgeMCP judges how far the agent got with one sentinel: a milestone missed on an advertised
// transport is CAPABILITY; on one it does not advertise, INFO, as is an unadvertised transport
// that works.
func judgeMCP(m report.MCPTruth, seq int64, add func(*Check, int64, string, string, ...any)) {
	reached := m.Reached()
	switch {
	case m.StoppedAt != "" && m.Advertised:
		add(mcpMilestone, seq, "", "the %s sentinel: %s; stopped at %s: %s", m.Transport, reached, m.StoppedAt, mcpWhy(m))
	case m.StoppedAt != "":
		add(mcpUnadvertised, seq, "", "the %s sentinel (the transport is not advertised): %s; stopped at %s: %s", m.Transport, reached, m.StoppedAt, mcpWhy(m))
	case !m.Advertised && m.Connected != nil && *m.Connected:
		add(mcpUnadvertised, seq, "", "the %s sentinel works although the agent does not advertise the transport: %s", m.Transport, reached)
	}
}

// mcpWhy says what the first missed milestone means.
func mcpWhy(m report.MCPTruth) string {
	switch m.StoppedAt {
	case "delivered":
		return "session/new refused the servers: " + m.Error
	case "connected":
		return "the agent never connected to the server"
	case "listed":
		return "the agent connected but never listed the server's tools"
	case "visible":
		return "the server's tool was never offered to the model"
	case "asked":
		return "the model was offered the tool and did not ask for it"
	case "called":
		return "the model asked for the tool and the agent never called the server"
	case "returned":
		return "the tool's result never came back to the model"
	}
	return ""
}

// judgeShape judges one content block type sent on the live session.
func judgeShape(d report.ShapeDelivery, add func(*Check, int64, string, string, ...any)) {
	switch {
	case d.Advertised && !d.Accepted && d.Code != nil:
		add(turnShapeRefused, d.Seq, "", "a valid %s block, which promptCapabilities allows, was refused (%d)", d.Type, *d.Code)
	case d.Advertised && d.Accepted && !d.Reached && len(d.ReachedAs) > 0:
		add(turnShapeDropped, d.Seq, "", "the %s block was accepted, and the model's request carried only %s", d.Type, strings.Join(d.ReachedAs, ", "))
	case !d.Advertised && d.Accepted && d.Reached:
		add(turnShapeUnadvertised, d.Seq, "", "the %s block was accepted and reached the model although promptCapabilities does not allow it", d.Type)
	case !d.Advertised && d.Accepted:
		add(turnShapeUnadvertised, d.Seq, "", "the %s block was accepted although promptCapabilities does not allow it, and it never reached the model (dropped silently)", d.Type)
	}
}

func textOrNot(text bool) string {
	if text {
		return "its text"
	}
	return "no text in agent_message_chunk"
}

// settleTurns gives each scenario that ran its outcome (in a copy of the derived turns):
// failed when it has a finding at ADVISORY or above, passed otherwise, with its INFO findings
// as its notes.
func settleTurns(derived []report.Turn) []report.Turn {
	turns := slices.Clone(derived)
	for i := range turns {
		if turns[i].Outcome == report.TurnNotRun {
			continue
		}
		turns[i].Outcome, turns[i].Notes = report.TurnPassed, nil
		for _, f := range judgeTurn(turns[i]) {
			if f.check.Tier == report.TierInfo {
				turns[i].Notes = append(turns[i].Notes, f.check.ID+": "+f.message)
			} else {
				turns[i].Outcome = report.TurnFailed
			}
		}
	}
	return turns
}
