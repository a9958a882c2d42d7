package e2e

import (
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestCodeBuddy probes CodeBuddy Code 2.117.0, the CLI @tencent-ai/agent-sdk 0.3.201 bundles,
// run as `node …/cli/bin/codebuddy --acp`. It needs no login for initialize, which carries no
// agentInfo; without CODEBUDDY_API_KEY session/new answers -32000, so the probe reports
// auth_required with its four logins.
func TestCodeBuddy(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := probeAgent(t, nil, agentArgv(t, "codebuddy")...)
	r := p.res

	p.wantHandshake(t, codebuddyHandshake)

	p.wantError(t, report.ErrAuthRequired, record.StageSessionNew,
		`{"code":-32000,"message":"Authentication required","data":{"category":"auth"}}`)
	check(t, "auth.status", r.Auth.Status, report.AuthRequired)
	check(t, "raw.newSession", string(r.Raw.NewSession), "null")

	// It never leaves on stdin EOF (TestCheckCodeBuddy), but a probe signals at once: it exits
	// with status 0 on SIGTERM, and leaves nothing behind.
	if r.Exit != nil {
		check(t, "exit.by", r.Exit.By, record.ExitSigterm)
		check(t, "exit.code", r.Exit.Code, new(0))
	}
	p.wantSurvivors(t)
}

// codebuddyHandshake is CodeBuddy Code 2.117.0's: no agentInfo, four logins (each with
// "description": null).
var codebuddyHandshake = handshake{
	noInfo: true,
	caps: report.Capabilities{
		LoadSession:        true,
		PromptCapabilities: report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:    report.McpCapabilities{HTTP: true, SSE: true},
		MetaKeys:           []string{},
	},
	auth:         []authMethod{{ID: "iOA"}, {ID: "external"}, {ID: "internal"}, {ID: "selfhosted"}},
	methods:      codebuddyMethods,
	configOption: true,
}

// codebuddyMethods are CodeBuddy Code's answers to method detection: zod's -32602 for the
// methods it validates; session/set_model, which it does not validate, fails looking up the
// session ("Session not found: undefined"); session/resume answers though it is not advertised.
var codebuddyMethods = withSchema125Methods(map[string]method{
	acp.MethodSetConfigOption: {report.Supported, -32602},
	acp.MethodSetMode:         {report.Supported, -32602},
	acp.MethodSetModel:        {report.Supported, -32603},
	acp.MethodSessionLoad:     {report.Supported, -32602},
	acp.MethodSessionResume:   {report.Supported, -32602},
	acp.MethodSessionFork:     {report.Unsupported, -32601},
	acp.MethodSessionList:     {report.Unsupported, -32601},
	acp.MethodSessionClose:    {report.Unsupported, -32601},
	acp.MethodSessionDelete:   {report.Unsupported, -32601},
})
