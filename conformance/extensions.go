package conformance

import (
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// The vendor extension checks: the catalogue's rules applied to what the agent sent, and the
// zero-_meta contract of the standard plane.
var (
	extensionsZeroMeta      = &Check{ID: "extensions.zero-meta-contract", Tier: probe.TierMandatory, Side: SideAgent, Title: "The standard ACP flow demands vendor _meta a client cannot produce", SpecRef: specExtensibility}
	extensionsPrivateKey    = &Check{ID: "extensions.private-key", Tier: probe.TierAdvisory, Side: SideAgent, Title: "Private-channel vendor key sent on the standard plane", SpecRef: specExtensibility}
	extensionsDirection     = &Check{ID: "extensions.direction", Tier: probe.TierInfo, Side: SideAgent, Title: "Vendor key or method sent in the direction its catalogue does not list", SpecRef: specExtensibility}
	extensionsUnknownKey    = &Check{ID: "extensions.unknown-key", Tier: probe.TierInfo, Side: SideAgent, Title: "Key in a catalogued vendor namespace that the catalogue does not list", SpecRef: specExtensibility}
	extensionsUnknownMethod = &Check{ID: "extensions.unknown-method", Tier: probe.TierInfo, Side: SideAgent, Title: "Method in a catalogued vendor namespace that the catalogue does not list", SpecRef: specExtensibility}
	extensionsRetiredKey    = &Check{ID: "extensions.retired-key", Tier: probe.TierInfo, Side: SideAgent, Title: "Retired or producer-less vendor key on the wire", SpecRef: specExtensibility}
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
// catalogue) and, for the zero-_meta contract, the client's session/new and session/prompt
// requests with their answers; in any session.
var extensionsPass = pass{
	name:  "vendor extensions",
	scope: anyScope,
	checks: []*Check{extensionsZeroMeta, extensionsPrivateKey, extensionsDirection, extensionsUnknownKey,
		extensionsUnknownMethod, extensionsRetiredKey},
	run: runExtensions,
}

func runExtensions(in *inputs, out *findings) {
	inv := in.inventory
	for _, is := range inv.AgentIssues(inv.SentPrivate(extensions.DirectionClientToAgent)) {
		if c := agentRules[is.Rule]; c != nil {
			out.add(c, is.Seq, is.Pointer, is.Message, nil)
		}
	}
	zeroMeta(in, out)
}

// extensionMessages are the session's messages for the inventory (both directions), with each
// response's method.
func extensionMessages(x *record.Index) []extensions.Message {
	var out []extensions.Message
	for _, f := range x.Frames() {
		if f.Msg == nil || (f.Dir != jsonrpc.DirAgent && f.Dir != jsonrpc.DirClient) {
			continue
		}
		m := extensions.Message{Seq: f.Seq, Method: f.Msg.Method, Body: f.Raw, Direction: extensions.DirectionAgentToClient}
		if f.Dir == jsonrpc.DirClient {
			m.Direction = extensions.DirectionClientToAgent
		}
		switch f.Msg.Kind() {
		case jsonrpc.Request:
			m.Kind = "request"
		case jsonrpc.Notification:
			m.Kind = "notification"
		case jsonrpc.Response:
			m.Kind = "response"
			if ex := x.ReplyOf(f.Seq).Exchange; ex != nil {
				m.Method = ex.Method()
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// zeroMeta checks the zero-_meta contract: session/new and session/prompt must work for a
// client that sends no vendor _meta. An error that demands metadata breaks it.
func zeroMeta(in *inputs, out *findings) {
	for _, f := range in.frames {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Kind() != jsonrpc.Request {
			continue
		}
		if f.Msg.Method != acp.MethodSessionNew && f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		if strings.Contains(string(f.Msg.Params), `"_meta"`) {
			continue // the client sent _meta: not the zero-_meta plane
		}
		answer, ok := in.x.AnswerTo(f.Seq)
		if !ok {
			continue
		}
		rpcErr := answer.Msg.Err()
		if rpcErr == nil {
			continue
		}
		if key, demands := in.catalogue.MetadataDemand(rpcErr.Message + " " + string(rpcErr.Data)); demands {
			out.add(extensionsZeroMeta, answer.Seq, "/error", fmt.Sprintf(
				"%s without _meta was refused for lack of %s (%d %q): the standard plane must work with zero vendor _meta; that key belongs to a private channel",
				f.Msg.Method, key, rpcErr.Code, rpcErr.Message), map[string]string{"key": key})
		}
	}
}
