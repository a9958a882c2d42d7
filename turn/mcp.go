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

// mcpStep is the mcp scenario. It records what the sentinels are, then offers them in fresh
// sessions: the transports the agent advertises (stdio always) together, and each one it does
// not advertise in a session of its own, so that an agent that refuses a whole session/new for
// one unadvertised server (codex-acp 2.6.0 with sse) still shows what it does with the others.
// It waits for the agent to list their tools, then, with a route to the model, asks the model
// to call each sentinel's tool in a turn of its own on the session that carries it: the tool
// must be offered to the model, called by the agent, and its result must come back in the next
// model request. Without a route only what the agent does by itself (connect, list) is
// observed.
type mcpStep struct {
	hub *sentinel.Hub
	sc  *scene // nil without a route to the model
	// open makes a session (scene.open); it is the scene's own, also without a route.
	open func(ctx context.Context, s *probe.Session, name string, servers []any) (*live, bool)
}

func (mcpStep) Name() string { return record.ScenarioMCP.StepName() }

func (m mcpStep) Run(ctx context.Context, s *probe.Session) {
	// The sentinels end with the scenario (the last one), so that nothing reaches them, and
	// nothing is recorded, after the record is analysed.
	defer m.hub.Close()
	record.MCPSentinels.Emit(s.Log(), m.hub.Setup())
	sessions := map[record.MCPTransport]*live{}
	for _, group := range transportGroups(s.Initialize) {
		servers := make([]any, len(group))
		for i, t := range group {
			servers[i] = m.hub.Server(t)
		}
		l, ok := m.open(ctx, s, m.Name(), servers)
		if !ok {
			continue // refused: its answer says how, and the milestones stop at delivered
		}
		for _, t := range group {
			sessions[t] = l
		}
	}
	wctx, cancel := context.WithTimeout(ctx, mcpConnectBound)
	for _, t := range record.MCPTransports {
		if sessions[t] != nil {
			_ = m.hub.Wait(wctx, t, record.MCPListed) // what was reached is in the record
		}
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
		l := sessions[t]
		if l == nil {
			continue
		}
		tool := m.hub.Tool(t)
		m.sc.srv.SetScript(emulator.ToolThenText(emulator.Containing(tool), func(emulator.Tool) map[string]any { return map[string]any{} },
			record.TurnReply, "the sentinel tool was not offered"))
		m.sc.promptOn(ctx, s, l.id, text(fmt.Sprintf("Call the tool %s once, then reply with one short line.", tool)))
	}
}

// transportGroups are the sessions the sentinels are offered in, given the agent's initialize
// result: the advertised transports together (stdio always), then each unadvertised one alone.
func transportGroups(initialize []byte) [][]record.MCPTransport {
	advertised := record.AdvertisedTransports(initialize)
	var together []record.MCPTransport
	var alone [][]record.MCPTransport
	for _, t := range record.MCPTransports {
		if advertised[t] {
			together = append(together, t)
		} else {
			alone = append(alone, []record.MCPTransport{t})
		}
	}
	return append([][]record.MCPTransport{together}, alone...)
}
