package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The side-effect checks: what the agent did to the machine that a client would not expect
// from a handshake. The processes it left behind are protocol.leftover-processes (from the
// exit), not judged again here.
var (
	sideEffectsBrowser = &Check{ID: "side-effects.browser-launch", Tier: report.TierAdvisory, Side: SideAgent, Title: "Agent opened a browser before any authenticate", SpecRef: specAuth}
)

// sideEffectsPass reads the run's side-effect report (derived from its side-effects event):
// a browser or URL launch the shims recorded before any authenticate request is a login the
// agent started on its own. A client that has not asked to authenticate must not find a
// browser window, and acpprobe must never cause a login.
var sideEffectsPass = pass{
	name:   "side-effects",
	scope:  driven,
	checks: []*Check{sideEffectsBrowser},
	run:    runSideEffects,
}

func runSideEffects(in *inputs, out *findings) {
	se := in.Result.SideEffects
	if se == nil {
		return
	}
	for _, l := range se.Browser.Launches {
		if !l.BeforeAuthenticate {
			continue
		}
		what := l.Program
		if l.URL != "" {
			what += " " + l.URL
		}
		out.add(sideEffectsBrowser, in.Main.EventSeq(record.SideEffects.Kind), "",
			fmt.Sprintf("the agent tried to open %s (%.0f ms into the session) before any authenticate request; the shim opened nothing", what, l.AtMs), l)
	}
}
