package derive

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// mcpTruths derives, per sentinel MCP server the record says was offered (the mcp-sentinels
// event), how far the agent got with it: delivered in session/new, connected and listed (the
// sentinels' own events, folded by record.MCPMilestones.Advance as the probe's Hub does),
// visible to the model, asked for by it and its result returned (the model requests), called
// (the sentinel saw tools/call). Milestones after the model are null when no model request was
// made at all (no backend profile): not observed, not failed.
func mcpTruths(x *record.Index, frames []jsonrpc.Frame) []report.MCPTruth {
	var setup record.MCPSetup
	for _, f := range frames {
		if s, ok := record.MCPSentinels.Decode(f); ok {
			setup = s
		}
	}
	if len(setup.Sentinels) == 0 {
		return nil
	}
	miles := map[record.MCPTransport]*record.MCPMilestones{}
	tools := map[record.MCPTransport]string{}
	for _, s := range setup.Sentinels {
		miles[s.Transport], tools[s.Transport] = &record.MCPMilestones{}, s.Tool
	}
	for _, f := range x.Events(record.MCP.Kind) {
		if ev, ok := record.MCP.Decode(f); ok && miles[ev.Transport] != nil {
			miles[ev.Transport].Advance(ev, tools[ev.Transport])
		}
	}
	models := modelExchanges(x)
	caps := mcpCaps(x)
	delivered := deliveries(x, frames)
	var out []report.MCPTruth
	for _, s := range setup.Sentinels {
		m := miles[s.Transport]
		t := report.MCPTruth{Transport: string(s.Transport), Advertised: caps[s.Transport],
			Connected: flag(m.Has(record.MCPConnected)), Listed: flag(m.Has(record.MCPListed))}
		if m.ClientInfo != nil {
			t.Client = strings.TrimSpace(m.ClientInfo.Name + " " + m.ClientInfo.Version)
		}
		called := m.Has(record.MCPCalled)
		visible, asked, returned := models.sees(s)
		switch {
		case models.requests > 0:
			t.Visible, t.Asked, t.Called, t.Returned = flag(visible), flag(asked), flag(called), flag(returned)
		case called: // no model, yet the agent called the tool by itself
			t.Called = flag(true)
		}
		if d, ok := delivered[s.Name]; ok {
			t.Delivered, t.Error = flag(d.ok), d.refusal
			if !d.ok {
				t.Connected, t.Listed = nil, nil // refused: nothing further could be seen
			}
		}
		t.StoppedAt = stoppedAt(t)
		out = append(out, t)
	}
	return out
}

func flag(b bool) *bool { return &b }

// modelView is what the model requests and answers of a record say about MCP tools.
type modelView struct {
	requests int
	offered  []string // every tool name offered to the model
	found    []string // every tool a search result declared (an agent that defers its tools)
	results  []string // the content of every tool result the model was sent
	asked    []string // the tools the model asked for
}

func modelExchanges(x *record.Index) modelView {
	var v modelView
	for _, f := range x.Events(record.ModelRequest.Kind) {
		req, ok := record.ModelRequest.Decode(f)
		if !ok || req.Endpoint != "generate" {
			continue
		}
		v.requests++
		v.offered = append(v.offered, req.Tools...)
		for _, r := range req.ToolResults {
			v.results = append(v.results, r.Content)
			v.found = append(v.found, r.Found...)
		}
	}
	for _, f := range x.Events(record.ModelResponse.Kind) {
		if resp, ok := record.ModelResponse.Decode(f); ok && resp.Tool != "" {
			v.asked = append(v.asked, resp.Tool)
		}
	}
	return v
}

// sees reports whether the sentinel's tool was offered to the model (under any name that
// contains it: agents prefix an MCP server's tools) — in a request's tools, or, by an agent
// that defers it behind a search tool, in the result of the model's search —, asked for, and
// its result sent back.
func (v modelView) sees(s record.MCPSentinel) (visible, asked, returned bool) {
	has := func(list []string, sub string) bool {
		return slices.ContainsFunc(list, func(e string) bool { return strings.Contains(e, sub) })
	}
	return has(v.offered, s.Tool) || has(v.found, s.Tool), has(v.asked, s.Tool), has(v.results, s.Marker)
}

// mcpCaps are the MCP transports the agent advertises (stdio always).
func mcpCaps(x *record.Index) map[record.MCPTransport]bool {
	var initialize json.RawMessage
	if ex := x.First(acp.MethodInitialize); ex != nil && ex.Answer != nil {
		initialize = ex.Answer.Msg.Result
	}
	return record.AdvertisedTransports(initialize)
}

// deliveries says, per sentinel (by its mcpServers entry's name), whether the session/new of
// the scenario that carried it succeeded, and the refusal's message; a sentinel no answered
// session/new carried is absent. A record of a version that offered the sentinels in the
// probe's own session/new has none in the scenario's frames: that one carried them all.
func deliveries(x *record.Index, frames []jsonrpc.Frame) map[string]delivery {
	out := map[string]delivery{}
	carried := func(req jsonrpc.Frame, answer *jsonrpc.Frame) {
		if answer == nil {
			return
		}
		d := delivery{ok: answer.Msg.Err() == nil}
		if e := answer.Msg.Err(); e != nil {
			d.refusal = e.Message
		}
		for _, raw := range acp.ParseObject(req.Msg.Params).Array("mcpServers") {
			out[acp.ParseObject(raw).String("name")] = d
		}
	}
	for _, f := range frames {
		if isClientRequest(f, acp.MethodSessionNew) {
			a, ok := x.AnswerTo(f.Seq)
			if !ok {
				carried(f, nil)
				continue
			}
			carried(f, &a)
		}
	}
	if len(out) == 0 {
		if ex := x.First(acp.MethodSessionNew); ex != nil {
			carried(ex.Request, ex.Answer)
		}
	}
	return out
}

// delivery is what session/new said of the sentinel it carried.
type delivery struct {
	ok      bool
	refusal string
}

// stoppedAt is the first milestone seen false; "" when none was.
func stoppedAt(t report.MCPTruth) string {
	for i, b := range t.Milestones() {
		if b != nil && !*b {
			return report.MCPMilestones[i]
		}
	}
	return ""
}
