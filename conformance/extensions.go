package conformance

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
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
	inv := in.extensions().inventory
	for _, is := range inv.AgentIssues(in.extensions().client.SentPrivate(extensions.DirectionClientToAgent)) {
		if c := agentRules[is.Rule]; c != nil {
			out.add(c, is.Seq, is.Pointer, is.Message, nil)
		}
	}
	zeroMeta(in, out)
}

// extensionFacts are the vendor extensions of a record, taken once with the catalogue.
type extensionFacts struct {
	// inventory is what the report lists (Outcome.Extensions): what the agent sent and, in a
	// tap, what the editor sent. acpprobe's own traffic (its _acpprobe/… methods, its prompt
	// shapes' content types) is never a vendor extension: when acpprobe is the client, the
	// inventory leaves out what the client sent and answers that merely echo it.
	inventory *extensions.Inventory
	// client is what the client sent (the client lint judges it): the editor's in a tap,
	// acpprobe's own in a session it drove.
	client *extensions.Inventory
}

// takeExtensions inventories the messages of frames, a part of the record x indexes (see
// extensionFacts); when ctx ends first, the inventories hold the messages taken until then.
func takeExtensions(ctx context.Context, x *record.Index, frames []jsonrpc.Frame, cat *extensions.Catalogue, known extensions.Known) extensionFacts {
	if !clientIsAcpprobe(x) {
		inv := cat.Take(extensionMessages(ctx, x, frames, "", nil), known)
		return extensionFacts{inventory: inv, client: inv}
	}
	own := cat.Take(extensionMessages(ctx, x, frames, jsonrpc.DirClient, nil), known)
	return extensionFacts{inventory: cat.Take(extensionMessages(ctx, x, frames, jsonrpc.DirAgent, own), known), client: own}
}

// clientIsAcpprobe reports whether acpprobe was the client: in a session it drove, or in a
// tap whose client introduced itself as acpprobe (acpprobe probing through a tap).
func clientIsAcpprobe(x *record.Index) bool {
	if !x.IsTap() {
		return true
	}
	ex := x.First(acp.MethodInitialize)
	return ex != nil && acp.ParseObject(ex.Request.Msg.Params).Object("clientInfo").String("name") == "acpprobe"
}

// extensionMessages are the messages of frames for the inventory (of one direction, or both
// when dir is ""), with each response's method (from x); answers are marked as echoing what echoed
// holds (when not nil). They come in the order of position: each answer where its request was,
// so that the places kept for a name, and their order, do not depend on the order concurrent
// answers arrived in. They end early when ctx ends.
func extensionMessages(ctx context.Context, x *record.Index, frames []jsonrpc.Frame, dir jsonrpc.Dir, echoed *extensions.Inventory) iter.Seq[extensions.Message] {
	return func(yield func(extensions.Message) bool) {
		var msgs []extensions.Message
		for i, f := range frames {
			if i%checkEvery == 0 && ctx.Err() != nil {
				return
			}
			if f.Msg == nil || (f.Dir != jsonrpc.DirAgent && f.Dir != jsonrpc.DirClient) || (dir != "" && f.Dir != dir) {
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
				m.Echoed = echoed
			default:
				continue
			}
			msgs = append(msgs, m)
		}
		slices.SortStableFunc(msgs, func(a, b extensions.Message) int { return cmp.Compare(position(x, a.Seq), position(x, b.Seq)) })
		for i, m := range msgs {
			if (i%checkEvery == 0 && ctx.Err() != nil) || !yield(m) {
				return
			}
		}
	}
}

// zeroMeta checks the zero-_meta contract: session/new and session/prompt must work for a
// client that sends no vendor _meta. An error that demands metadata breaks it. It is judged at
// the answer, which may come in a later window than its request (Options.From).
func zeroMeta(in *inputs, out *findings) {
	for answer := range in.scan(out) {
		if answer.Dir != jsonrpc.DirAgent || answer.Msg == nil || answer.Msg.Kind() != jsonrpc.Response {
			continue
		}
		reply := in.x.ReplyOf(answer.Seq)
		if reply.Exchange == nil || !reply.First || reply.Exchange.Request.Dir != jsonrpc.DirClient {
			continue
		}
		f := reply.Exchange.Request
		if f.Msg.Method != acp.MethodSessionNew && f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		if strings.Contains(string(f.Msg.Params), `"_meta"`) {
			continue // the client sent _meta: not the zero-_meta plane
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
