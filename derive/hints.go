package derive

import (
	"encoding/json"
	"strings"
)

// knownAgentErrors are agent errors whose cause acpprobe knows, each with what to do about
// it. An entry matches an error object by a string member of its data (a vendor's own reason
// code, the surest sign) or, when the data does not say, by a part of its message.
var knownAgentErrors = []struct {
	dataKey, dataValue string // error.data[dataKey] == dataValue
	message            string // a part of error.message
	hint               string
}{
	{
		// Claude Code (claude-agent-acp's session/new, -32603) as root: it takes IS_SANDBOX=1
		// alone for a deliberate sandbox (research: captures claude.env-issandbox).
		dataKey: "startupFailureReason", dataValue: "bypass_root",
		message: "--dangerously-skip-permissions cannot be used with root",
		hint: "Claude Code refuses --dangerously-skip-permissions as root when IS_SANDBOX is set to anything but 1: " +
			"run with IS_SANDBOX=1, unset it, or use --isolate (which drops it)",
	},
}

// agentErrorHint is the hint of the known agent error raw is (a JSON-RPC error object), or "".
func agentErrorHint(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var e struct {
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	}
	// Data that is not an object is a type error json skips: the message is still read.
	_ = json.Unmarshal(raw, &e)
	for _, k := range knownAgentErrors {
		if v, ok := e.Data[k.dataKey].(string); ok && v == k.dataValue {
			return k.hint
		}
		if k.message != "" && strings.Contains(e.Message, k.message) {
			return k.hint
		}
	}
	return ""
}
