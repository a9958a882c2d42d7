package conformance

import (
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// vendorExtensions inventories every vendor extension of the session (both directions) into
// the result, and applies the catalogue's rules: to what the agent sent, to what the client
// sent (client lint), and the zero-_meta contract of the standard plane.
func (e *evaluator) vendorExtensions() {
	cat := e.opts.Catalogue
	if cat == nil {
		cat = extensions.Default()
	}
	inv := cat.Take(e.extensionMessages(), e.known())
	e.inventory = inv
	for _, is := range inv.AgentIssues(inv.SentPrivate(extensions.DirectionClientToAgent)) {
		e.add("extensions."+is.Rule, is.Seq, is.Pointer, is.Message, nil)
	}
	for _, is := range inv.ClientIssues() {
		id := map[string]string{extensions.RuleClientPrivateKey: "client.private-key",
			extensions.RuleClientPrivateCall: "client.private-method", extensions.RuleDirection: "client.direction"}[is.Rule]
		e.add(id, is.Seq, is.Pointer, is.Message, nil)
	}
	e.clientMethods()
	e.zeroMeta(cat)
}

// extensionMessages are the session's messages for the inventory, with each response's method.
func (e *evaluator) extensionMessages() []extensions.Message {
	var out []extensions.Message
	for _, f := range e.frames {
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
			if ex := e.x.ReplyOf(f.Seq).Exchange; ex != nil {
				m.Method = ex.Method()
			}
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// known lists the protocol's own union values, across the chosen schema and its alternatives.
func (e *evaluator) known() extensions.Known {
	k := extensions.Known{AuthTypes: []string{"agent"}}
	for _, set := range append([]*schema.Set{e.set}, e.alts...) {
		k.SessionUpdates = append(k.SessionUpdates, set.DiscriminatorValues("SessionUpdate", "sessionUpdate")...)
		k.ContentTypes = append(k.ContentTypes, set.DiscriminatorValues("ContentBlock", "type")...)
		k.AuthTypes = append(k.AuthTypes, set.DiscriminatorValues("AuthMethod", "type")...)
	}
	return k
}

// clientMethods reports methods the client called that are neither ACP nor `_`-prefixed.
func (e *evaluator) clientMethods() {
	for _, f := range e.frames {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || !f.Msg.HasMethod || f.Msg.Method == "" {
			continue
		}
		m := f.Msg.Method
		if strings.HasPrefix(m, "_") || strings.HasPrefix(m, "$/") || e.knownMethod(m) {
			continue
		}
		e.add("client.unknown-method", f.Seq, "/method", fmt.Sprintf("the client called %s, which is not an ACP method; custom methods must start with _", m), nil)
	}
}

// zeroMeta checks the zero-_meta contract: session/new and session/prompt must work for a
// client that sends no vendor _meta. An error that demands metadata breaks it.
func (e *evaluator) zeroMeta(cat *extensions.Catalogue) {
	for _, f := range e.frames {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Kind() != jsonrpc.Request {
			continue
		}
		if f.Msg.Method != acp.MethodSessionNew && f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		if strings.Contains(string(f.Msg.Params), `"_meta"`) {
			continue // the client sent _meta: not the zero-_meta plane
		}
		answer, ok := e.x.AnswerTo(f.Seq)
		if !ok {
			continue
		}
		rpcErr := answer.Msg.Err()
		if rpcErr == nil {
			continue
		}
		if key, demands := cat.MetadataDemand(rpcErr.Message + " " + string(rpcErr.Data)); demands {
			e.add("extensions.zero-meta-contract", answer.Seq, "/error", fmt.Sprintf(
				"%s without _meta was refused for lack of %s (%d %q): the standard plane must work with zero vendor _meta; that key belongs to a private channel",
				f.Msg.Method, key, rpcErr.Code, rpcErr.Message), map[string]string{"key": key})
		}
	}
}
