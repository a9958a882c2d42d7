package render

import (
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// turnsText writes the Turns section: each prompt-turn scenario, its outcome and what it
// showed, in a sentence a user reads without the JSON.
func turnsText(t *textWriter, turns []report.Turn) {
	if len(turns) == 0 {
		return
	}
	t.section("Turns (real prompt turns, loopback model, zero tokens)")
	for _, tr := range turns {
		t.kv(tr.Scenario, TurnSummary(tr))
		for _, d := range turnDetails(tr) {
			t.kv("  "+d[0], d[1])
		}
	}
}

// TurnSummary says in one line how a scenario came out and what it showed: the outcome, then
// the facts a user asks about (where the text came, whether permission was asked, how cancel
// ended).
func TurnSummary(tr report.Turn) string {
	facts := turnFacts(tr)
	if facts == "" {
		return string(tr.Outcome)
	}
	return string(tr.Outcome) + " — " + facts
}

// turnFacts is what a scenario showed (for one that did not run: why).
func turnFacts(tr report.Turn) string {
	if tr.Outcome == report.TurnNotRun {
		return tr.Reason
	}
	facts := ""
	switch {
	case len(tr.Permission) > 0:
		facts = permissionLabel(tr.Permission[0]) + ": " + permissionText(tr.Permission[0])
		if len(tr.Permission) > 1 {
			facts = fmt.Sprintf("%d runs, each on a fresh agent process:", len(tr.Permission))
		}
	case tr.Cancel != nil:
		facts = cancelText(tr.Cancel)
	case tr.Sessions != nil:
		facts = sessionsText(tr.Sessions)
	case len(tr.Runs) > 0 && tr.Scenario == string(record.ScenarioCompletion):
		facts = runText(tr.Runs[0])
	case len(tr.Models) > 0:
		facts = fmt.Sprintf("%d selection(s)", len(tr.Models))
	case len(tr.Shapes) > 0:
		facts = fmt.Sprintf("%d content type(s)", len(tr.Shapes))
	case len(tr.MCP) > 0:
		facts = fmt.Sprintf("%d sentinel MCP server(s)", len(tr.MCP))
	}
	return facts
}

// turnDetails are a scenario's lines beyond its summary: each content type, each selection.
func turnDetails(tr report.Turn) [][2]string {
	var out [][2]string
	for _, d := range tr.Shapes {
		out = append(out, [2]string{d.Type, shapeText(d)})
	}
	for _, m := range tr.Models {
		out = append(out, [2]string{m.Option + " = " + m.Value, modelText(m)})
	}
	for _, m := range tr.MCP {
		out = append(out, [2]string{m.Transport, mcpText(m)})
	}
	if len(tr.Permission) > 1 {
		for _, p := range tr.Permission {
			out = append(out, [2]string{permissionLabel(p), permissionText(p)})
		}
	}
	for _, n := range tr.Notes {
		out = append(out, [2]string{"note", n})
	}
	if tr.Sessions != nil && tr.Outcome != report.TurnNotRun {
		out = append(out, sessionsDetails(tr.Sessions)...)
	}
	return out
}

// mcpText says how far the agent got with one sentinel, and where it stopped.
func mcpText(m report.MCPTruth) string {
	s := m.Reached()
	if !m.Advertised {
		s = "not advertised; " + s
	}
	if m.Client != "" {
		s += "; client " + m.Client
	}
	if m.StoppedAt != "" {
		s += "; STOPPED AT " + m.StoppedAt
	}
	return s
}

// mcpFurthest is the last milestone an MCPTruth reached in a row ("none" when not even
// delivered).
func mcpFurthest(m report.MCPTruth) string {
	last := "none"
	for i, b := range []*bool{m.Delivered, m.Connected, m.Listed, m.Visible, m.Asked, m.Called, m.Returned} {
		if b == nil || !*b {
			break
		}
		last = mcpStageNames[i]
	}
	return last
}

// mcpStageNames are the MCP milestones in order, as the matrix names them.
var mcpStageNames = []string{"delivered", "connected", "listed", "visible", "asked", "called", "returned"}

// TurnCell is a scenario in a matrix cell: its outcome and the one fact that matters most, or
// "?" when the scenario was not part of the run.
func TurnCell(r *report.Result, s record.Scenario) string {
	if r == nil {
		return NotKnown
	}
	for _, tr := range r.Turns {
		if tr.Scenario != string(s) {
			continue
		}
		if tr.Outcome == report.TurnNotRun {
			return "not run"
		}
		fact := ""
		switch {
		case len(tr.Permission) > 0 && tr.Permission[0].FileWritten:
			fact = "wrote the file"
		case len(tr.Permission) > 0 && tr.Permission[0].Asked:
			fact = "asked"
		case len(tr.Permission) > 0:
			fact = "not asked"
		case tr.Cancel != nil:
			fact = orDash(tr.Cancel.StopReason)
		case tr.Sessions != nil:
			fact = sessionsCell(tr.Sessions)
		case len(tr.MCP) > 0:
			var parts []string
			for _, m := range tr.MCP {
				parts = append(parts, m.Transport+" "+mcpFurthest(m))
			}
			fact = strings.Join(parts, ", ")
		case len(tr.Models) > 0:
			n := 0
			for _, m := range tr.Models {
				if m.Reached != nil && *m.Reached {
					n++
				}
			}
			fact = fmt.Sprintf("%d/%d reached", n, len(tr.Models))
		case len(tr.Runs) > 0:
			fact = strings.Join(tr.Runs[0].TextIn, ", ")
			if fact == "" {
				fact = "no text"
			}
		}
		return fmt.Sprintf("%s (%s)", tr.Outcome, fact)
	}
	return NotKnown
}

// runText describes one prompt: where the text came, how the turn ended and how long it took,
// what else came (its tool calls counted by kind and status), and what reached the model.
func runText(r report.TurnRun) string {
	var parts []string
	switch {
	case len(r.TextIn) > 0:
		parts = append(parts, "text in "+strings.Join(r.TextIn, ", "))
	default:
		parts = append(parts, "no text delivered")
	}
	switch {
	case r.Code != nil:
		parts = append(parts, fmt.Sprintf("answered %d %s in %.0f ms", *r.Code, r.Message, r.Ms))
	case r.AnswerSeq != 0:
		end := fmt.Sprintf("%s in %.0f ms", orDash(r.StopReason), r.Ms)
		if r.FirstChunkMs != nil {
			end += fmt.Sprintf(" (first chunk %.0f ms)", *r.FirstChunkMs)
		}
		parts = append(parts, end)
	default:
		parts = append(parts, "no answer")
	}
	if r.ThoughtChunks > 0 {
		parts = append(parts, fmt.Sprintf("%d thought chunk(s)", r.ThoughtChunks))
	}
	if calls := toolCallsText(r.ToolCalls); calls != "" {
		parts = append(parts, calls)
	}
	if r.Usage {
		parts = append(parts, "usage_update")
	}
	if r.UpdatesAfter > 0 {
		parts = append(parts, fmt.Sprintf("%d update(s) after the answer", r.UpdatesAfter))
	}
	models := fmt.Sprintf("%d model request(s)", r.ModelRequests)
	if len(r.Models) > 0 {
		models += " (" + foldList(r.Models, listMax, ", ") + ")"
	}
	if r.ModelRequestsAfter > 0 {
		models += fmt.Sprintf(", %d after the answer", r.ModelRequestsAfter)
	}
	return strings.Join(append(parts, models), ", ")
}

func shapeText(d report.ShapeDelivery) string {
	adv := "advertised"
	if !d.Advertised {
		adv = "not advertised"
	}
	switch {
	case !d.Accepted && d.Code != nil:
		return fmt.Sprintf("%s, refused (%d)", adv, *d.Code)
	case !d.Accepted:
		return adv + ", no answer"
	case d.Reached:
		return adv + ", accepted, reached the model"
	case len(d.ReachedAs) > 0:
		return fmt.Sprintf("%s, accepted, never reached the model (it got %s)", adv, strings.Join(d.ReachedAs, ", "))
	}
	return adv + ", accepted, no model request"
}

func modelText(m report.ModelTruth) string {
	if !m.Set {
		return "selection refused"
	}
	asked := strings.Join(m.Requested, ", ")
	switch {
	case m.Reached == nil && asked == "":
		return "set; no model request"
	case m.Reached == nil:
		return "set; the model was asked for " + asked + " (nothing tells whether that is this value)"
	case *m.Reached:
		return "reached the model (" + asked + ")"
	}
	return "set, but the model was asked for " + asked
}

// permissionLabel names one permission run: its mode and how acpprobe answered.
func permissionLabel(p report.PermissionTruth) string {
	mode := "no modes"
	if p.Mode != "" {
		mode = "mode " + p.Mode
		if p.Asks {
			mode += " (asks)"
		}
	}
	return mode + ", " + string(p.Answer)
}

func permissionText(p report.PermissionTruth) string {
	if p.Reason != "" {
		return "not run — " + p.Reason
	}
	var parts []string
	if p.Asked {
		parts = append(parts, "asked (session/request_permission), answered "+orDash(p.Answered))
	} else {
		parts = append(parts, "never asked")
	}
	if p.ToolStatus != "" {
		parts = append(parts, "tool call "+p.ToolStatus)
	}
	if p.FileWritten {
		parts = append(parts, "THE FILE WAS WRITTEN")
	} else {
		parts = append(parts, "file not written")
	}
	return strings.Join(parts, ", ")
}

func cancelText(c *report.CancelTruth) string {
	var s string
	switch {
	case c.WithinMs == nil:
		s = "no answer after session/cancel"
	default:
		s = fmt.Sprintf("ended %s %.0f ms after session/cancel", orDash(c.StopReason), *c.WithinMs)
	}
	if c.UpdatesAfter > 0 {
		s += fmt.Sprintf(", %d update(s) after the answer", c.UpdatesAfter)
	}
	switch {
	case c.NextStopReason == "" && !c.NextText && c.NextModelRequests == 0:
	case c.NextText:
		s += "; the next turn answered with text"
	default:
		s += fmt.Sprintf("; the next turn ended %s with %d model request(s) and no text", orDash(c.NextStopReason), c.NextModelRequests)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return None
	}
	return s
}
