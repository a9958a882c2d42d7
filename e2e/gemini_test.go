package e2e

import (
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestGeminiCLI probes @google/gemini-cli 0.61.0 run as `gemini --acp` (the pin did not move):
// no API key, so session/new answers -32000 and the probe reports auth_required; it does not
// implement session/set_config_option, so supportsConfigOption is false.
func TestGeminiCLI(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := probeAgent(t, nil, agentArgv(t, "gemini")...)
	r := p.res
	p.wantHandshake(t, geminiHandshake)
	// The gateway login is advertised to every client, whether it declares gateway logins or
	// not.
	wantGatewayProtocols(t, p, map[string]string{"gateway": "google"})

	p.wantError(t, report.ErrAuthRequired, record.StageSessionNew,
		`{"code":-32000,"message":"Gemini API key is missing or not configured."}`)
	check(t, "auth.status", r.Auth.Status, report.AuthRequired)
	check(t, "raw.newSession", string(r.Raw.NewSession), "null")

	// A probe does not wait on the agent after closing its stdin: it signals at once (check
	// waits, and sees it leave by itself: TestCheckGeminiCLI has no stdin-exit finding).
	if r.Exit != nil {
		check(t, "exit.by", r.Exit.By, record.ExitSigterm)
	}
}

// geminiHandshake is gemini-cli 0.61.0's: its logins, the same for every client; method
// detection answered -32603 "Internal error" carrying zod's issue list, a validation failure,
// so the method is there; no session/set_config_option.
var geminiHandshake = handshake{
	name: "gemini-cli", title: "Gemini CLI", version: "0.61.0",
	caps: report.Capabilities{
		LoadSession:        true,
		PromptCapabilities: report.PromptCapabilities{Image: true, Audio: true, EmbeddedContext: true},
		McpCapabilities:    report.McpCapabilities{HTTP: true, SSE: true},
		MetaKeys:           []string{},
	},
	auth:    []authMethod{{ID: "oauth-personal"}, {ID: "gemini-api-key"}, {ID: "vertex-ai"}, {ID: "gateway"}},
	methods: geminiMethods,
}

var geminiMethods = withSchema125Methods(map[string]method{
	acp.MethodSetConfigOption: {report.Unsupported, -32601},
	acp.MethodSetMode:         {report.Supported, -32603},
	acp.MethodSetModel:        {report.Supported, -32603},
	acp.MethodSessionLoad:     {report.Supported, -32603},
	acp.MethodSessionResume:   {report.Unsupported, -32601},
	acp.MethodSessionFork:     {report.Unsupported, -32601},
	acp.MethodSessionList:     {report.Unsupported, -32601},
	acp.MethodSessionClose:    {report.Unsupported, -32601},
	acp.MethodSessionDelete:   {report.Unsupported, -32601},
})
