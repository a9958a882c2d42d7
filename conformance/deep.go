package conformance

import (
	"fmt"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
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

// deepFacts are what the --deep connection, which asked for an unsupported version, shows.
type deepFacts struct {
	asked int // the version it asked for
	r     *report.Result
}

// deriveDeep states the facts of the --deep connection (nil without one).
func deriveDeep(frames []jsonrpc.Frame, cat *extensions.Catalogue) *deepFacts {
	if frames == nil {
		return nil
	}
	dx := record.New(frames)
	return &deepFacts{asked: dx.Spawn().ProtocolVersion, r: probe.Derive(dx, cat)}
}

func runDeep(in *inputs, out *findings) {
	if in.deep == nil {
		return
	}
	asked, deep := in.deep.asked, in.deep.r
	switch {
	case deep.Error != nil && deep.ProtocolVersion == nil:
		out.add(protocolVersionNegotiation, 0, "", fmt.Sprintf("asked for protocolVersion %d, the agent did not answer with a version (%s: %s)", asked, deep.Error.Code, deep.Error.Message), nil)
	case deep.ProtocolVersion != nil && *deep.ProtocolVersion == asked:
		out.add(protocolVersionNegotiation, 0, "", fmt.Sprintf("asked for protocolVersion %d, which does not exist, the agent echoed it instead of answering the latest version it supports", asked), nil)
	case deep.ProtocolVersion != nil && in.r.ProtocolVersion != nil && *deep.ProtocolVersion != *in.r.ProtocolVersion && *deep.ProtocolVersion < *in.r.ProtocolVersion:
		out.add(protocolVersionNegotiation, 0, "", fmt.Sprintf("asked for protocolVersion %d, the agent answered %d, older than the %d it speaks", asked, *deep.ProtocolVersion, *in.r.ProtocolVersion), nil)
	}
}
