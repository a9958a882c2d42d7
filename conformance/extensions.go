package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/report"
)

// The vendor extension checks: the catalogue's rules applied to what the agent sent, and the
// zero-_meta contract of the standard plane.
var (
	extensionsZeroMeta      = &Check{ID: "extensions.zero-meta-contract", Tier: report.TierMandatory, Side: SideAgent, Title: "The standard ACP flow demands vendor _meta a client cannot produce", SpecRef: specExtensibility}
	extensionsPrivateKey    = &Check{ID: "extensions.private-key", Tier: report.TierAdvisory, Side: SideAgent, Title: "Private-channel vendor key sent on the standard plane", SpecRef: specExtensibility}
	extensionsDirection     = &Check{ID: "extensions.direction", Tier: report.TierInfo, Side: SideAgent, Title: "Vendor key or method sent in the direction its catalogue does not list", SpecRef: specExtensibility}
	extensionsUnknownKey    = &Check{ID: "extensions.unknown-key", Tier: report.TierInfo, Side: SideAgent, Title: "Key in a catalogued vendor namespace that the catalogue does not list", SpecRef: specExtensibility}
	extensionsUnknownMethod = &Check{ID: "extensions.unknown-method", Tier: report.TierInfo, Side: SideAgent, Title: "Method in a catalogued vendor namespace that the catalogue does not list", SpecRef: specExtensibility}
	extensionsRetiredKey    = &Check{ID: "extensions.retired-key", Tier: report.TierInfo, Side: SideAgent, Title: "Retired or producer-less vendor key on the wire", SpecRef: specExtensibility}
)

// agentRules maps the inventory's rules for what the agent sent to their checks. A rule
// missing here would not be reported: each of these checks has a scenario where it fires.
var agentRules = map[string]*Check{
	extensions.RulePrivateKey:    extensionsPrivateKey,
	extensions.RuleDirection:     extensionsDirection,
	extensions.RuleUnknownKey:    extensionsUnknownKey,
	extensions.RuleUnknownMethod: extensionsUnknownMethod,
	extensions.RuleRetiredKey:    extensionsRetiredKey,
}

// extensionsPass reads the extension inventory (taken once from the record with the
// catalogue; what the client sent says whether it is a private channel) and, for the
// zero-_meta contract, the client's session/new and session/prompt requests with their
// answers; in any session.
var extensionsPass = pass{
	name:  "vendor extensions",
	scope: anyScope,
	checks: []*Check{extensionsZeroMeta, extensionsPrivateKey, extensionsDirection, extensionsUnknownKey,
		extensionsUnknownMethod, extensionsRetiredKey},
	cost: perFrame,
	run:  runExtensions,
}

func runExtensions(in *inputs, out *findings) {
	ext, cut := in.Extensions(in.ctx)
	out.cut = cut
	for _, is := range ext.Inventory.AgentIssues(ext.Client.SentPrivate(extensions.DirectionClientToAgent)) {
		if c := agentRules[is.Rule]; c != nil {
			out.add(c, is.Seq, is.Pointer, is.Message, nil)
		}
	}
	zeroMeta(in, out)
}

// zeroMeta checks the zero-_meta contract: session/new and session/prompt must work for a
// client that sends no vendor _meta. An error that demands metadata breaks it (the derivation's
// ZeroMeta steps say which answered so). It is judged at the answer, which may come in a later
// window than its request (Options.From).
func zeroMeta(in *inputs, out *findings) {
	z := in.Result.ZeroMeta
	if z == nil {
		return
	}
	for _, s := range z.Steps {
		if s.Demands == "" || s.AnswerSeq <= in.From || s.Method == acp.MethodInitialize {
			continue
		}
		out.add(extensionsZeroMeta, s.AnswerSeq, "/error", fmt.Sprintf(
			"%s without _meta was refused for lack of %s (%q): the standard plane must work with zero vendor _meta; that key belongs to a private channel",
			s.Method, s.Demands, s.Error), map[string]string{"key": s.Demands})
	}
}
