package derive

import (
	"cmp"
	"context"
	"iter"
	"slices"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// Extensions are the vendor extensions of a record, taken once with the catalogue.
type Extensions struct {
	// Inventory is what the report lists (Result.Extensions): what the agent sent and, in a
	// tap, what the editor sent. acpprobe's own traffic (its _acpprobe/… methods, its prompt
	// shapes' content types) is never a vendor extension: when acpprobe is the client, the
	// inventory leaves out what the client sent and answers that merely echo it.
	Inventory *extensions.Inventory
	// Client is what the client sent (the client lint judges it): the editor's in a tap,
	// acpprobe's own in a session it drove.
	Client *extensions.Inventory
}

// takeExtensions inventories the messages of the parts (the main connection's first; see
// Extensions); when ctx ends first, the inventories hold the messages taken until then.
func takeExtensions(ctx context.Context, parts []Part, cat *extensions.Catalogue, places extensions.Schema) Extensions {
	if !clientIsAcpprobe(parts[0].X) {
		inv := cat.Take(partsMessages(ctx, parts, "", nil), places)
		return Extensions{Inventory: inv, Client: inv}
	}
	own := cat.Take(partsMessages(ctx, parts, jsonrpc.DirClient, nil), places)
	return Extensions{Inventory: cat.Take(partsMessages(ctx, parts, jsonrpc.DirAgent, own), places), Client: own}
}

// partsMessages are the messages of every part, a part after the other (extensionMessages).
func partsMessages(ctx context.Context, parts []Part, dir jsonrpc.Dir, echoed *extensions.Inventory) iter.Seq[extensions.Message] {
	return func(yield func(extensions.Message) bool) {
		for _, p := range parts {
			for m := range extensionMessages(ctx, p.X, p.Frames, dir, echoed) {
				if !yield(m) {
					return
				}
			}
		}
	}
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
		slices.SortStableFunc(msgs, func(a, b extensions.Message) int { return cmp.Compare(x.Position(a.Seq), x.Position(b.Seq)) })
		for i, m := range msgs {
			if (i%checkEvery == 0 && ctx.Err() != nil) || !yield(m) {
				return
			}
		}
	}
}
