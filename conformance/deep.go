package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/report"
)

// protocolVersionNegotiation judges the second connection of --deep.
var protocolVersionNegotiation = &Check{ID: "protocol.version-negotiation", Tier: report.TierMandatory, Side: SideAgent, Title: "Agent does not answer an unsupported version with one it supports", SpecRef: specInit, Active: true}

// deepPass reads the --deep connection's derived result (deepFacts) and the main session's
// negotiated version. Only acpprobe check --deep opens that connection.
var deepPass = pass{
	name:   "version negotiation",
	scope:  driven,
	checks: []*Check{protocolVersionNegotiation},
	run:    runDeep,
}

func runDeep(in *inputs, out *findings) {
	if in.Deep == nil {
		return
	}
	asked, deep := in.Deep.Asked, in.Deep.Result
	switch {
	case deep.Error != nil && deep.ProtocolVersion == nil:
		out.add(protocolVersionNegotiation, 0, "", fmt.Sprintf("asked for protocolVersion %d, the agent did not answer with a version (%s: %s)", asked, deep.Error.Code, deep.Error.Message), nil)
	case deep.ProtocolVersion != nil && *deep.ProtocolVersion == asked:
		out.add(protocolVersionNegotiation, 0, "", fmt.Sprintf("asked for protocolVersion %d, which does not exist, the agent echoed it instead of answering the latest version it supports", asked), nil)
	case deep.ProtocolVersion != nil && in.Result.ProtocolVersion != nil && *deep.ProtocolVersion != *in.Result.ProtocolVersion && *deep.ProtocolVersion < *in.Result.ProtocolVersion:
		out.add(protocolVersionNegotiation, 0, "", fmt.Sprintf("asked for protocolVersion %d, the agent answered %d, older than the %d it speaks", asked, *deep.ProtocolVersion, *in.Result.ProtocolVersion), nil)
	}
}
