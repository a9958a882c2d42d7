package clientprofile

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/report"
)

// probed is a result of an agent that answered initialize (loadSession, mcp.http, a gateway
// login, _meta.steering) and made a session with modes.
func probed() *report.Result {
	v := 1
	r := &report.Result{ProtocolVersion: &v, Auth: report.AuthStatus{Status: report.AuthAuthenticated}}
	r.Capabilities.LoadSession = true
	r.Capabilities.McpCapabilities.HTTP = true
	r.AuthMethods = []json.RawMessage{json.RawMessage(`{"id":"api-key","name":"API key"}`),
		json.RawMessage(`{"id":"gateway","name":"Gateway","_meta":{"gateway":{"protocol":"openai"}}}`)}
	r.Raw.Initialize = json.RawMessage(`{"protocolVersion":1,"agentCapabilities":{"_meta":{"vendor":{"x":1}}},"_meta":{"steering":{"supported":true}}}`)
	r.Modes = []acp.Mode{{ID: "default"}, {ID: "plan"}}
	r.Methods = map[string]report.MethodSupport{
		"session/list":  {Support: report.Supported},
		"session/close": {Support: report.Unsupported},
		"session/fork":  {Support: report.Unknown},
	}
	return r
}

// TestCheckVerdicts attacks each outcome of a requirement: met from the report's own field,
// missing when the report shows it absent, unverified when what it rests on was not observed
// (no initialize answer, no session, a login shown only to a client that declares it, a
// method detection that did not decide), and the checklist's verdict as its worst.
func TestCheckVerdicts(t *testing.T) {
	gateway, _ := Get("gateway")
	minimal, _ := Get("minimal")
	authRequired := probed()
	authRequired.Auth.Status = report.AuthRequired
	authRequired.Error = &report.Error{Code: report.ErrAuthRequired, Stage: "session/new"}
	notProbed := &report.Result{Error: &report.Error{Code: report.ErrSpawnFailed}}
	for _, c := range []struct {
		name   string
		r      *report.Result
		client Profile
		want   report.RequirementVerdict
		says   string
	}{
		{"loadSession", probed(), minimal, report.RequirementMet, "agentCapabilities.loadSession is true"},
		{"mcp.http", probed(), minimal, report.RequirementMet, "mcpCapabilities.http"},
		{"mcp.sse", probed(), minimal, report.RequirementMissing, "absent or false"},
		{"sessionCapabilities.close", probed(), minimal, report.RequirementMissing, "sessionCapabilities.close"},
		{"auth.gateway", probed(), gateway, report.RequirementMet, `auth method "gateway"`},
		{"auth.terminal", probed(), gateway, report.RequirementUnverified, "did not declare auth.terminal or _meta.terminal-auth"},
		{"auth.terminal", probed(), Profile{ClientCapabilities: json.RawMessage(`{"auth":{"terminal":true}}`)}, report.RequirementMissing, "api-key, gateway"},
		{"modes", probed(), minimal, report.RequirementMet, "default, plan"},
		{"configOptions", probed(), minimal, report.RequirementMissing, "no config options"},
		{"modes", authRequired, minimal, report.RequirementUnverified, "no session was made (session/new: auth_required)"},
		{"loadSession", authRequired, minimal, report.RequirementMet, ""},
		{"loadSession", notProbed, minimal, report.RequirementUnverified, "did not answer initialize; spawn_failed"},
		{"session/list", probed(), minimal, report.RequirementMet, "supported"},
		{"session/close", probed(), minimal, report.RequirementMissing, "-32601"},
		{"session/fork", probed(), minimal, report.RequirementUnverified, "unknown"},
		{"session/resume", probed(), minimal, report.RequirementUnverified, "did not ask"},
		{"_meta.steering", probed(), minimal, report.RequirementMet, "initialize's _meta.steering"},
		{"_meta.vendor.x", probed(), minimal, report.RequirementMet, "agentCapabilities._meta.vendor.x"},
		{"_meta.jetbrains.air", probed(), minimal, report.RequirementUnverified, "did not declare _meta.jetbrains.air"},
		{"_meta.jetbrains.air", probed(), mustGet("jetbrains"), report.RequirementMissing, "jetbrains.air"},
	} {
		names, err := ParseRequirements(c.name)
		if err != nil {
			t.Fatalf("ParseRequirements(%q): %v", c.name, err)
		}
		got := Check(c.r, c.client, names)
		q := got.Requirements[0]
		if q.Verdict != c.want || got.Verdict != c.want || !strings.Contains(q.Evidence, c.says) || q.Field == "" {
			t.Errorf("%s on %v: %+v (checklist %s), want %s saying %q", c.name, c.r.Error, q, got.Verdict, c.want, c.says)
		}
	}
	// The checklist's verdict is its worst: missing over unverified over met.
	names, _ := ParseRequirements("loadSession,session/fork,mcp.sse,loadSession")
	got := Check(probed(), minimal, names)
	if len(got.Requirements) != 3 || got.Verdict != report.RequirementMissing {
		t.Errorf("checklist = %+v, want 3 requirements (one named twice), missing", got)
	}
	names, _ = ParseRequirements("loadSession,session/fork")
	if got := Check(probed(), minimal, names); got.Verdict != report.RequirementUnverified {
		t.Errorf("met+unverified = %s, want unverified", got.Verdict)
	}
}

func TestParseRequirementsRefusesUnknown(t *testing.T) {
	for _, bad := range []string{"loadsession", "session/nope", "_meta.", "_meta.a..b", "", "loadSession,"} {
		_, err := ParseRequirements(bad)
		if !errors.Is(err, ErrUnknownRequirement) || !strings.Contains(err.Error(), "known: loadSession, prompt.image") ||
			!strings.Contains(err.Error(), "session/list") || !strings.Contains(err.Error(), "_meta.KEY") {
			t.Errorf("ParseRequirements(%q) = %v, want ErrUnknownRequirement listing the vocabulary", bad, err)
		}
	}
}

func mustGet(name string) Profile {
	p, ok := Get(name)
	if !ok {
		panic(name)
	}
	return p
}
