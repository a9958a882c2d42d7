package e2e

import (
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestOpenCode probes opencode-ai 1.18.33 run as `opencode acp` (one Bun binary, linked by the
// package's postinstall): it advertises a terminal login, yet session/new succeeds without it,
// on the free OpenCode Zen models built into the binary, so the probe truthfully reports
// "authenticated" (a prompt would need the network).
func TestOpenCode(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := probeAgent(t, nil, agentArgv(t, "opencode")...)
	r := p.res

	p.wantHandshake(t, opencodeHandshake)

	if r.Error != nil {
		t.Fatalf("error = %v, want none (session/new succeeds without login)", r.Error)
	}
	check(t, "auth.status", r.Auth.Status, report.AuthAuthenticated)
	check(t, "auth.evidence", r.Auth.Evidence, []string{"session/new succeeded without authenticate (the agent advertises 1 authMethods; a prompt may still ask for them)"})
	// No modes: the mode is a config option.
	check(t, "modes", len(r.Modes), 0)
	options := []string{}
	for _, o := range r.ConfigOptions {
		options = append(options, o.ID)
	}
	check(t, "configOptions ids", options, []string{"model", "mode"})
	check(t, "modelConfig", r.ModelConfig, &report.ModelConfig{ConfigID: "model", CurrentValue: "opencode/big-pickle",
		Values: opencodeModels})
	check(t, "models", len(r.Models), 0)
	check(t, "reasoning", r.Reasoning, (*report.Reasoning)(nil))

	if r.Exit != nil {
		check(t, "exit.by", r.Exit.By, record.ExitSigterm)
		check(t, "exit.signal", r.Exit.Signal, "SIGTERM")
	}
	p.wantSurvivors(t)
}

// opencodeHandshake is opencode 1.18.33's (no agentInfo.title). Its one login is a terminal
// command (`opencode auth login`), which it names in the description only.
var opencodeHandshake = handshake{
	name: "OpenCode", version: "1.18.33",
	caps: report.Capabilities{
		LoadSession:         true,
		PromptCapabilities:  report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:     report.McpCapabilities{HTTP: true, SSE: true},
		SessionCapabilities: report.SessionCapabilities{Close: true, List: true, Resume: true, Fork: true},
		MetaKeys:            []string{},
	},
	auth:         []authMethod{{ID: "opencode-login"}},
	methods:      opencodeMethods,
	configOption: true,
}

// opencodeModels are the values of opencode 1.18.33's model option without a provider
// configured: the free OpenCode Zen models of its built-in catalogue.
var opencodeModels = []string{"opencode/big-pickle", "opencode/ling-3.0-flash-fin-free", "opencode/longcat-2.5-preview-free",
	"opencode/mimo-v2.6-flash-free", "opencode/muse-spark-1.3-contributor-free", "opencode/nemotron-3-ultra-free",
	"opencode/nemotron-3.5-lightning-free", "opencode/space-bunny-free"}

// opencodeMethods are opencode's answers to method detection: zod's -32602 for every method
// it has, the legacy session/set_model and session/set_mode (no modes advertised) included.
var opencodeMethods = withSchema125Methods(map[string]method{
	acp.MethodSetConfigOption: {report.Supported, -32602},
	acp.MethodSetMode:         {report.Supported, -32602},
	acp.MethodSetModel:        {report.Supported, -32602},
	acp.MethodSessionLoad:     {report.Supported, -32602},
	acp.MethodSessionResume:   {report.Supported, -32602},
	acp.MethodSessionFork:     {report.Supported, -32602},
	acp.MethodSessionList:     {report.Supported, -32602},
	acp.MethodSessionClose:    {report.Supported, -32602},
	acp.MethodSessionDelete:   {report.Unsupported, -32601},
})
