// Package conformance judges a recorded ACP session: framing and JSON-RPC envelope, messages
// against the pinned official schema, version negotiation and protocol behaviour, and whether
// advertised capabilities are true. Each departure is a probe.Finding with a stable check id,
// a tier, a JSON pointer into the message and the transcript line (seq) it came from.
//
// Checks are passive (Evaluate reads frames and the probe result, so a transcript can be
// judged offline) except for a few active exchanges (Steps) that the probe engine runs during
// a live session; their answers are judged by Evaluate like everything else.
package conformance

import (
	"sort"

	"github.com/acpprobe/acpprobe/probe"
)

// Check describes one rule.
type Check struct {
	ID      string     `json:"id"`
	Tier    probe.Tier `json:"tier"`
	Title   string     `json:"title"`
	SpecRef string     `json:"specRef"`
	// Active checks need an exchange during the probe (acpprobe check runs them; acpprobe
	// probe and analyze of a probe transcript cannot judge them).
	Active bool `json:"active,omitempty"`
}

const (
	specTransports    = "https://agentclientprotocol.com/protocol/transports"
	specOverview      = "https://agentclientprotocol.com/protocol/overview"
	specInit          = "https://agentclientprotocol.com/protocol/initialization"
	specSchema        = "https://agentclientprotocol.com/protocol/schema"
	specExtensibility = "https://agentclientprotocol.com/protocol/extensibility"
	specSessionSetup  = "https://agentclientprotocol.com/protocol/session-setup"
	specConfig        = "https://agentclientprotocol.com/protocol/session-config-options"
	specModes         = "https://agentclientprotocol.com/protocol/session-modes"
	specContent       = "https://agentclientprotocol.com/protocol/content"
	specPrompt        = "https://agentclientprotocol.com/protocol/prompt-turn"
	specUpdates       = "https://agentclientprotocol.com/protocol/updates"
	specJSONRPC       = "https://www.jsonrpc.org/specification"
)

// The checks, by id.
var checks = []Check{
	{"framing.stdout-non-json", probe.TierMandatory, "Agent wrote a line on stdout that is not JSON", specTransports, false},
	{"framing.bom", probe.TierMandatory, "Line starts with a UTF-8 byte order mark", specTransports, false},
	{"framing.invalid-utf8", probe.TierMandatory, "Line is not valid UTF-8", specTransports, false},
	{"framing.oversize", probe.TierAdvisory, "Line longer than the reader's maximum", specTransports, false},
	{"framing.unterminated", probe.TierAdvisory, "Last line has no terminating newline", specTransports, false},
	{"framing.empty-line", probe.TierAdvisory, "Empty line on stdout", specTransports, false},
	{"framing.batch", probe.TierAdvisory, "JSON-RPC batch array (not part of ACP v1)", specTransports, false},
	{"envelope.jsonrpc-version", probe.TierMandatory, `Message without "jsonrpc":"2.0"`, specJSONRPC, false},
	{"envelope.invalid-message", probe.TierMandatory, "JSON object that is neither request, notification nor response", specJSONRPC, false},
	{"envelope.unknown-id", probe.TierMandatory, "Response to an id the client never used", specJSONRPC, false},
	{"envelope.duplicate-response", probe.TierMandatory, "Second response to an already answered id", specJSONRPC, false},
	{"envelope.result-and-error", probe.TierMandatory, "Response with both result and error", specJSONRPC, false},
	{"envelope.notification-with-id", probe.TierMandatory, "Notification method sent with an id", specJSONRPC, false},
	{"envelope.id-rewritten", probe.TierAdvisory, "Response id written differently from the request id", specJSONRPC, false},
	{"schema.invalid", probe.TierMandatory, "Message does not match the ACP schema", specSchema, false},
	{"schema.invalid-tolerated", probe.TierAdvisory, "Schema violation the reference SDKs tolerate (value dropped or defaulted)", specSchema, false},
	{"schema.non-spec-key", probe.TierMandatory, "Custom key outside _meta in a spec type", specExtensibility, false},
	{"schema.legacy-field", probe.TierInfo, "Legacy field removed from ACP", specSchema, false},
	{"schema.unstable", probe.TierInfo, "Uses a field or variant defined only in the unstable or a newer schema", specSchema, false},
	{"protocol.version-negotiation", probe.TierMandatory, "Agent does not answer an unsupported version with one it supports", specInit, true},
	{"protocol.agent-info", probe.TierAdvisory, "initialize result has no agentInfo", specInit, false},
	{"protocol.unknown-method-request", probe.TierAdvisory, "Unknown _-prefixed request not answered with -32601", specExtensibility, true},
	{"protocol.request-unanswered", probe.TierMandatory, "Request left without an answer", specJSONRPC, true},
	{"protocol.notification-answered", probe.TierMandatory, "Agent answered a notification", specJSONRPC, true},
	{"protocol.unknown-notification", probe.TierAdvisory, "Unknown _-prefixed notification ended the agent", specExtensibility, true},
	{"protocol.invalid-params", probe.TierAdvisory, "Invalid params not answered with -32602", specJSONRPC, true},
	{"protocol.stdin-exit", probe.TierAdvisory, "Agent did not exit after stdin closed", specTransports, false},
	{"protocol.leftover-processes", probe.TierAdvisory, "Processes of the agent's group outlived it", specTransports, false},
	{"protocol.stderr-volume", probe.TierInfo, "Agent wrote a lot on stderr during the handshake", specTransports, false},
	{"protocol.client-capability", probe.TierMandatory, "Agent called a client method the client did not advertise", specInit, false},
	{"protocol.unknown-method", probe.TierAdvisory, "Agent called a method that is neither ACP nor an _-prefixed extension", specExtensibility, false},
	{"capability.advertised-unsupported", probe.TierCapability, "Advertised capability whose method is not implemented", specInit, false},
	{"capability.unadvertised-method", probe.TierInfo, "Method implemented without being advertised", specInit, false},
	{"capability.detection-unreliable", probe.TierInfo, "The agent answers unknown methods like known ones; method detection is unreliable", specExtensibility, true},
	{"capability.prompt-content", probe.TierInfo, "Prompt validator accepts content that promptCapabilities does not advertise", specContent, true},
	{"capability.prompt-content-missing", probe.TierCapability, "Advertised prompt content that the prompt validator does not accept", specContent, true},
	{"capability.legacy-method", probe.TierInfo, "Legacy method session/set_model still implemented", specConfig, false},
	{"state.modes-config-sync", probe.TierAdvisory, "modes and the mode config option disagree", specConfig, false},
	{"state.legacy-models-not-settable", probe.TierAdvisory, "Legacy models ids the model config option does not accept", specConfig, false},
	{"state.config-current-value", probe.TierAdvisory, "Config option's current value is not one of its options", specConfig, false},
	{"extensions.zero-meta-contract", probe.TierMandatory, "The standard ACP flow demands vendor _meta a client cannot produce", specExtensibility, false},
	{"extensions.private-key", probe.TierAdvisory, "Private-channel vendor key sent on the standard plane", specExtensibility, false},
	{"extensions.direction", probe.TierInfo, "Vendor key or method sent in the direction its catalogue does not list", specExtensibility, false},
	{"extensions.unknown-key", probe.TierInfo, "Key in a catalogued vendor namespace that the catalogue does not list", specExtensibility, false},
	{"extensions.unknown-method", probe.TierInfo, "Method in a catalogued vendor namespace that the catalogue does not list", specExtensibility, false},
	{"extensions.retired-key", probe.TierInfo, "Retired or producer-less vendor key on the wire", specExtensibility, false},
	{"client.private-key", probe.TierAdvisory, "Client produced a private vendor key", specExtensibility, false},
	{"client.private-method", probe.TierAdvisory, "Client called a private vendor method", specExtensibility, false},
	{"client.direction", probe.TierInfo, "Client sent a vendor key or method catalogued as agent-to-client", specExtensibility, false},
	{"client.unknown-method", probe.TierAdvisory, "Client called a method that is neither ACP nor an _-prefixed extension", specExtensibility, false},
	{"prompt.shape-accepted", probe.TierAdvisory, "A malformed prompt shape passed validation", specPrompt, true},
	{"prompt.no-stop-reason", probe.TierAdvisory, "A cancelled prompt did not end with stopReason cancelled", specPrompt, true},
}

var byID = func() map[string]Check {
	m := map[string]Check{}
	for _, c := range checks {
		m[c.ID] = c
	}
	return m
}()

// Checks lists every check, sorted by tier (most severe first) then id.
func Checks() []Check {
	out := append([]Check(nil), checks...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Tier.Rank() != out[j].Tier.Rank() {
			return out[i].Tier.Rank() < out[j].Tier.Rank()
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Lookup returns the check with the given id.
func Lookup(id string) (Check, bool) {
	c, ok := byID[id]
	return c, ok
}
