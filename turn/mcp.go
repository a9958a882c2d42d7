package turn

import (
	"context"
	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sentinel"
)

// mcpConnectBound bounds how long the mcp scenario waits for the agent to connect to the
// sentinels and list their tools (agents connect at session/new, or in the background after).
const mcpConnectBound = 15 * time.Second

// mcpStep is the mcp scenario: the sentinels were offered in session/new (Run put them in
// probe.Options.MCPServers). It records what they are, waits for the agent to list their
// tools, then, with a backend profile, asks the model to call each sentinel's tool in a turn of
// its own: the tool must be offered to the model, called by the agent, and its result must
// come back in the next model request. Without a profile only what the agent does by itself
// (connect, list) is observed.
type mcpStep struct {
	hub *sentinel.Hub
	sc  *scene // nil without a backend profile
}

func (mcpStep) Name() string { return record.ScenarioMCP.StepName() }

func (m mcpStep) Run(ctx context.Context, s *probe.Session) {
	// The sentinels end with the scenario (the last one), so that nothing reaches them, and
	// nothing is recorded, after the record is analysed.
	defer m.hub.Close()
	record.MCPSentinels.Emit(s.Log(), m.hub.Setup())
	if s.ID == "" {
		return // session/new failed: its answer says whether the servers were refused
	}
	wctx, cancel := context.WithTimeout(ctx, mcpConnectBound)
	for _, t := range record.MCPTransports {
		_ = m.hub.Wait(wctx, t, record.MCPListed) // what was reached is in the record
	}
	cancel()
	if m.sc == nil {
		return
	}
	// The sentinel's tool is harmless and the model asks for nothing else here: an agent that
	// asks before calling an MCP tool is allowed to, so that "called" measures the agent.
	defer s.SetPermission(s.SetPermission(probe.PermissionAllow))
	for _, t := range record.MCPTransports {
		if ctx.Err() != nil || !s.Alive() {
			return
		}
		tool := m.hub.Tool(t)
		m.sc.srv.SetScript(emulator.ToolThenText(emulator.Containing(tool), func(emulator.Tool) map[string]any { return map[string]any{} },
			record.TurnReply, "the sentinel tool was not offered"))
		m.sc.prompt(ctx, s, text(fmt.Sprintf("Call the tool %s once, then reply with one short line.", tool)))
	}
}
