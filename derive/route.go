package derive

import (
	"slices"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// turnRoute reads how acpprobe turn pointed the agent at the emulator (the turn-route event of
// the main connection x), whether the profile was verified on the version r's agentInfo
// gives, and the dialects the model requests of the whole run (all) used. nil without the
// event (no prompt turns).
func turnRoute(x *record.Index, r *report.Result, all []jsonrpc.Frame) *report.TurnRoute {
	f, ok := x.FirstEvent(record.TurnRoute.Kind)
	if !ok {
		return nil
	}
	info, _ := record.TurnRoute.Decode(f)
	out := &report.TurnRoute{RouteInfo: info, Dialects: []string{}}
	if r.AgentInfo != nil && info.Profile != "" && len(info.VerifiedOn) > 0 {
		yes := info.VerifiedFor(r.AgentInfo.Name, r.AgentInfo.Version)
		out.Verified = &yes
	}
	if r.AgentInfo != nil {
		out.Version = r.AgentInfo.Version
	}
	for _, g := range all {
		if req, ok := record.ModelRequest.Decode(g); ok && req.Dialect != "" && !slices.Contains(out.Dialects, req.Dialect) {
			out.Dialects = append(out.Dialects, req.Dialect)
		}
	}
	return out
}
