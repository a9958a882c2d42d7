package conformance

import (
	"bytes"
	"fmt"

	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// The envelope checks: the JSON-RPC envelope of each agent message.
var (
	envelopeVersion            = &Check{ID: "envelope.jsonrpc-version", Tier: report.TierMandatory, Side: SideAgent, Title: `Message without "jsonrpc":"2.0"`, SpecRef: specJSONRPC}
	envelopeInvalid            = &Check{ID: "envelope.invalid-message", Tier: report.TierMandatory, Side: SideAgent, Title: "JSON object that is neither request, notification nor response", SpecRef: specJSONRPC}
	envelopeUnknownID          = &Check{ID: "envelope.unknown-id", Tier: report.TierMandatory, Side: SideAgent, Title: "Response to an id the client never used", SpecRef: specJSONRPC}
	envelopeDuplicate          = &Check{ID: "envelope.duplicate-response", Tier: report.TierMandatory, Side: SideAgent, Title: "Second response to an already answered id", SpecRef: specJSONRPC}
	envelopeResultAndError     = &Check{ID: "envelope.result-and-error", Tier: report.TierMandatory, Side: SideAgent, Title: "Response with both result and error", SpecRef: specJSONRPC}
	envelopeNotificationWithID = &Check{ID: "envelope.notification-with-id", Tier: report.TierMandatory, Side: SideAgent, Title: "Notification method sent with an id", SpecRef: specJSONRPC}
	envelopeIDRewritten        = &Check{ID: "envelope.id-rewritten", Tier: report.TierAdvisory, Side: SideAgent, Title: "Response id written differently from the request id", SpecRef: specJSONRPC}
)

// envelopePass reads each decoded agent message, with the index's pairing of responses to
// requests and the chosen schema set (to know which methods are notifications), in any
// session.
var envelopePass = pass{
	name:  "envelope",
	scope: anyScope,
	checks: []*Check{envelopeVersion, envelopeInvalid, envelopeUnknownID, envelopeDuplicate, envelopeResultAndError,
		envelopeNotificationWithID, envelopeIDRewritten},
	cost: perFrame,
	run:  runEnvelope,
}

func runEnvelope(in *inputs, out *findings) {
	for x, f := range in.scan(out) {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil {
			continue
		}
		m := f.Msg
		if !m.VersionOK() {
			out.add(envelopeVersion, f.Seq, "/jsonrpc", fmt.Sprintf(`"jsonrpc" is %s, want "2.0"`, rawOr(m.JSONRPC, "missing")), nil)
		}
		switch m.Kind() {
		case jsonrpc.Invalid:
			out.add(envelopeInvalid, f.Seq, "", invalidWhy(m), nil)
		case jsonrpc.Response:
			if m.Result != nil && m.Error != nil {
				out.add(envelopeResultAndError, f.Seq, "", "a response carries either result or error, never both", nil)
			}
			reply := x.ReplyOf(f.Seq)
			switch {
			case reply.Exchange == nil:
				out.add(envelopeUnknownID, f.Seq, "/id", fmt.Sprintf("response to id %s, which the client never sent", m.ID), nil)
			case !reply.First:
				out.add(envelopeDuplicate, f.Seq, "/id", fmt.Sprintf("id %s was already answered at line %d", m.ID, reply.Exchange.Answer.Seq), nil)
			default:
				req := reply.Exchange.Request
				if !bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(req.Msg.ID)) {
					out.add(envelopeIDRewritten, f.Seq, "/id", fmt.Sprintf("the request had id %s, the response %s", req.Msg.ID, m.ID), nil)
				}
			}
		case jsonrpc.Request:
			if _, isNotification := in.Schemas.Set.TypeFor(m.Method, schema.HandledByClient, schema.Notification); isNotification {
				out.add(envelopeNotificationWithID, f.Seq, "/id", fmt.Sprintf("%s is a notification and must not carry an id (%s)", m.Method, m.ID), nil)
			}
		}
	}
}

func invalidWhy(m *jsonrpc.Message) string {
	switch {
	case m.HasMethod && m.Method == "":
		return `"method" is not a non-empty string`
	case m.ID != nil && m.Result == nil && m.Error == nil:
		return "an id without method, result or error"
	case m.ID == nil && (m.Result != nil || m.Error != nil):
		return "a response (result or error) without an id"
	default:
		return "neither method nor id"
	}
}
