package e2e

import (
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestCodexACP probes @zed-industries/codex-acp 0.16.0: no credentials, so session/new answers
// the ACP auth error -32000 and the probe reports auth_required with the three advertised
// login methods.
func TestCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := probeAgent(t, nil, agentBin(t, "codex-acp"))
	r := p.res

	check(t, "protocolVersion", r.ProtocolVersion, new(1))
	check(t, "agentInfo.name", r.AgentInfo.Name, "codex-acp")
	check(t, "agentInfo.title", r.AgentInfo.Title, "Codex")
	check(t, "agentInfo.version", r.AgentInfo.Version, "0.16.0")
	check(t, "capabilities", r.Capabilities, report.Capabilities{
		LoadSession:         true,
		PromptCapabilities:  report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:     report.McpCapabilities{HTTP: true},
		SessionCapabilities: report.SessionCapabilities{Close: true, List: true, Resume: true},
		Auth:                report.AuthCapabilities{Logout: true},
		MetaKeys:            []string{},
	})
	p.wantAuthMethods(t, []authMethod{
		{ID: "chatgpt"},
		{ID: "codex-api-key", Type: "env_var", Vars: []string{"CODEX_API_KEY"}},
		{ID: "openai-api-key", Type: "env_var", Vars: []string{"OPENAI_API_KEY"}},
	})

	p.wantError(t, report.ErrAuthRequired, record.StageSessionNew, `{"code":-32000,"message":"Authentication required"}`)
	check(t, "auth.status", r.Auth.Status, report.AuthRequired)
	check(t, "raw.newSession", string(r.Raw.NewSession), "null")

	p.wantMethods(t, codexMethods)
	check(t, "supportsConfigOption", r.SupportsConfigOption, new(true))

	// codex-acp writes "id" as the last key of every response; matching must not care.
	responses := 0
	for _, f := range p.log.Frames() {
		if f.Dir != jsonrpc.DirAgent || f.Msg == nil || f.Msg.Kind() != jsonrpc.Response {
			continue
		}
		responses++
		if k, err := lastKey(f.Raw); err != nil || k != "id" {
			t.Errorf("response frame %d: last key %q (%v), want \"id\": %.200s", f.Seq, k, err, f.Raw)
		}
	}
	// initialize, session/new, the detection control and one per probed method.
	check(t, "responses", responses, 3+len(acp.ProbedMethods))

	// Its node launcher does not leave when stdin closes: the ladder has to SIGTERM it.
	if r.Exit != nil {
		check(t, "exit.by", r.Exit.By, record.ExitSigterm)
	}
}

// codexMethods are codex-acp's answers to method detection: serde refuses the params (-32602
// "missing field …") before the login is asked for.
var codexMethods = map[string]method{
	acp.MethodSetConfigOption: {report.Supported, -32602},
	acp.MethodSetMode:         {report.Supported, -32602},
	acp.MethodSetModel:        {report.Unsupported, -32601},
	acp.MethodSessionLoad:     {report.Supported, -32602},
	acp.MethodSessionResume:   {report.Supported, -32602},
	acp.MethodSessionFork:     {report.Unsupported, -32601},
	acp.MethodSessionList:     {report.Supported, -32602},
	acp.MethodSessionClose:    {report.Supported, -32602},
	acp.MethodSessionDelete:   {report.Unsupported, -32601},
}
