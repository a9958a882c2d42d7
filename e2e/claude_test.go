package e2e

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// claudeCases are the three IS_SANDBOX cases every claude-agent-acp test runs (see
// TestClaudeAgentACP): as root, IS_SANDBOX=yes makes session/new fail.
var claudeCases = []struct {
	name string
	env  []string
	// refused: session/new fails (as root with IS_SANDBOX=yes).
	refused bool
	// bypass: the bypassPermissions mode is offered (when session/new succeeds).
	bypass bool
}{
	{name: "IS_SANDBOX=yes", env: []string{"IS_SANDBOX=yes"}, refused: os.Geteuid() == 0, bypass: true},
	{name: "IS_SANDBOX unset", bypass: os.Geteuid() != 0},
	{name: "IS_SANDBOX=1", env: []string{"IS_SANDBOX=1"}, bypass: true},
}

// TestClaudeAgentACP probes @agentclientprotocol/claude-agent-acp 0.101.0 (which bundles Claude
// Code 2.1.318, the native `claude` of @anthropic-ai/claude-agent-sdk-linux-x64). It advertises
// no authMethods.
//
// What its session/new does depends on the user and on IS_SANDBOX, not on credentials. The
// adapter offers the bypassPermissions mode, and starts Claude Code with
// --allow-dangerously-skip-permissions, unless it runs as root with IS_SANDBOX empty
// (permissions/modes.js: ALLOW_BYPASS = !IS_ROOT || !!IS_SANDBOX); Claude Code refuses that flag
// as root unless IS_SANDBOX is exactly "1". So as root with IS_SANDBOX=yes session/new fails:
// -32603 "Internal error: --dangerously-skip-permissions cannot be used with root/sudo privileges
// for security reasons", data {"startupFailureReason":"bypass_root"} (0.23.1 answered a bare
// "Internal error" with data.details "Query closed before response received"). Nothing names
// authentication, and the probe must say "unknown", not guess auth_required. Everywhere else
// session/new succeeds without any login (a prompt would then fail), and the probe truthfully
// reports "authenticated", with modes and config options.
func TestClaudeAgentACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	argv := agentArgv(t, "claude")
	for _, tc := range claudeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := probeAgent(t, tc.env, argv...)
			checkClaudeHandshake(t, p)
			if tc.refused {
				checkClaudeRefusedAsRoot(t, p)
			} else {
				checkClaudeSession(t, p, tc.bypass)
			}
		})
	}
}

// TestClaudeAgentACPOptIn: to a client that declares gateway logins (optInClient, as `acpprobe
// turn` does on its first handshake), claude-agent-acp 0.101.0 offers two, the Anthropic and the
// Bedrock protocol, where it offers none to other clients (0.23.1 offered none to anyone).
func TestClaudeAgentACPOptIn(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	p := initializeAs(t, optInClient, agentArgv(t, "claude")...)
	p.wantAuthMethods(t, []authMethod{{ID: "gateway"}, {ID: "gateway-bedrock"}})
	wantGatewayProtocols(t, p, map[string]string{"gateway": "anthropic", "gateway-bedrock": "bedrock"})
}

// claudeHandshake is claude-agent-acp 0.101.0's: the package moved from @zed-industries to
// @agentclientprotocol, and agentInfo.name with it. New since 0.23.1: sessionCapabilities
// additionalDirectories and delete, auth.logout, the unstable `providers`, and the _meta key
// authStatus next to claudeCode. No login for a client that declares none.
var claudeHandshake = handshake{
	name: "@agentclientprotocol/claude-agent-acp", title: "Claude Agent", version: "0.101.0",
	caps: report.Capabilities{
		LoadSession:        true,
		PromptCapabilities: report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:    report.McpCapabilities{HTTP: true, SSE: true},
		SessionCapabilities: report.SessionCapabilities{Close: true, List: true, Resume: true, Fork: true,
			AdditionalDirectories: true, Delete: true},
		Auth:         report.AuthCapabilities{Logout: true},
		Experimental: report.Experimental{Providers: true},
		MetaKeys:     []string{"authStatus", "claudeCode"},
	},
	auth:         []authMethod{},
	methods:      claudeMethods,
	configOption: true,
}

// checkClaudeHandshake asserts what does not depend on session/new.
func checkClaudeHandshake(t *testing.T, p probed) {
	t.Helper()
	r := p.res
	p.wantHandshake(t, claudeHandshake)

	// A probe does not wait on the agent after closing its stdin: it signals at once. The
	// adapter catches SIGTERM and exits with status 0 (0.23.1 died by the signal).
	if r.Exit != nil {
		check(t, "exit.by", r.Exit.By, record.ExitSigterm)
		check(t, "exit.code", r.Exit.Code, new(0))
		check(t, "exit.signal", r.Exit.Signal, "")
	}
}

// checkClaudeRefusedAsRoot asserts the outcome as root with IS_SANDBOX=yes: session/new
// fails, cause unknown; Claude Code exited at its start, so nothing of it is left for the
// teardown.
func checkClaudeRefusedAsRoot(t *testing.T, p probed) {
	t.Helper()
	r := p.res
	p.wantError(t, report.ErrUnknown, record.StageSessionNew,
		`{"code":-32603,"message":"Internal error: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons","data":{"startupFailureReason":"bypass_root"}}`)
	check(t, "auth.status", r.Auth.Status, report.AuthUnknown)
	check(t, "raw.newSession", string(r.Raw.NewSession), "null")
	checkClaudeSurvivors(t, r.Exit, false, false)
}

// checkClaudeSession asserts a session created without login; bypass says whether the
// bypassPermissions mode is offered.
func checkClaudeSession(t *testing.T, p probed, bypass bool) {
	t.Helper()
	r := p.res
	if r.Error != nil {
		t.Fatalf("error = %v, want none (session/new succeeds without login)", r.Error)
	}
	check(t, "auth.status", r.Auth.Status, report.AuthAuthenticated)
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(r.Raw.NewSession, &s); err != nil || s.SessionID == "" {
		t.Fatalf("raw.newSession has no sessionId (%v): %s", err, r.Raw.NewSession)
	}

	// 0.23.1 had dontAsk and started in default; 0.101.0 has auto ("Claude handles permission
	// decisions") instead, and starts in it.
	modes := []string{}
	for _, m := range r.Modes {
		modes = append(modes, m.ID)
	}
	wantModes := []string{"default", "acceptEdits", "plan", "auto"}
	if bypass {
		wantModes = append(wantModes, "bypassPermissions")
	}
	check(t, "modes", modes, wantModes)
	check(t, "currentModeId", r.CurrentModeID, "auto")
	options := []string{}
	for _, o := range r.ConfigOptions {
		options = append(options, o.ID)
	}
	check(t, "configOptions ids", options, []string{"mode", "model", "effort", "fast", "ultracode"})
	check(t, "modelConfig", r.ModelConfig, &report.ModelConfig{ConfigID: "model", CurrentValue: "default",
		Values: []string{"default", "opus", "fable", "sonnet", "haiku"}})
	// The legacy `models` of session/new's answer is gone (0.23.1 sent it, the same list).
	check(t, "models", len(r.Models), 0)
	check(t, "reasoning", r.Reasoning, &report.Reasoning{ConfigID: "effort", DefaultValue: "default",
		Values: []string{"default", "low", "medium", "high", "xhigh", "max"}})

	// session/close is advertised, so the teardown closes the live session first.
	closed := false
	for _, f := range p.log.Frames() {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == acp.MethodSessionClose &&
			acp.ParseObject(f.Msg.Params).String("sessionId") == s.SessionID {
			closed = true
		}
	}
	if !closed {
		t.Errorf("the teardown did not send session/close for session %s", s.SessionID)
	}
	// Whether the session's Claude Code is still there when the teardown looks is a race
	// (claudeSessionWhy): in CI it had left once in about ten probes.
	checkClaudeSurvivors(t, r.Exit, true, true)
}

// claudeCodeSurvivor is the kernel name of the Claude Code processes the adapter starts.
const claudeCodeSurvivor = "claude"

// claudeAuthStatusWhy is why a survivor `claude auth status --json` is allowed, not required:
// the adapter runs it after initialize to push its login state (_auth/status_update), and under
// load it can still be running when the teardown comes.
const claudeAuthStatusWhy = "the adapter's `claude auth status --json`, run after initialize, may still be running at the teardown"

// claudeSessionWhy is why the session's Claude Code is allowed, not required, to outlive
// claude-agent-acp under check: check waits for the adapter to leave on EOF (within 0.1–0.3 s),
// and Claude Code, closed by session/close and EOF, leaves 0.3–2 s later, ignoring SIGTERM
// meanwhile; who is first is a race (a probe, which signals at once, always finds it).
// codexStdinWhy: codex-acp 2.6.0 is still running 2 s after its stdin closes in every run here
// (six checks by hand, every e2e run but one), and is then signalled: protocol.stdin-exit. One
// CI run, under the whole suite's load, had no such finding; the test asserts the finding
// agrees with how the agent left whichever way it went.
const codexStdinWhy = "codex-acp stays past the 2 s wait after EOF in all but one observed run"

const claudeSessionWhy = "the session's Claude Code leaves 0.3-2 s after session/close and EOF, a race with check's wait for the adapter"

// checkClaudeSurvivors asserts what of claude-agent-acp outlived it, each killed: with a
// session (session), its Claude Code (`claude --output-format stream-json …`), which, once
// session/close and EOF came, takes up to about 2 s to leave and ignores SIGTERM meanwhile —
// required unless mayLeave (claudeSessionWhy); allowed in any case, the `claude auth status
// --json` of claudeAuthStatusWhy; nothing else.
func checkClaudeSurvivors(t *testing.T, x *record.ExitInfo, session, mayLeave bool) {
	t.Helper()
	if x == nil {
		t.Error("exit is nil")
		return
	}
	sessions := 0
	for _, s := range x.Survivors {
		t.Logf("survivor %s %q (found %s, killed %v)", s.Command, s.Argv, s.Found, s.Killed)
		switch {
		case s.Command != claudeCodeSurvivor || !s.Killed:
			t.Errorf("survivor %+v: want a killed %s", s, claudeCodeSurvivor)
		case slices.Contains(s.Argv, "stream-json"):
			sessions++
		case slices.Equal(s.Argv[1:], []string{"auth", "status", "--json"}):
			t.Logf("allowed survivor (%s)", claudeAuthStatusWhy)
		default:
			t.Errorf("survivor %+v is neither the session's Claude Code nor its auth status", s)
		}
	}
	switch {
	case !session && sessions > 0:
		t.Errorf("%d survivors are a session's Claude Code, but no session was made", sessions)
	case session && sessions == 0 && mayLeave:
		t.Logf("the session's Claude Code left before the teardown found it (allowed: %s)", claudeSessionWhy)
	case session && sessions != 1:
		t.Errorf("%d survivors are the session's Claude Code, want 1", sessions)
	}
	check(t, "exit.groupKilled", x.GroupKilled, len(x.Survivors) > 0)
}

// claudeMethods are claude-agent-acp's answers to method detection, with invalid params: the
// SDK's zod validator answers -32602 with its error tree before any handler runs, so no Claude
// Code process starts. The same answers with or without a live session. Changed since 0.23.1:
// session/set_model is gone (-32601), session/delete is there.
var claudeMethods = withSchema125Methods(map[string]method{
	acp.MethodSetConfigOption: {report.Supported, -32602},
	acp.MethodSetMode:         {report.Supported, -32602},
	acp.MethodSetModel:        {report.Unsupported, -32601},
	acp.MethodSessionLoad:     {report.Supported, -32602},
	acp.MethodSessionResume:   {report.Supported, -32602},
	acp.MethodSessionFork:     {report.Supported, -32602},
	acp.MethodSessionList:     {report.Supported, -32602}, // {"cwd": 1}
	acp.MethodSessionClose:    {report.Supported, -32602},
	acp.MethodSessionDelete:   {report.Supported, -32602},
})
