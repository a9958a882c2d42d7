package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// protocolUpdateOptIn: since schema 1.25.0 a v1 client opts in to two kinds of session update
// (clientCapabilities.session.notices, .compaction), and the schema says of each variant
// "Agents MUST only send this update when the Client advertised" its capability. In v2 no
// capability is needed. Judged in the schema pass, which reads every agent notification.
var protocolUpdateOptIn = &Check{ID: "protocol.update-opt-in", Tier: report.TierMandatory, Side: SideAgent,
	Title: "Agent sent a notice or compaction update the client did not opt in to", SpecRef: specPromptV1}

// specPromptV1 is the v1 prompt-turn page, whose #session-notices and #session-compaction
// sections say how a client opts in.
const specPromptV1 = "https://agentclientprotocol.com/protocol/v1/prompt-turn"

// updateOptIn reports a session/update whose variant needs a client capability the client's
// initialize did not advertise (v1 only).
func (j *messages) updateOptIn(f jsonrpc.Frame) {
	if f.Msg.Method != acp.MethodSessionUpdate || j.in.Result.ProtocolVersion != nil && *j.in.Result.ProtocolVersion >= 2 {
		return
	}
	kind := acp.ParseObject(f.Msg.Params).Object("update").String("sessionUpdate")
	if gate, advertised := j.in.Client.UpdateGate(kind); !advertised {
		j.out.add(protocolUpdateOptIn, f.Seq, "/params/update/sessionUpdate",
			fmt.Sprintf("a %s session update needs clientCapabilities.%s, which the client did not advertise in its initialize", kind, gate), nil)
	}
}
