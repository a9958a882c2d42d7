package derive

import (
	"encoding/json"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestJudgeAuth: the auth oracle's answer for each combination of the two identities'
// signals, and that it keeps the evidence of both.
func TestJudgeAuth(t *testing.T) {
	code := -32000
	id := func(identity record.Identity, sessionNew record.SessionNewOutcome, methods int, status string) record.AuthIdentityInfo {
		f := record.AuthIdentityInfo{Identity: identity, Isolation: record.LevelNone, SessionNew: sessionNew, AuthStatus: status,
			StatusUpdates: []string{}, Credentials: []string{}}
		if identity == record.IdentityIsolated {
			f.Isolation = record.LevelEnvHome
		}
		if sessionNew == record.SessionNewAuthError {
			f.Code, f.Message = &code, "Authentication required"
		}
		for range methods {
			f.AuthMethods = append(f.AuthMethods, "login (agent)")
		}
		return f
	}
	pushed := func(f record.AuthIdentityInfo, updates ...string) record.AuthIdentityInfo {
		f.StatusUpdates = updates
		return f
	}
	const (
		user, iso = record.IdentityUser, record.IdentityIsolated
		ok, auth  = record.SessionNewOK, record.SessionNewAuthError
		other     = record.SessionNewError
	)
	cases := []struct {
		name string
		ids  []record.AuthIdentityInfo
		want report.AuthClass
	}{
		{"works for anyone, nothing advertised", []record.AuthIdentityInfo{id(user, ok, 0, ""), id(iso, ok, 0, "")}, report.AuthClassNoAuthNeeded},
		{"auth/status says not required", []record.AuthIdentityInfo{id(user, ok, 1, ""), id(iso, ok, 1, "not_required")}, report.AuthClassNoAuthNeeded},
		{"works for you only", []record.AuthIdentityInfo{id(user, ok, 1, ""), id(iso, auth, 1, "")}, report.AuthClassAuthenticated},
		{"works for you, fails otherwise isolated", []record.AuthIdentityInfo{id(user, ok, 1, ""), id(iso, other, 1, "")}, report.AuthClassAuthenticated},
		{"refused in both, methods advertised", []record.AuthIdentityInfo{id(user, auth, 2, ""), id(iso, auth, 2, "")}, report.AuthClassRequired},
		{"refused, nothing advertised", []record.AuthIdentityInfo{id(user, auth, 0, ""), id(iso, auth, 0, "")}, report.AuthClassHidden},
		{"session works, status says signed out", []record.AuthIdentityInfo{id(user, ok, 1, ""), id(iso, ok, 1, "unauthenticated")}, report.AuthClassRequired},
		{"session works, the vendor push says not logged in", []record.AuthIdentityInfo{id(user, ok, 1, ""), pushed(id(iso, ok, 1, ""), "account (a@b.c)", "none (Not logged in)")}, report.AuthClassRequired},
		{"session works, the vendor push says logged in", []record.AuthIdentityInfo{id(user, ok, 1, ""), pushed(id(iso, ok, 1, ""), "none (Not logged in)", "api_key (ANTHROPIC_API_KEY)")}, report.AuthClassUnknown},
		{"session works, methods advertised: only a prompt would tell", []record.AuthIdentityInfo{id(user, ok, 1, ""), id(iso, ok, 1, "")}, report.AuthClassUnknown},
		{"both failed otherwise", []record.AuthIdentityInfo{id(user, other, 1, ""), id(iso, other, 1, "")}, report.AuthClassUnknown},
		{"no isolated run", []record.AuthIdentityInfo{id(user, auth, 1, "")}, report.AuthClassRequired},
		{"nothing", nil, report.AuthClassUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ab := authOracle(tc.ids)
			if ab.Status != tc.want {
				t.Errorf("status %s, want %s; evidence %q", ab.Status, tc.want, ab.Evidence)
			}
			if len(ab.Identities) != len(tc.ids) {
				t.Errorf("identities %+v, want %d", ab.Identities, len(tc.ids))
			}
			for _, i := range tc.ids {
				if !containsPrefix(ab.Evidence, string(i.Identity)+" (") {
					t.Errorf("no evidence from the %s identity: %q", i.Identity, ab.Evidence)
				}
			}
		})
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if len(s) >= len(prefix) && s[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}

// TestAuthState: the state read from the protocol's auth/status answer, from the vendors'
// _auth/status_update push, whose payload is {"authStatus":{"kind","label"}}, and from codex-acp's
// authentication/status answer ({"type", …}).
func TestAuthState(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"state":"unauthenticated"}`, "unauthenticated"},
		{`{"authStatus":{"kind":"none","label":"Not logged in"}}`, "none (Not logged in)"},
		{`{"authStatus":{"kind":"api_key"}}`, "api_key"},
		{`{"authStatus":{}}`, "?"},
		{`{"type":"unauthenticated"}`, "unauthenticated"},
		{`{"type":"chat-gpt","email":"a@b.example"}`, "chat-gpt"},
		{`{}`, "?"},
	} {
		got := authState(acp.ParseObject(json.RawMessage(tc.raw)))
		if got != tc.want {
			t.Errorf("authState(%s) = %q, want %q", tc.raw, got, tc.want)
		}
		if saysNoLogin(got) != (tc.want == "unauthenticated" || tc.want == "none (Not logged in)") {
			t.Errorf("saysNoLogin(%q) = %v", got, saysNoLogin(got))
		}
	}
}

// The status request is the protocol's where the agent advertises it, else the one the
// catalogue knows the agent serves by its agentInfo.name (codex-acp's authentication/status),
// else none; IdentityFacts reads the answer of that request, and only of that one.
func TestAuthStatusMethod(t *testing.T) {
	const codex = `{"protocolVersion":1,"agentInfo":{"name":"@agentclientprotocol/codex-acp","version":"2.6.0"},"agentCapabilities":{"auth":{"logout":{}}}}`
	for _, tc := range []struct {
		name, init, asked, answer, want, state string
	}{
		{"advertised", `{"protocolVersion":1,"agentCapabilities":{"auth":{"status":{}}}}`, "auth/status", `{"state":"unauthenticated"}`, "auth/status", "unauthenticated"},
		{"codex-acp", codex, "authentication/status", `{"type":"unauthenticated"}`, "authentication/status", "unauthenticated"},
		{"codex-acp, auth/status not read", codex, "auth/status", `{"state":"authenticated"}`, "authentication/status", ""},
		{"an agent that serves neither", `{"protocolVersion":1,"agentInfo":{"name":"other","version":"1"}}`, "authentication/status", `{"type":"api-key"}`, "", ""},
		{"no agentInfo", `{"protocolVersion":1}`, "authentication/status", `{"type":"api-key"}`, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := record.New(recordtest.Frames(t, `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
< {"jsonrpc":"2.0","id":1,"result":`+tc.init+`}
> {"jsonrpc":"2.0","id":2,"method":"`+tc.asked+`","params":{}}
< {"jsonrpc":"2.0","id":2,"result":`+tc.answer+`}`))
			if got := AuthStatusMethod(x, nil); got != tc.want {
				t.Errorf("AuthStatusMethod = %q, want %q", got, tc.want)
			}
			f := IdentityFacts(x, &report.Result{}, record.IdentityIsolated, record.Isolation{Level: record.LevelEnvHome})
			if f.AuthStatus != tc.state {
				t.Errorf("AuthStatus = %q, want %q", f.AuthStatus, tc.state)
			}
		})
	}
}
