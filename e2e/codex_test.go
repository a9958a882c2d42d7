package e2e

import (
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestCodexACP probes @agentclientprotocol/codex-acp 2.6.0 (a TypeScript adapter over the
// `codex app-server` of @openai/codex 0.166.0; 0.16.0 was a Rust binary): no credentials, so
// session/new answers the ACP auth error -32000 until authenticate, and the probe reports
// auth_required with the two login methods it advertises to a client that opts in to nothing.
func TestCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := probeAgent(t, nil, agentArgv(t, "codex")...)
	r := p.res

	p.wantHandshake(t, codexHandshake)

	p.wantError(t, report.ErrAuthRequired, record.StageSessionNew, `{"code":-32000,"message":"Authentication required"}`)
	check(t, "auth.status", r.Auth.Status, report.AuthRequired)
	check(t, "raw.newSession", string(r.Raw.NewSession), "null")

	// Every request is answered: initialize, session/new, the detection control and one per
	// probed method.
	responses := 0
	for _, f := range p.log.Frames() {
		if f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Response {
			responses++
		}
	}
	check(t, "responses", responses, 3+len(acp.ProbedMethods))

	// A probe signals as soon as it has closed the agent's stdin; the launcher dies by it.
	if r.Exit != nil {
		check(t, "exit.by", r.Exit.By, record.ExitSigterm)
		check(t, "exit.signal", r.Exit.Signal, "SIGTERM")
	}
}

// TestCodexACPOptIn: the logins codex-acp 2.6.0 offers only to a client that asks for them. A
// client that declares gateway logins (auth._meta.gateway, as `acpprobe turn` does on its
// first handshake) also gets `gateway` (_meta.gateway.protocol "openai"), and one that declares
// URL elicitation `chat-gpt-device-code`.
func TestCodexACPOptIn(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := initializeAs(t, optInClient, agentArgv(t, "codex")...)
	p.wantAuthMethods(t, append(append([]authMethod{}, codexHandshake.auth...), authMethod{ID: "chat-gpt-device-code"}, authMethod{ID: "gateway"}))
	wantGatewayProtocols(t, p, map[string]string{"gateway": "openai"})
}

// codexHandshake is codex-acp 2.6.0's (agentInfo.name was codex-acp in 0.16.0). New since
// 0.16.0: session fork, additionalDirectories and delete, the unstable `providers`, and the
// _meta key authStatus (its non-spec sessionCapabilities subagents, title and systemPrompt
// have no field here). Its logins for a client that opts in to none: an API key (from _meta,
// CODEX_API_KEY or OPENAI_API_KEY) and ChatGPT; 0.16.0 had chatgpt and two env_var methods,
// codex-api-key and openai-api-key.
var codexHandshake = handshake{
	name: "@agentclientprotocol/codex-acp", title: "Codex", version: "2.6.0",
	caps: report.Capabilities{
		LoadSession:        true,
		PromptCapabilities: report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:    report.McpCapabilities{HTTP: true},
		SessionCapabilities: report.SessionCapabilities{Close: true, List: true, Resume: true, Fork: true,
			AdditionalDirectories: true, Delete: true},
		Auth:         report.AuthCapabilities{Logout: true},
		Experimental: report.Experimental{Providers: true},
		MetaKeys:     []string{"authStatus"},
	},
	auth:         []authMethod{{ID: "api-key"}, {ID: "chat-gpt"}},
	methods:      codexMethods,
	configOption: true,
}

// codexMethods are codex-acp's answers to method detection: its zod validator refuses the
// params (-32602 with the error tree) before the login is asked for. Changed since 0.16.0:
// session/set_model, session/fork and session/delete answer (0.16.0: -32601).
var codexMethods = withSchema125Methods(map[string]method{
	acp.MethodSessionSetTitle: {report.Supported, -32602}, // the one method of schema >= 1.25 a pin has
	acp.MethodSetConfigOption: {report.Supported, -32602},
	acp.MethodSetMode:         {report.Supported, -32602},
	acp.MethodSetModel:        {report.Supported, -32602},
	acp.MethodSessionLoad:     {report.Supported, -32602},
	acp.MethodSessionResume:   {report.Supported, -32602},
	acp.MethodSessionFork:     {report.Supported, -32602},
	acp.MethodSessionList:     {report.Supported, -32602},
	acp.MethodSessionClose:    {report.Supported, -32602},
	acp.MethodSessionDelete:   {report.Supported, -32602},
})
