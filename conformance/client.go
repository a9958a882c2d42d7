package conformance

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The client lint: what the client sent (an editor seen through acpprobe tap; in a session
// acpprobe drove, acpprobe itself). `acpprobe lint-client` reports these.
var (
	clientPrivateKey    = &Check{ID: "client.private-key", Tier: report.TierAdvisory, Side: SideClient, Title: "Client produced a private vendor key", SpecRef: specExtensibility}
	clientPrivateMethod = &Check{ID: "client.private-method", Tier: report.TierAdvisory, Side: SideClient, Title: "Client called a private vendor method", SpecRef: specExtensibility}
	clientDirection     = &Check{ID: "client.direction", Tier: report.TierInfo, Side: SideClient, Title: "Client sent a vendor key or method catalogued as agent-to-client", SpecRef: specExtensibility}
	clientUnknownMethod = &Check{ID: "client.unknown-method", Tier: report.TierAdvisory, Side: SideClient, Title: "Client called a method that is neither ACP nor an _-prefixed extension", SpecRef: specExtensibility}
)

// clientRules maps the inventory's rules for what the client sent to their checks (rules
// 6.1–6.4 of the CodeBuddy reference, for every catalogued vendor). A rule missing here would
// not be reported: each of these checks has a scenario where it fires.
var clientRules = map[string]*Check{
	extensions.RuleClientPrivateKey:  clientPrivateKey,
	extensions.RuleClientPrivateCall: clientPrivateMethod,
	extensions.RuleDirection:         clientDirection,
}

// clientPass reads the inventory of what the client sent and the client's messages with the schema sets (to
// know ACP's methods); in any session.
var clientPass = pass{
	name:   "client lint",
	scope:  anyScope,
	checks: []*Check{clientPrivateKey, clientPrivateMethod, clientDirection, clientUnknownMethod},
	cost:   perFrame,
	run:    runClient,
}

func runClient(in *inputs, out *findings) {
	ext, cut := in.Extensions(in.ctx)
	out.cut = cut
	for _, is := range ext.Client.ClientIssues() {
		if c := clientRules[is.Rule]; c != nil {
			out.add(c, is.Seq, is.Pointer, is.Message, nil)
		}
	}
	// Methods the client called that are neither ACP nor `_`-prefixed. acpprobe's auth oracle
	// asks such a method on purpose, in its auth-status step (a side-effect-free status request
	// the catalogue knows the agent serves, derive.AuthStatusMethod): that is no lint of
	// acpprobe; the agent that serves it is reported (protocol.unprefixed-method-served).
	for x, f := range in.scan(out) {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || !f.Msg.HasMethod || f.Msg.Method == "" {
			continue
		}
		m := f.Msg.Method
		if strings.HasPrefix(m, "_") || strings.HasPrefix(m, "$/") || in.Schemas.KnownMethod(m) {
			continue
		}
		def, catalogued := in.Catalogue.LookupMethod(m)
		if catalogued && def.AuthStatus && inStep(x, record.StepAuthStatus, f.Seq) {
			continue
		}
		msg := fmt.Sprintf("the client called %s, which is not an ACP method; custom methods must start with _", m)
		if catalogued {
			msg = fmt.Sprintf("the client called %s, a method of %s named without the _ that custom methods must start with", m, def.Vendor)
		}
		out.add(clientUnknownMethod, f.Seq, "/method", msg, nil)
	}
}

// inStep says whether the frame at seq is one of the named active step's.
func inStep(x *record.Index, step string, seq int64) bool {
	return slices.ContainsFunc(x.StepRange(step), func(f jsonrpc.Frame) bool { return f.Seq == seq })
}
