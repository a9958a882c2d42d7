package conformance

import (
	"sort"

	"github.com/acpprobe/acpprobe/report"
)

// Check describes one rule. Each check is declared once, as a package variable, by the pass
// that reports it; passes report findings by that variable, never by a spelled id.
type Check struct {
	ID   string      `json:"id"`
	Tier report.Tier `json:"tier"`
	// Side is the party the check judges: what the agent did, or what the client (an editor
	// seen through acpprobe tap, or acpprobe itself) sent.
	Side    Side   `json:"side"`
	Title   string `json:"title"`
	SpecRef string `json:"specRef"`
	// Active checks need an exchange during the probe (acpprobe check runs them; acpprobe
	// probe and analyze of a probe transcript cannot judge them).
	Active bool `json:"active,omitempty"`
}

// Side is the party whose behaviour a check judges.
type Side string

// The sides.
const (
	// SideAgent judges what the agent sent or did.
	SideAgent Side = "agent"
	// SideClient judges what the client sent: `acpprobe lint-client` reports these.
	SideClient Side = "client"
)

const (
	specTransports    = "https://agentclientprotocol.com/protocol/transports"
	specInit          = "https://agentclientprotocol.com/protocol/initialization"
	specAuth          = "https://agentclientprotocol.com/protocol/authentication"
	specSchema        = "https://agentclientprotocol.com/protocol/schema"
	specExtensibility = "https://agentclientprotocol.com/protocol/extensibility"
	specConfig        = "https://agentclientprotocol.com/protocol/session-config-options"
	specContent       = "https://agentclientprotocol.com/protocol/content"
	specPrompt        = "https://agentclientprotocol.com/protocol/prompt-turn"
	specSessionFork   = "https://agentclientprotocol.com/rfds/session-fork"
	specToolCalls     = "https://agentclientprotocol.com/protocol/tool-calls"
	specCancellation  = "https://agentclientprotocol.com/protocol/cancellation"
	specMCP           = "https://agentclientprotocol.com/protocol/session-setup#mcp-servers"
	specJSONRPC       = "https://www.jsonrpc.org/specification"
)

// byID indexes the checks the passes declare, with the scopes of the pass that declares each.
var byID = func() map[string]declared {
	m := map[string]declared{}
	for _, p := range passes {
		for _, c := range p.checks {
			if _, dup := m[c.ID]; !dup {
				m[c.ID] = declared{*c, p.scope}
			}
		}
	}
	return m
}()

type declared struct {
	check Check
	scope scope
}

// InTap reports whether the check judges sessions recorded by acpprobe tap (between an editor
// and an agent). It does not for the checks that judge the probe's own exchanges (method
// detection, active steps, --deep), which a tapped session does not have: Evaluate does not
// run their passes on a tap record.
func (c Check) InTap() bool { return byID[c.ID].scope&tapped != 0 }

// Checks lists every check the passes declare, sorted by tier (most severe first) then id.
func Checks() []Check {
	var out []Check
	for _, p := range passes {
		for _, c := range p.checks {
			out = append(out, *c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Tier.Rank() != out[j].Tier.Rank() {
			return out[i].Tier.Rank() < out[j].Tier.Rank()
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Lookup returns the check with the given id (lint-client selects client-side findings by
// their check's Side).
func Lookup(id string) (Check, bool) {
	d, ok := byID[id]
	return d.check, ok
}
