package derive

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// MainIdentity is the identity the main run of --auth-ab stands for: "user" when it ran with
// the user's HOME and environment, "isolated" when it ran sandboxed with no credential
// variable, "" when it is neither (sandboxed with credentials passed on purpose).
func MainIdentity(iso record.Isolation) record.Identity {
	switch {
	case iso.Level == record.LevelNone || iso.Level == "":
		return record.IdentityUser
	case len(iso.Credentials) == 0:
		return record.IdentityIsolated
	}
	return ""
}

// IdentityFacts are the auth facts of one run: r derived from its record x, which ran as
// identity under iso.
func IdentityFacts(x *record.Index, r *report.Result, identity record.Identity, iso record.Isolation) record.AuthIdentityInfo {
	f := record.AuthIdentityInfo{Identity: identity, Isolation: iso.Level, StatusUpdates: []string{}, AuthMethods: []string{},
		Credentials: append([]string{}, iso.Credentials...), SessionNew: record.SessionNewNotCalled}
	if f.Isolation == "" {
		f.Isolation = record.LevelNone
	}
	if r.Error != nil {
		f.Error = string(r.Error.Code)
	}
	if ex := x.First(acp.MethodSessionNew); ex != nil {
		switch {
		case ex.Answer == nil || ex.Answer.Msg == nil:
			f.SessionNew = record.SessionNewNoAnswer
		case ex.Answer.Msg.Err() != nil:
			e := ex.Answer.Msg.Err()
			code := e.Code
			f.Code, f.Message = &code, cut(e.Message, 200)
			f.SessionNew = record.SessionNewError
			if acp.IsAuthError(e) {
				f.SessionNew = record.SessionNewAuthError
			}
		default:
			f.SessionNew = record.SessionNewOK
		}
	}
	if ex := x.First(AuthStatusMethod(x, nil)); ex != nil && ex.Answer != nil && ex.Answer.Msg != nil && ex.Answer.Msg.Err() == nil {
		f.AuthStatus = authState(acp.ParseObject(ex.Answer.Msg.Result))
	}
	for _, fr := range x.Frames() {
		if fr.Dir == jsonrpc.DirAgent && fr.Msg != nil && fr.Msg.Kind() == jsonrpc.Notification &&
			(fr.Msg.Method == acp.MethodAuthStatusUpdate || fr.Msg.Method == acp.MethodVendorAuthStatusUpdate) {
			f.StatusUpdates = append(f.StatusUpdates, authState(acp.ParseObject(fr.Msg.Params)))
		}
	}
	for _, raw := range r.AuthMethods {
		m := acp.ParseObject(raw)
		kind := m.String("type")
		if kind == "" {
			kind = "agent"
		}
		f.AuthMethods = append(f.AuthMethods, fmt.Sprintf("%s (%s)", m.String("id"), kind))
		if kind == "terminal" {
			var args []string
			for _, a := range m.Array("args") {
				var s string
				if json.Unmarshal(a, &s) == nil {
					args = append(args, s)
				}
			}
			f.TerminalArgs = append(f.TerminalArgs, m.String("id")+": "+strings.Join(args, " "))
		}
	}
	return f
}

// AuthStatusMethod is the request that asks the agent of x for its login state without
// changing it: the protocol's auth/status when its initialize answer advertises
// agentCapabilities.auth.status, else the request that the catalogue (extensions.Default()
// when nil) says the agent of that agentInfo.name serves (codex-acp's authentication/status,
// extensions.Method.AuthStatus); "" when there is none, or no initialize answer. The engine
// asks it (probe.AuthStatusStep) and IdentityFacts reads its answer.
func AuthStatusMethod(x *record.Index, cat *extensions.Catalogue) string {
	init := x.First(acp.MethodInitialize)
	if init == nil || init.Answer == nil || init.Answer.Msg == nil || init.Answer.Msg.Result == nil {
		return ""
	}
	r := acp.ParseInitializeResult(init.Answer.Msg.Result)
	if r.Capabilities.Object("auth").Has("status") {
		return acp.MethodAuthStatus
	}
	if r.AgentInfo == nil {
		return ""
	}
	if cat == nil {
		cat = extensions.Default()
	}
	if m, ok := cat.AuthStatusMethod(r.AgentInfo.Name); ok {
		return m.Name
	}
	return ""
}

// authOracle combines the facts of the identities (the user's and the isolated one; either
// may be missing when its run could not be made) into the oracle's answer, with the evidence
// of both.
func authOracle(ids []record.AuthIdentityInfo) *report.AuthAB {
	ab := &report.AuthAB{Status: report.AuthClassUnknown, Evidence: []string{}, Identities: []record.AuthIdentityInfo{}}
	var user, iso *record.AuthIdentityInfo
	for i := range ids {
		switch ids[i].Identity {
		case record.IdentityUser:
			if user == nil {
				user = &ids[i]
			}
		case record.IdentityIsolated:
			if iso == nil {
				iso = &ids[i]
			}
		}
	}
	methods := 0
	refused := false // either identity was told it has no login
	for _, id := range []*record.AuthIdentityInfo{user, iso} {
		if id == nil {
			continue
		}
		ab.Identities = append(ab.Identities, *id)
		ab.Evidence = append(ab.Evidence, identityEvidence(*id)...)
		methods = max(methods, len(id.AuthMethods))
		refused = refused || notSignedIn(*id)
	}
	if user == nil {
		ab.Evidence = append(ab.Evidence, "no run with the user's identity")
	}
	if iso == nil {
		ab.Evidence = append(ab.Evidence, "no isolated run with an empty identity")
	}
	isoOK := iso != nil && iso.SessionNew == record.SessionNewOK
	switch {
	case iso != nil && iso.AuthStatus == "not_required" && iso.SessionNew != record.SessionNewAuthError:
		ab.Status = report.AuthClassNoAuthNeeded
	case isoOK && notSignedIn(*iso):
		// session/new worked, yet auth/status or a status update says there is no login.
		ab.Status = report.AuthClassRequired
		ab.Evidence = append(ab.Evidence, "session/new works without a login, but the agent reports it is not signed in: a prompt would ask for one")
	case isoOK && methods > 0:
		// Only a prompt would tell whether the login it advertises is needed, and a probe
		// spends no tokens.
		ab.Evidence = append(ab.Evidence, "session/new works without a login, but the agent advertises authMethods: whether a prompt needs one is not known without sending one")
	case isoOK:
		ab.Status = report.AuthClassNoAuthNeeded
		ab.Evidence = append(ab.Evidence, "session/new works with an empty identity and the agent advertises no login; no prompt was sent, so a login the agent does not advertise would not show")
	case user != nil && user.SessionNew == record.SessionNewOK:
		ab.Status = report.AuthClassAuthenticated
	case refused && methods == 0:
		ab.Status = report.AuthClassHidden
		ab.Evidence = append(ab.Evidence, "it refuses for lack of a login, yet advertises no authMethods")
	case refused:
		ab.Status = report.AuthClassRequired
	}
	return ab
}

// notSignedIn says whether an identity was told it has no login: session/new refused it for
// that, or auth/status or the last status update says there is no login.
func notSignedIn(id record.AuthIdentityInfo) bool {
	return id.SessionNew == record.SessionNewAuthError || saysNoLogin(id.AuthStatus) || saysNoLogin(lastOf(id.StatusUpdates))
}

// saysNoLogin says whether an auth state (as authState gives it) means no login: the protocol's
// "unauthenticated", or the vendor push's kind "none" (claude-agent-acp's notLoggedInAuthStatus).
func saysNoLogin(state string) bool {
	return state == "unauthenticated" || state == "none" || strings.HasPrefix(state, "none (")
}

// identityEvidence says what one identity showed, one fact a line.
func identityEvidence(id record.AuthIdentityInfo) []string {
	who := string(id.Identity) + " (" + string(id.Isolation) + ")"
	var out []string
	switch id.SessionNew {
	case record.SessionNewOK:
		out = append(out, who+": session/new succeeded")
	case record.SessionNewAuthError, record.SessionNewError:
		kind := "an error that does not name authentication"
		if id.SessionNew == record.SessionNewAuthError {
			kind = "an authentication error"
		}
		out = append(out, fmt.Sprintf("%s: session/new answered %s: %d %s", who, kind, deref(id.Code), id.Message))
	case record.SessionNewNoAnswer:
		out = append(out, who+": session/new got no answer")
	default:
		reason := "session/new was not called"
		if id.Error != "" {
			reason += " (" + id.Error + ")"
		}
		out = append(out, who+": "+reason)
	}
	if id.AuthStatus != "" {
		out = append(out, fmt.Sprintf("%s: asked for its login state, it answered %q", who, id.AuthStatus))
	}
	if len(id.StatusUpdates) > 0 {
		out = append(out, fmt.Sprintf("%s: auth status updates %s", who, strings.Join(id.StatusUpdates, ", ")))
	}
	if len(id.AuthMethods) > 0 {
		out = append(out, fmt.Sprintf("%s: authMethods %s", who, strings.Join(id.AuthMethods, ", ")))
	}
	for _, t := range id.TerminalArgs {
		out = append(out, fmt.Sprintf("%s: terminal auth %s", who, t))
	}
	if f := id.Files; f != nil && f.Created+f.Changed+f.Deleted > 0 {
		where := "in its sandbox, since removed"
		if id.Isolation == record.LevelNone {
			where = "in the places agents keep their state under your HOME (" + strings.Join(f.Watched, ", ") + ")"
		}
		out = append(out, fmt.Sprintf("%s: that run created %d, changed %d and deleted %d files %s", who, f.Created, f.Changed, f.Deleted, where))
	}
	if len(id.Credentials) > 0 {
		out = append(out, fmt.Sprintf("%s: credential variables present (names only): %s", who, strings.Join(id.Credentials, ", ")))
	} else {
		out = append(out, who+": no credential variable")
	}
	return out
}

func lastOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// cut keeps the first n bytes of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// authState is the state an auth status answer or update gives: the protocol's state (unstable
// auth/status), else the vendor push's authStatus kind and label (claude-agent-acp's and
// codex-acp's _auth/status_update: {"authStatus":{"kind":"none","label":"Not logged in"}}), else
// the type of codex-acp's authentication/status answer (api-key, chat-gpt, gateway or
// unauthenticated; its email and gateway name are left out); "?" when it gives none.
func authState(o acp.Object) string {
	if s := o.String("state"); s != "" {
		return s
	}
	if a := o.Object("authStatus"); a.String("kind") != "" {
		if l := a.String("label"); l != "" {
			return a.String("kind") + " (" + l + ")"
		}
		return a.String("kind")
	}
	if t := o.String("type"); t != "" {
		return t
	}
	return "?"
}
