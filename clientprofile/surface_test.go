package clientprofile

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/report"
)

// TestSurfaceDifferences checks the difference table on the answers claude-agent-acp 0.101.0
// gave a minimal and a gateway client and an AIR client (research captures, cut down): one
// line per item not every profile was shown, the session id never one of them.
func TestSurfaceDifferences(t *testing.T) {
	minimal := &report.Result{Raw: report.Raw{
		Initialize: json.RawMessage(`{"protocolVersion":1,"authMethods":[],"agentCapabilities":{"loadSession":true},"_meta":{"steering":{"supported":true}}}`),
		NewSession: json.RawMessage(`{"sessionId":"a","modes":{"availableModes":[{"id":"default"}]}}`)},
		Auth: report.AuthStatus{Status: report.AuthAuthenticated}}
	gateway := &report.Result{Raw: report.Raw{
		Initialize: json.RawMessage(`{"protocolVersion":1,"authMethods":[{"id":"gateway","_meta":{"gateway":{"protocol":"anthropic"}}}],"agentCapabilities":{"loadSession":true},"_meta":{"steering":{"supported":true}}}`),
		NewSession: json.RawMessage(`{"sessionId":"b","modes":{"availableModes":[{"id":"default"}]}}`)},
		Auth: report.AuthStatus{Status: report.AuthAuthenticated}}
	air := &report.Result{Raw: report.Raw{
		Initialize: json.RawMessage(`{"protocolVersion":1,"authMethods":[],"agentCapabilities":{"loadSession":true,"sessionCapabilities":{"subagents":{}}},"_meta":{"jetbrains":{"air":{"version":1,"capabilities":["sessionIndex","asyncTasks"]}},"steering":{"supported":true}}}`),
		NewSession: json.RawMessage(`{"sessionId":"c","modes":{"availableModes":[{"id":"default","_meta":{"jetbrains":{"air":{"kind":"standard"}}}}]}}`)},
		Auth: report.AuthStatus{Status: report.AuthAuthenticated}}
	s := Surface([]report.ProfileRun{{Profile: "minimal", Result: minimal}, {Profile: "gateway", Result: gateway}, {Profile: "jetbrains", Result: air}})
	var got []string
	for _, d := range s.Differences {
		got = append(got, fmt.Sprintf("%s | %s | %s | %s", d.Kind, d.Item, strings.Join(d.In, ","), strings.Join(d.NotIn, ",")))
	}
	want := []string{
		`auth method | initialize.authMethods = [] | minimal,jetbrains | gateway`,
		`auth method | initialize.authMethods[gateway] | gateway | minimal,jetbrains`,
		`auth method | initialize.authMethods[gateway]._meta.gateway.protocol = "anthropic" | gateway | minimal,jetbrains`,
		`_meta | initialize._meta.jetbrains.air.capabilities[] asyncTasks | jetbrains | minimal,gateway`,
		`_meta | initialize._meta.jetbrains.air.capabilities[] sessionIndex | jetbrains | minimal,gateway`,
		`_meta | initialize._meta.jetbrains.air.version = 1 | jetbrains | minimal,gateway`,
		`capability | initialize.agentCapabilities.sessionCapabilities.subagents = {} | jetbrains | minimal,gateway`,
		`mode | session/new.modes.availableModes[default]._meta.jetbrains.air.kind = "standard" | jetbrains | minimal,gateway`,
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if s.Schema != report.SurfaceSchema || len(s.Profiles) != 3 {
		t.Errorf("surface = %s with %d profiles", s.Schema, len(s.Profiles))
	}
	if d := Surface([]report.ProfileRun{{Profile: "a", Result: minimal}, {Profile: "b", Result: minimal}}).Differences; len(d) != 0 {
		t.Errorf("identical runs differ: %v", d)
	}
}

// TestSurfaceBounded attacks the flattening with an answer an agent made huge and deep: the
// items stay bounded.
func TestSurfaceBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"_meta":{"many":[`)
	for i := range 3 * maxItems {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"k%d"`, i)
	}
	b.WriteString(`],"deep":` + strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200) + `}}`)
	items := itemsOf(&report.Result{Raw: report.Raw{Initialize: json.RawMessage(b.String())}})
	if len(items) != maxItems {
		t.Errorf("%d items, want the bound %d", len(items), maxItems)
	}
	deep := itemsOf(&report.Result{Raw: report.Raw{Initialize: json.RawMessage(strings.Repeat(`{"a":`, 200) + `1` + strings.Repeat(`}`, 200))}})
	if len(deep) != 1 || !strings.HasSuffix(deep[0], "(nested too deep)") {
		t.Errorf("deep = %v", deep)
	}
}

// TestCheckAcrossKeepsTheBest: a gateway login missing for the minimal client (unverified: it
// did not declare the gateway) and met for the gateway client is met across them.
func TestCheckAcrossKeepsTheBest(t *testing.T) {
	noGateway := probed()
	noGateway.AuthMethods = nil
	names, _ := ParseRequirements("auth.gateway,mcp.sse")
	c := CheckAcross([]report.ProfileRun{{Profile: "minimal", Result: noGateway}, {Profile: "gateway", Result: probed()}},
		[]Profile{mustGet("minimal"), mustGet("gateway")}, names)
	if c.Requirements[0].Verdict != report.RequirementMet || !strings.HasPrefix(c.Requirements[0].Evidence, "gateway: ") ||
		c.Requirements[1].Verdict != report.RequirementMissing || c.Verdict != report.RequirementMissing {
		t.Errorf("across = %+v", c)
	}
}

// TestSurfaceCollapsesWhatAHolderSays: a login only zed was shown is one line, with its _meta
// values (not its name, type or arguments) — the table stays one line per difference.
func TestSurfaceCollapsesWhatAHolderSays(t *testing.T) {
	plain := &report.Result{Raw: report.Raw{Initialize: json.RawMessage(`{"authMethods":[{"id":"api"}]}`)}}
	zed := &report.Result{Raw: report.Raw{Initialize: json.RawMessage(`{"authMethods":[{"id":"api"},` +
		`{"id":"claude-ai-login","name":"Claude","type":"terminal","args":["--cli","login"],"_meta":{"terminal-auth":{"command":"node","args":["x","login"]}}}]}`)}}
	var got []string
	for _, d := range Surface([]report.ProfileRun{{Profile: "minimal", Result: plain}, {Profile: "zed", Result: zed}}).Differences {
		got = append(got, d.Item)
	}
	want := []string{`initialize.authMethods[claude-ai-login]`, `initialize.authMethods[claude-ai-login]._meta.terminal-auth.command = "node"`}
	if !slices.Equal(got, want) {
		t.Errorf("differences %q, want %q", got, want)
	}
}

// TestSurfaceExtensions: a vendor method the agent sent only to one profile is a difference;
// one only the client sent is not.
func TestSurfaceExtensions(t *testing.T) {
	plain := &report.Result{Extensions: &extensions.Inventory{
		Methods: []extensions.SeenMethod{{Name: "_client/ping", Observed: []extensions.Direction{extensions.DirectionClientToAgent}}}}}
	air := &report.Result{Extensions: &extensions.Inventory{
		Methods: []extensions.SeenMethod{{Name: "_client/ping", Observed: []extensions.Direction{extensions.DirectionClientToAgent}},
			{Name: "_session/goal", Observed: []extensions.Direction{extensions.DirectionAgentToClient}},
			{Name: "_session/steer", Observed: []extensions.Direction{extensions.DirectionBoth}}}}}
	var got []string
	for _, d := range Surface([]report.ProfileRun{{Profile: "minimal", Result: plain}, {Profile: "jetbrains", Result: air}}).Differences {
		got = append(got, d.Kind+": "+d.Item+" "+strings.Join(d.In, ","))
	}
	want := []string{"extension: extension method _session/goal jetbrains", "extension: extension method _session/steer jetbrains"}
	if !slices.Equal(got, want) {
		t.Errorf("differences %q, want %q", got, want)
	}
}
