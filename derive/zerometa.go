package derive

import (
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// zeroMetaMethods are the steps of the standard plane the zero-_meta contract covers: a client
// that sends no vendor _meta must get through them (seed 001's contract, for every agent).
var zeroMetaMethods = []string{acp.MethodInitialize, acp.MethodSessionNew, acp.MethodSessionPrompt}

// zeroMeta reads, from the connections acpprobe drove (parts), each standard-plane request it
// sent without any _meta and how it was answered, and whether that shows the contract held: an
// initialize, a session/new and a session/prompt (answered with a stopReason) without _meta
// all worked. An error answer that names missing metadata (cat.MetadataDemand) breaks it. In a
// tapped session the client is the editor, and the steps are its requests.
func zeroMeta(parts []Part, cat *extensions.Catalogue) *report.ZeroMeta {
	z := &report.ZeroMeta{Steps: []report.ZeroMetaStep{}}
	worked := map[string]bool{}
	for _, p := range parts {
		live := map[string]bool{} // the sessions the agent made on this connection
		for _, f := range p.Frames {
			if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Kind() != jsonrpc.Request || !slices.Contains(zeroMetaMethods, f.Msg.Method) {
				continue
			}
			if strings.Contains(string(f.Msg.Params), `"_meta"`) {
				continue // the client sent _meta: not the zero-_meta plane
			}
			if f.Msg.Method == acp.MethodSessionPrompt && !live[acp.ParseObject(f.Msg.Params).String("sessionId")] {
				continue // a prompt to no session of the agent's (check's prompt shapes): no step of the plane
			}
			step := report.ZeroMetaStep{Method: f.Msg.Method, Seq: f.Seq}
			a, ok := p.X.AnswerTo(f.Seq)
			switch {
			case !ok:
				step.Outcome = "unanswered"
			case a.Msg.Err() != nil:
				e := a.Msg.Err()
				step.AnswerSeq, step.Outcome, step.Error = a.Seq, "error", e.Message
				if key, demands := cat.MetadataDemand(e.Message + " " + string(e.Data)); demands {
					step.Demands = key
				}
			case f.Msg.Method == acp.MethodSessionPrompt && acp.ParseObject(a.Msg.Result).String("stopReason") == "":
				step.AnswerSeq, step.Outcome = a.Seq, "no stopReason"
			default:
				step.AnswerSeq, step.Outcome = a.Seq, "ok"
				worked[f.Msg.Method] = true
				if f.Msg.Method == acp.MethodSessionNew {
					live[acp.ParseObject(a.Msg.Result).String("sessionId")] = true
				}
			}
			z.Steps = append(z.Steps, step)
		}
	}
	for _, s := range z.Steps {
		if s.Demands != "" {
			z.Outcome, z.Reason = report.ZeroMetaBroken, s.Method+" without _meta was refused for lack of "+s.Demands
			return z
		}
	}
	z.Outcome = report.ZeroMetaHeld
	for _, m := range zeroMetaMethods {
		if !worked[m] {
			z.Outcome = report.ZeroMetaUnverified
			z.Reason = "no " + m + " without _meta succeeded"
			if m == acp.MethodSessionPrompt {
				z.Reason += " (a prompt turn shows it: check --turns, or acpprobe turn)"
			}
			break
		}
	}
	return z
}
