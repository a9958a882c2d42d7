package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/report"
)

// The capability-truth checks: what the agent advertises against what its methods answer to
// the probe's method detection.
var (
	capabilityAdvertisedUnsupported = &Check{ID: "capability.advertised-unsupported", Tier: report.TierCapability, Side: SideAgent, Title: "Advertised capability whose method is not implemented", SpecRef: specInit}
	capabilityUnadvertisedMethod    = &Check{ID: "capability.unadvertised-method", Tier: report.TierInfo, Side: SideAgent, Title: "Method implemented without being advertised", SpecRef: specInit}
	capabilityLegacyMethod          = &Check{ID: "capability.legacy-method", Tier: report.TierInfo, Side: SideAgent, Title: "Legacy method removed from ACP still implemented (session/set_model, session/stop)", SpecRef: specConfig}
	protocolInvalidParamsAccepted   = &Check{ID: "protocol.invalid-params-accepted", Tier: report.TierAdvisory, Side: SideAgent, Title: "Method answered params no handler can accept with a result", SpecRef: specJSONRPC}
)

// capabilityPass reads the derived capabilities and method support (how each was decided),
// whether method detection can be trusted (detection), and the detection requests. It judges
// the probe's own method-detection exchanges, so it applies only to sessions acpprobe drove:
// in a tapped session the methods were called by the editor, for its own reasons.
var capabilityPass = pass{
	name:   "capability truth",
	scope:  driven,
	checks: []*Check{capabilityAdvertisedUnsupported, capabilityUnadvertisedMethod, capabilityLegacyMethod, protocolInvalidParamsAccepted},
	run:    runCapability,
}

func runCapability(in *inputs, out *findings) {
	r := in.Result
	if string(r.Raw.Initialize) == "null" {
		return
	}
	unsure := in.Detection.Unreliable()
	c := r.Capabilities
	sessionKnown := string(r.Raw.NewSession) != "null"
	pairs := []struct {
		method     string
		advertised bool
		what       string
		judge      bool // whether absence of the advertisement can be judged
	}{
		{acp.MethodSessionLoad, c.LoadSession, "agentCapabilities.loadSession", true},
		{acp.MethodSessionList, c.SessionCapabilities.List, "sessionCapabilities.list", true},
		{acp.MethodSessionResume, c.SessionCapabilities.Resume, "sessionCapabilities.resume", true},
		{acp.MethodSessionClose, c.SessionCapabilities.Close, "sessionCapabilities.close", true},
		{acp.MethodSessionFork, c.SessionCapabilities.Fork, "sessionCapabilities.fork (unstable)", true},
		{acp.MethodSessionDelete, c.SessionCapabilities.Delete, "sessionCapabilities.delete", true},
		{acp.MethodSetConfigOption, len(r.ConfigOptions) > 0, "configOptions in session/new", sessionKnown},
		{acp.MethodSetMode, len(r.Modes) > 0, "modes in session/new", sessionKnown},
	}
	for _, p := range pairs {
		m, ok := r.Methods[p.method]
		if !ok {
			continue
		}
		switch {
		case p.advertised && m.Support == report.Unsupported:
			out.add(capabilityAdvertisedUnsupported, methodSeq(in, p.method), "",
				fmt.Sprintf("the agent advertises %s but answers %s with -32601 method not found", p.what, p.method), nil)
		case !p.advertised && p.judge && m.Support == report.Supported && !unsure:
			out.add(capabilityUnadvertisedMethod, methodSeq(in, p.method), "",
				fmt.Sprintf("%s answers (%s) although %s is not advertised; clients will not use it", p.method, supportText(m), p.what), nil)
		}
	}
	invalidParamsAccepted(in, out)
	for _, method := range acp.ProbedMethods {
		why := acp.LegacyMethods[method]
		if m, ok := r.Methods[method]; ok && why != "" && m.Support == report.Supported && !unsure {
			out.add(capabilityLegacyMethod, methodSeq(in, method), "", fmt.Sprintf("%s answers (%s); %s", method, supportText(m), why), nil)
		}
	}
}

// invalidParamsAccepted: method detection asks with params no handler can accept
// (probe.DetectionParams); a method decided that way by a result accepted them.
func invalidParamsAccepted(in *inputs, out *findings) {
	for _, method := range acp.ProbedMethods {
		m := in.Result.Methods[method]
		if m.DetectedBy != report.DetectedByInvalidParams || m.Support != report.Supported || m.Code != nil {
			continue
		}
		ex := in.Main.First(method) // the detection request: detection runs before any step
		if ex == nil || ex.Answer == nil {
			continue
		}
		out.add(protocolInvalidParamsAccepted, ex.Answer.Seq, "/result", fmt.Sprintf(
			"%s with the invalid params %s (asked by method detection) was answered with a result instead of -32602: the agent accepted params no handler can accept",
			method, ex.Request.Msg.Params), nil)
	}
}

func supportText(m report.MethodSupport) string {
	if m.Code == nil {
		return "with a result"
	}
	return fmt.Sprintf("%d %s", *m.Code, m.Message)
}

// methodSeq is the seq of the answer to the method-detection request for method (the first
// request for it: detection runs before any step or teardown).
func methodSeq(in *inputs, method string) int64 {
	if seq := answerSeq(in, method); seq != 0 {
		return seq
	}
	if ex := in.Main.First(method); ex != nil {
		return ex.Request.Seq
	}
	return 0
}
