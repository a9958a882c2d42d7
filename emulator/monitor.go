package emulator

import "slices"

// An agent that decides on its own whether an action may go ahead asks its model first (a
// permission monitor): Claude Code's auto mode does, before an MCP tool call. The emulator
// answers such a request with the verdict that lets the action go ahead, whatever the Script
// says (unless the Script answers an error), as acpprobe answers a permission request when a
// scenario allows: that the action then happens, or not, is the agent's doing. Before, the
// Script's text answered it, which the agent cannot read as a verdict, and it blocked the call.

// monitor is one known permission monitor: a request that asks for stop, answered allow.
type monitor struct {
	stop, allow string
}

// monitors are the known permission monitors.
var monitors = []monitor{
	// Claude Code 2.1 (claude-agent-acp 0.101.0), auto mode: a request with the stop sequence
	// </block>, whose answer "MUST begin with <block>"; "<block>no" (it is not blocked) lets
	// the action go ahead.
	{stop: "</block>", allow: "<block>no"},
}

// verdictFor is the allow verdict of the monitor whose stop sequence is among stops; "" when
// none is.
func verdictFor(stops []string) string {
	for _, m := range monitors {
		if slices.Contains(stops, m.stop) {
			return m.allow
		}
	}
	return ""
}
