package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The checks of the prompt steps: --prompt-shapes and --allow-prompt.
var (
	promptShapeAccepted     = &Check{ID: "prompt.shape-accepted", Tier: report.TierAdvisory, Side: SideAgent, Title: "A malformed prompt shape passed validation", SpecRef: specPrompt, Active: true}
	capabilityPromptContent = &Check{ID: "capability.prompt-content", Tier: report.TierInfo, Side: SideAgent, Title: "Prompt validator accepts content that promptCapabilities does not advertise", SpecRef: specContent, Active: true}
	capabilityPromptMissing = &Check{ID: "capability.prompt-content-missing", Tier: report.TierCapability, Side: SideAgent, Title: "Advertised prompt content that the prompt validator does not accept", SpecRef: specContent, Active: true}
	promptNoStopReason      = &Check{ID: "prompt.no-stop-reason", Tier: report.TierAdvisory, Side: SideAgent, Title: "A cancelled prompt did not end with stopReason cancelled", SpecRef: specPrompt, Active: true}
)

// promptPass reads the prompt shapes (shapeFacts: the probes' outcomes, the inferred
// branches, the allowed prompt's answer) and the advertised promptCapabilities. Only a session
// acpprobe drove has these steps.
var promptPass = pass{
	name:   "prompt shapes",
	scope:  driven,
	checks: []*Check{promptShapeAccepted, capabilityPromptContent, capabilityPromptMissing, promptNoStopReason},
	run:    runPrompt,
}

func runPrompt(in *inputs, out *findings) {
	ps := in.Result.PromptShapes
	if ps == nil {
		return
	}
	malformed := map[string]bool{}
	for _, sh := range record.PromptShapes {
		malformed[sh.Name] = !sh.Control
	}
	for _, p := range ps.Probes {
		if malformed[p.Name] && p.Outcome == report.ShapeAccepted {
			out.add(promptShapeAccepted, p.Seq, "/params/prompt", fmt.Sprintf("the malformed prompt shape %q passed validation (answer: %s); the agent's validator is lax", p.Name, p.Answer), nil)
		}
	}
	comparePromptCapabilities(in, out, ps)
	if a := in.PromptAnswer; a != nil {
		if rpcErr := a.Msg.Err(); rpcErr != nil {
			out.add(promptNoStopReason, a.Seq, "/error", fmt.Sprintf("the cancelled prompt was answered with error %d %q; a cancelled turn must end with stopReason cancelled", rpcErr.Code, rpcErr.Message), nil)
		} else if stop := ps.Prompt.StopReason; stop != "cancelled" && stop != "end_turn" {
			out.add(promptNoStopReason, a.Seq, "/result/stopReason", fmt.Sprintf("the prompt, cancelled at once, ended with stopReason %q instead of cancelled", stop), nil)
		}
	}
}

// comparePromptCapabilities sets the content types the validator accepts against the ones
// the agent advertises.
func comparePromptCapabilities(in *inputs, out *findings, ps *report.PromptShapes) {
	if len(ps.InferredBranches) == 0 {
		return
	}
	accepts := map[string]bool{}
	for _, b := range ps.InferredBranches {
		accepts[b.Type] = true
	}
	c := in.Result.Capabilities.PromptCapabilities
	for _, x := range []struct {
		kind       string
		advertised bool
		flag       string
	}{{"image", c.Image, "image"}, {"audio", c.Audio, "audio"}, {"resource", c.EmbeddedContext, "embeddedContext"}} {
		switch {
		case accepts[x.kind] && !x.advertised:
			out.add(capabilityPromptContent, 0, "", fmt.Sprintf("the prompt validator accepts %s blocks although promptCapabilities.%s is false; clients must not send them", x.kind, x.flag), nil)
		case !accepts[x.kind] && x.advertised:
			out.add(capabilityPromptMissing, 0, "", fmt.Sprintf("promptCapabilities.%s is true but the prompt validator lists no %s branch (%v)", x.flag, x.kind, typesOf(ps.InferredBranches)), nil)
		}
	}
}

func typesOf(bs []report.ShapeBranch) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Type)
	}
	return out
}
