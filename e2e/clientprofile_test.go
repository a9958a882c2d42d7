package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/report"
)

// surfaceProfiles are the profiles the surface tests probe as, poorest first.
var surfaceProfiles = []string{"minimal", "zed", "jetbrains", "gateway"}

// shown is one difference an agent must show, by the profiles it was shown to.
type shown struct {
	item string
	to   []string
}

// TestClientProfileSurface runs `acpprobe probe --client-profile minimal,zed,jetbrains,gateway`
// on claude-agent-acp 0.101.0 and codex-acp 2.6.0 and asserts, from the live wire, what only a
// richer client is shown (research notes Q2): the gateway logins only to the gateway client,
// claude's terminal logins and codex's device-code login only to Zed (auth.terminal and
// _meta["terminal-auth"]; URL elicitation), the JetBrains AIR extension family only to AIR.
func TestClientProfileSurface(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	for _, c := range []struct {
		agent string
		env   []string
		exit  int
		want  []shown
	}{
		// IS_SANDBOX empty: as root, IS_SANDBOX=yes makes claude's session/new fail.
		{agent: "claude", env: []string{"IS_SANDBOX="}, exit: 0, want: []shown{
			{`initialize.authMethods[gateway]`, []string{"gateway"}},
			{`initialize.authMethods[gateway]._meta.gateway.protocol = "anthropic"`, []string{"gateway"}},
			{`initialize.authMethods[gateway-bedrock]._meta.gateway.protocol = "bedrock"`, []string{"gateway"}},
			{`initialize.authMethods[claude-ai-login]`, []string{"zed"}},
			{`initialize.authMethods[console-login]`, []string{"zed"}},
			{`initialize.authMethods[claude-ai-login]._meta.terminal-auth.label = "Claude Login"`, []string{"zed"}},
			{`initialize._meta.jetbrains.air.version = 1`, []string{"jetbrains"}},
			{`initialize._meta.jetbrains.air.goal.controlMethod = "_session/goal"`, []string{"jetbrains"}},
			{`initialize.agentCapabilities.sessionCapabilities.subagents = {}`, []string{"jetbrains"}},
			{`session/new.modes.availableModes[plan]._meta.jetbrains.air.kind = "plan"`, []string{"jetbrains"}},
			// Zed declares boolean config options: claude's on/off options become booleans.
			{`session/new.configOptions[fast].type = "boolean"`, []string{"zed"}},
		}},
		// codex needs a login: session/new is auth_required for every profile (exit 4).
		{agent: "codex", exit: 4, want: []shown{
			{`initialize.authMethods[gateway]`, []string{"gateway"}},
			{`initialize.authMethods[gateway]._meta.gateway.protocol = "openai"`, []string{"gateway"}},
			{`initialize.authMethods[chat-gpt-device-code]`, []string{"zed"}},
			{`initialize._meta.jetbrains.air.version = 1`, []string{"jetbrains"}},
			{`initialize._meta.jetbrains.air.capabilities[] codexHooks`, []string{"jetbrains"}},
		}},
	} {
		t.Run(c.agent, func(t *testing.T) {
			t.Parallel()
			box := newSandbox(t, c.env...)
			args := append([]string{"--json", "--client-profile", strings.Join(surfaceProfiles, ","), "--"}, agentArgv(t, c.agent)...)
			code, stdout, stderr := runCLI(t, box, "probe", args...)
			check(t, "exit code", code, c.exit)
			var s report.Surface
			if err := json.Unmarshal([]byte(stdout), &s); err != nil {
				t.Fatalf("stdout is not a surface document: %v\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			check(t, "schema", s.Schema, report.SurfaceSchema)
			if len(s.Profiles) != len(surfaceProfiles) {
				t.Fatalf("%d profiles, want %d", len(s.Profiles), len(surfaceProfiles))
			}
			for i, run := range s.Profiles {
				check(t, "profile", run.Profile, surfaceProfiles[i])
				if run.Result == nil || run.Result.Client == nil || run.Result.Client.Profile != run.Profile {
					t.Errorf("%s: result's client section = %s", run.Profile, show(run.Result.Client))
				}
				checkGone(t, box, *run.Result)
			}
			got := map[string][]string{}
			for _, d := range s.Differences {
				got[d.Item] = d.In
			}
			for _, w := range c.want {
				if in, ok := got[w.item]; !ok || !slices.Equal(in, w.to) {
					t.Errorf("difference %s shown to %v (found %v), want %v", w.item, in, ok, w.to)
				}
			}
			// What every client is shown is no difference: the minimal client's agentInfo.
			for item := range got {
				if strings.HasPrefix(item, "initialize.agentInfo") {
					t.Errorf("agentInfo differs by client: %s", item)
				}
			}
		})
	}
}

// TestClientProfileRequire runs --require on codex-acp as the gateway client: each outcome on
// a live agent — its gateway login and loadSession met, mcp.sse missing (codex advertises
// MCP over HTTP only; exit 6), and its modes unverified (session/new needs a login;
// exit 7 without the missing one), never a pass.
func TestClientProfileRequire(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	argv := agentArgv(t, "codex")
	for _, c := range []struct {
		require string
		exit    int
		want    map[string]report.RequirementVerdict
	}{
		{"auth.gateway,loadSession,modes", 7, map[string]report.RequirementVerdict{
			"auth.gateway": report.RequirementMet, "loadSession": report.RequirementMet, "modes": report.RequirementUnverified}},
		{"auth.gateway,mcp.sse,modes", 6, map[string]report.RequirementVerdict{
			"auth.gateway": report.RequirementMet, "mcp.sse": report.RequirementMissing, "modes": report.RequirementUnverified}},
		{"auth.gateway,loadSession", 0, map[string]report.RequirementVerdict{
			"auth.gateway": report.RequirementMet, "loadSession": report.RequirementMet}},
	} {
		t.Run(c.require, func(t *testing.T) {
			t.Parallel()
			box := newSandbox(t)
			args := append([]string{"--json", "--no-methods", "--client-profile", "gateway", "--require", c.require, "--"}, argv...)
			code, stdout, _ := runCLI(t, box, "probe", args...)
			check(t, "exit code", code, c.exit)
			res := resultDoc(t, stdout)
			if res.Requirements == nil {
				t.Fatalf("no requirements in the result")
			}
			for _, q := range res.Requirements.Requirements {
				if want, ok := c.want[q.Name]; !ok || q.Verdict != want || q.Evidence == "" {
					t.Errorf("%s: %s (%s), want %s", q.Name, q.Verdict, q.Evidence, want)
				}
			}
			check(t, "requirements", len(res.Requirements.Requirements), len(c.want))
		})
	}
}

// TestClientProfileTurn runs a prompt turn on codex-acp as Zed: its route is a gateway login,
// so the run declares Zed's capabilities with auth._meta.gateway, and the report's client
// section says so from the recorded initialize; the turn passes.
func TestClientProfileTurn(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	box := newSandbox(t)
	args := append([]string{"--json", "--client-profile", "zed", "--scenario", "completion", "--"}, agentArgv(t, "codex")...)
	_, stdout, stderr := runCLI(t, box, "turn", args...)
	res := resultDoc(t, stdout)
	if res.Client == nil {
		t.Fatalf("no client section; stderr:\n%s", stderr)
	}
	for _, c := range []string{"auth._meta.gateway", "fs.readTextFile", "_meta.terminal-auth", "elicitation.url"} {
		if !slices.Contains(res.Client.Declared, c) {
			t.Errorf("client.declared = %q, want it to hold %s", res.Client.Declared, c)
		}
	}
	if res.Route == nil || res.Route.Authenticate != "gateway" {
		t.Errorf("route = %s, want codex's gateway login", show(res.Route))
	}
	if len(res.Turns) != 1 || res.Turns[0].Outcome != report.TurnPassed {
		t.Errorf("turns = %s, want completion passed", show(res.Turns))
	}
	checkGone(t, box, res)
}
