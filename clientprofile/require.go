package clientprofile

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/report"
)

// A host's checklist: --require names what a host needs of an agent (loadSession, mcp.http,
// sessionCapabilities.close, auth.gateway, session/list, …), and Check judges each name on a
// report. A requirement the run could not observe — the agent was not probed, its session
// needed a login, the client did not declare what the agent shows only to a client that does,
// method detection did not run — is unverified, never met.

// requirement is one name of the vocabulary: the report field it reads and how.
type requirement struct {
	name, field string
	// needs says what must have been observed for the judgement to stand.
	needs observed
	judge func(r *report.Result) (report.RequirementVerdict, string)
}

// observed is what a judgement rests on.
type observed int

const (
	// byInitialize: the agent answered initialize.
	byInitialize observed = iota
	// bySession: session/new succeeded (no login needed, or one made).
	bySession
)

// capability is a requirement on one boolean of agentCapabilities.
func capability(name, field string, get func(report.Capabilities) bool) requirement {
	return requirement{name: name, field: "capabilities." + field,
		judge: func(r *report.Result) (report.RequirementVerdict, string) {
			if get(r.Capabilities) {
				return report.RequirementMet, "agentCapabilities." + field + " is true"
			}
			return report.RequirementMissing, "agentCapabilities." + field + " is absent or false"
		}}
}

// vocabulary is every requirement name but the method names (acp.ProbedMethods) and the
// _meta keys (_meta.KEY…), in the README's order.
var vocabulary = []requirement{
	capability("loadSession", "loadSession", func(c report.Capabilities) bool { return c.LoadSession }),
	capability("prompt.image", "promptCapabilities.image", func(c report.Capabilities) bool { return c.PromptCapabilities.Image }),
	capability("prompt.audio", "promptCapabilities.audio", func(c report.Capabilities) bool { return c.PromptCapabilities.Audio }),
	capability("prompt.embeddedContext", "promptCapabilities.embeddedContext", func(c report.Capabilities) bool { return c.PromptCapabilities.EmbeddedContext }),
	capability("mcp.http", "mcpCapabilities.http", func(c report.Capabilities) bool { return c.McpCapabilities.HTTP }),
	capability("mcp.sse", "mcpCapabilities.sse", func(c report.Capabilities) bool { return c.McpCapabilities.SSE }),
	capability("mcp.acp", "mcpCapabilities.acp", func(c report.Capabilities) bool { return c.McpCapabilities.ACP }),
	capability("sessionCapabilities.close", "sessionCapabilities.close", func(c report.Capabilities) bool { return c.SessionCapabilities.Close }),
	capability("sessionCapabilities.list", "sessionCapabilities.list", func(c report.Capabilities) bool { return c.SessionCapabilities.List }),
	capability("sessionCapabilities.resume", "sessionCapabilities.resume", func(c report.Capabilities) bool { return c.SessionCapabilities.Resume }),
	capability("sessionCapabilities.fork", "sessionCapabilities.fork", func(c report.Capabilities) bool { return c.SessionCapabilities.Fork }),
	capability("sessionCapabilities.additionalDirectories", "sessionCapabilities.additionalDirectories", func(c report.Capabilities) bool { return c.SessionCapabilities.AdditionalDirectories }),
	capability("sessionCapabilities.delete", "sessionCapabilities.delete", func(c report.Capabilities) bool { return c.SessionCapabilities.Delete }),
	capability("auth.logout", "auth.logout", func(c report.Capabilities) bool { return c.Auth.Logout }),
	{name: "auth.gateway", field: "authMethods",
		judge: authMethod(func(m acp.Object) bool {
			return m.String("id") == "gateway" || m.String("type") == "gateway" || m.Object("_meta").Object("gateway") != nil
		})},
	{name: "auth.terminal", field: "authMethods",
		judge: authMethod(func(m acp.Object) bool {
			return m.String("type") == "terminal" || m.Object("_meta").Object("terminal-auth") != nil
		})},
	{name: "modes", field: "modes", needs: bySession,
		judge: listed("modes", func(r *report.Result) []string { return idsOf(r.Modes, func(m acp.Mode) string { return m.ID }) })},
	{name: "configOptions", field: "configOptions", needs: bySession,
		judge: listed("config options", func(r *report.Result) []string {
			return idsOf(r.ConfigOptions, func(o acp.ConfigOption) string { return o.ID })
		})},
	{name: "models", field: "models", needs: bySession,
		judge: listed("models", func(r *report.Result) []string { return idsOf(r.Models, func(m acp.Model) string { return m.ID }) })},
}

// gatesOf are the client capabilities an agent shows a requirement's evidence only to (the
// paths Profile.Declared gives; none for most): without any of them declared, its absence
// proves nothing. claude-agent-acp and codex-acp show their gateway login only to a client
// declaring auth._meta.gateway, claude its terminal logins only with auth.terminal or
// _meta["terminal-auth"], and both their JetBrains AIR keys only to AIR (research notes Q2).
func gatesOf(name string) []string {
	switch {
	case name == "auth.gateway":
		return []string{"auth._meta.gateway"}
	case name == "auth.terminal":
		return []string{"auth.terminal", "_meta.terminal-auth"}
	case strings.HasPrefix(name, "_meta.jetbrains."):
		return []string{"_meta.jetbrains.air"}
	}
	return nil
}

// authMethod judges by the advertised auth methods: met when one is as want says.
func authMethod(want func(acp.Object) bool) func(r *report.Result) (report.RequirementVerdict, string) {
	return func(r *report.Result) (report.RequirementVerdict, string) {
		var ids []string
		for _, raw := range r.AuthMethods {
			m := acp.ParseObject(raw)
			if want(m) {
				return report.RequirementMet, fmt.Sprintf("auth method %q", m.String("id"))
			}
			ids = append(ids, m.String("id"))
		}
		return report.RequirementMissing, "no such auth method among " + listOf(ids)
	}
}

// idsOf are the ids of a list of session/new's answer.
func idsOf[T any](list []T, id func(T) string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, id(x))
	}
	return out
}

// listed judges a list of session/new's answer: met when it has an entry.
func listed(what string, ids func(r *report.Result) []string) func(r *report.Result) (report.RequirementVerdict, string) {
	return func(r *report.Result) (report.RequirementVerdict, string) {
		if l := ids(r); len(l) > 0 {
			return report.RequirementMet, what + ": " + listOf(l)
		}
		return report.RequirementMissing, "session/new answered no " + what
	}
}

func listOf(ids []string) string {
	if len(ids) == 0 {
		return "(none)"
	}
	const most = 8
	if len(ids) > most {
		return strings.Join(ids[:most], ", ") + fmt.Sprintf(" and %d more", len(ids)-most)
	}
	return strings.Join(ids, ", ")
}

// Requirements are the requirement names --require knows, in the README's order: the fixed
// vocabulary, every method of method detection, and the pattern of the _meta keys.
func Requirements() []string {
	out := make([]string, 0, len(vocabulary)+len(acp.ProbedMethods)+1)
	for _, q := range vocabulary {
		out = append(out, q.name)
	}
	out = append(out, acp.ProbedMethods...)
	return append(out, "_meta.KEY[.KEY…]")
}

// ErrUnknownRequirement is a --require name outside the vocabulary.
var ErrUnknownRequirement = errors.New("unknown requirement")

// ParseRequirements checks a comma-separated list of requirement names against the
// vocabulary and returns them in order (each once).
func ParseRequirements(list string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(list, ",") {
		name = strings.TrimSpace(name)
		if _, ok := lookup(name); !ok {
			return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownRequirement, name, strings.Join(Requirements(), ", "))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// lookup is the requirement name names: one of the vocabulary, a detected method, or a _meta key.
func lookup(name string) (requirement, bool) {
	for _, q := range vocabulary {
		if q.name == name {
			return q, true
		}
	}
	if slices.Contains(acp.ProbedMethods, name) {
		return requirement{name: name, field: fmt.Sprintf("methods[%q]", name), judge: method(name)}, true
	}
	if key, ok := strings.CutPrefix(name, "_meta."); ok && key != "" && !slices.Contains(strings.Split(key, "."), "") {
		return requirement{name: name, field: "raw.initialize", judge: metaKey(strings.Split(key, "."))}, true
	}
	return requirement{}, false
}

// method judges by the method-detection table.
func method(name string) func(r *report.Result) (report.RequirementVerdict, string) {
	return func(r *report.Result) (report.RequirementVerdict, string) {
		ms, ok := r.Methods[name]
		switch {
		case !ok:
			return report.RequirementUnverified, "method detection did not ask " + name
		case ms.Support == report.Supported:
			return report.RequirementMet, name + " is supported (" + answerOf(ms) + ")"
		case ms.Support == report.Unsupported:
			return report.RequirementMissing, name + " answered -32601 method not found"
		}
		return report.RequirementUnverified, name + ": " + string(ms.Support) + " (" + answerOf(ms) + ")"
	}
}

func answerOf(ms report.MethodSupport) string {
	switch {
	case ms.Code != nil:
		return fmt.Sprintf("error %d %s", *ms.Code, ms.Message)
	case ms.Support == report.Supported:
		return "a result"
	}
	return "no answer"
}

// metaKey judges by initialize's _meta (the root one, or agentCapabilities'): met when the
// dotted path is there.
func metaKey(path []string) func(r *report.Result) (report.RequirementVerdict, string) {
	return func(r *report.Result) (report.RequirementVerdict, string) {
		init := acp.ParseObject(r.Raw.Initialize)
		for _, where := range []struct {
			at   string
			meta acp.Object
		}{{"_meta", init.Object("_meta")}, {"agentCapabilities._meta", init.Object("agentCapabilities").Object("_meta")}} {
			o := where.meta
			for _, k := range path[:len(path)-1] {
				o = o.Object(k)
			}
			if o.Has(path[len(path)-1]) {
				return report.RequirementMet, "initialize's " + where.at + "." + strings.Join(path, ".") + " is present"
			}
		}
		return report.RequirementMissing, "neither initialize's _meta nor agentCapabilities._meta has " + strings.Join(path, ".")
	}
}

// Check judges the requirements names (from ParseRequirements) on r, a run as profile client.
func Check(r *report.Result, client Profile, names []string) *report.Checklist {
	c := &report.Checklist{Requirements: []report.Requirement{}}
	declared := client.Declared()
	for _, name := range names {
		q, ok := lookup(name)
		if !ok {
			continue // ParseRequirements refused it
		}
		verdict, evidence := judge(r, q, declared)
		c.Requirements = append(c.Requirements, report.Requirement{Name: name, Field: q.field, Verdict: verdict, Evidence: evidence})
	}
	c.Verdict = overall(c.Requirements)
	return c
}

// overall is a checklist's verdict: missing when a requirement is missing, else unverified
// when one is, else met.
func overall(reqs []report.Requirement) report.RequirementVerdict {
	v := report.RequirementMet
	for _, q := range reqs {
		switch {
		case q.Verdict == report.RequirementMissing:
			return report.RequirementMissing
		case q.Verdict == report.RequirementUnverified:
			v = report.RequirementUnverified
		}
	}
	return v
}

// judge is one requirement's verdict: unverified when what it rests on was not observed, or
// when its absence may only mean the client did not ask for it.
func judge(r *report.Result, q requirement, declared []string) (report.RequirementVerdict, string) {
	if r.ProtocolVersion == nil || len(r.Raw.Initialize) == 0 {
		return report.RequirementUnverified, "the agent did not answer initialize" + errorOf(r)
	}
	if q.needs == bySession && r.Auth.Status != report.AuthAuthenticated {
		why := "auth " + string(r.Auth.Status)
		if r.Error != nil {
			why = string(r.Error.Stage) + ": " + string(r.Error.Code)
		}
		return report.RequirementUnverified, "no session was made (" + why + "): session/new's answer was not observed"
	}
	verdict, evidence := q.judge(r)
	gates := gatesOf(q.name)
	if verdict == report.RequirementMissing && len(gates) > 0 && !slices.ContainsFunc(gates, func(g string) bool { return slices.Contains(declared, g) }) {
		return report.RequirementUnverified, evidence + "; but the client did not declare " + strings.Join(gates, " or ") +
			", which the agent may need to show it (probe with a --client-profile that does)"
	}
	return verdict, evidence
}

func errorOf(r *report.Result) string {
	if r.Error == nil {
		return ""
	}
	return "; " + string(r.Error.Code)
}
