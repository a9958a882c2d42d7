package clientprofile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/report"
)

// The surface by client: the same agent probed as several profiles, and what differs. Each
// run's answers (initialize's result, session/new's, how session/new ended, and the vendor
// extension methods the agent sent anywhere in the run) are flattened
// into items, one per leaf: a path and its value, array members of objects named by their id
// (initialize.authMethods[gateway]…, session/new.modes.availableModes[plan]…) and strings of
// an array one item each; an item not every profile was shown is a Difference.

// maxItems bounds the items read from one run: an agent's answer is untrusted, and a
// difference table of a million lines helps no one.
const maxItems = 4096

// volatile are the keys whose values change from one handshake to the next whatever the
// client: never a difference between profiles.
var volatile = map[string]bool{"sessionId": true}

// Surface compares the runs, one per profile in the order given.
func Surface(runs []report.ProfileRun) *report.Surface {
	s := &report.Surface{Schema: report.SurfaceSchema, Profiles: runs, Differences: []report.Difference{}}
	var order []string // items in first-seen order
	has := map[string]map[string]bool{}
	for _, run := range runs {
		for _, it := range itemsOf(run.Result) {
			if has[it] == nil {
				has[it] = map[string]bool{}
				order = append(order, it)
			}
			has[it][run.Profile] = true
		}
	}
	differs := func(it string) bool { return has[it] != nil && len(has[it]) < len(runs) }
	for _, it := range order {
		if !differs(it) || impliedBy(it, func(parent string) bool { return differs(parent) && maps.Equal(has[parent], has[it]) }) {
			continue
		}
		d := report.Difference{Kind: kindOf(it), Item: it, In: []string{}, NotIn: []string{}}
		for _, run := range runs {
			if has[it][run.Profile] {
				d.In = append(d.In, run.Profile)
			} else {
				d.NotIn = append(d.NotIn, run.Profile)
			}
		}
		s.Differences = append(s.Differences, d)
	}
	return s
}

// impliedBy reports whether an item above it (a member or object that holds it) is a
// difference shown to the same profiles (same): the line of the holder says it already, as a
// login shown only to zed says its name, type and arguments were too. A _meta value below the
// holder is still a line of its own (the gateway login's protocol), unless it is an element of
// an array (a terminal login's arguments).
func impliedBy(it string, same func(parent string) bool) bool {
	path := it
	if i := strings.Index(path, " "); i >= 0 { // the value: " = …" or "[] element"
		path = strings.TrimSuffix(path[:i], "[]")
	}
	if strings.Contains(path, "._meta.") && !strings.Contains(it, "[] ") {
		return false
	}
	for i := len(path) - 1; i > 0; i-- {
		if (path[i] == '.' || path[i] == '[') && same(path[:i]) {
			return true
		}
	}
	return path != it && same(path)
}

// itemsOf flattens what a run was shown (at most maxItems items, each once).
func itemsOf(r *report.Result) []string {
	f := &flattener{seen: map[string]bool{}}
	f.raw("initialize", r.Raw.Initialize)
	f.raw("session/new", r.Raw.NewSession)
	// The vendor methods the agent sent anywhere in the run (the _meta keys of initialize and
	// session/new are items of their own above; the inventory's keys of both sides are not
	// told apart by who sent them first).
	if inv := r.Extensions; inv != nil {
		for _, m := range inv.Methods {
			if fromAgent(m.Observed) {
				f.add("extension method " + m.Name)
			}
		}
	}
	switch {
	case r.Error != nil && r.Error.Code == report.ErrAuthRequired:
		f.add("session/new: auth_required")
	case r.Auth.Status == report.AuthAuthenticated:
		f.add("session/new: ok")
	}
	return f.items
}

// fromAgent reports whether the agent sent it (alone, or the client too).
func fromAgent(observed []extensions.Direction) bool {
	return slices.Contains(observed, extensions.DirectionAgentToClient) || slices.Contains(observed, extensions.DirectionBoth)
}

type flattener struct {
	items []string
	seen  map[string]bool
}

func (f *flattener) add(it string) {
	if len(f.items) < maxItems && !f.seen[it] {
		f.seen[it] = true
		f.items = append(f.items, it)
	}
}

func (f *flattener) raw(prefix string, raw json.RawMessage) {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return
	}
	f.walk(prefix, v, 0)
}

// walk adds the leaves of v under path; depth bounds the recursion (an agent may nest deep).
func (f *flattener) walk(path string, v any, depth int) {
	if len(f.items) >= maxItems {
		return
	}
	if depth > 32 {
		f.add(path + " = (nested too deep)")
		return
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			f.add(path + " = {}")
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if !volatile[k] {
				f.walk(path+"."+k, x[k], depth+1)
			}
		}
	case []any:
		if len(x) == 0 {
			f.add(path + " = []")
		}
		for i, e := range x {
			switch m := e.(type) {
			case map[string]any:
				name, key := memberName(m, i)
				member := fmt.Sprintf("%s[%s]", path, name)
				f.add(member)
				for _, k := range slices.Sorted(maps.Keys(m)) {
					if k != key && !volatile[k] { // the name is the member's: not an item of its own
						f.walk(member+"."+k, m[k], depth+1)
					}
				}
			case string:
				f.add(path + "[] " + m)
			default:
				f.walk(fmt.Sprintf("%s[%d]", path, i), e, depth+1)
			}
		}
	default:
		b, _ := json.Marshal(x)
		f.add(path + " = " + string(b))
	}
}

// memberName names an object of an array by its id (the ACP lists' keys, and which key it
// was), else by its index (no key).
func memberName(m map[string]any, i int) (name, key string) {
	for _, k := range []string{"id", "modelId", "value", "name"} {
		if s, ok := m[k].(string); ok && s != "" {
			return s, k
		}
	}
	return fmt.Sprint(i), ""
}

// kindOf groups an item by where it is.
func kindOf(it string) string {
	for _, k := range []struct{ prefix, kind string }{
		{"initialize.authMethods", "auth method"},
		{"initialize.agentCapabilities._meta", "_meta"},
		{"initialize._meta", "_meta"},
		{"initialize.agentCapabilities", "capability"},
		{"session/new.modes", "mode"},
		{"session/new.configOptions", "config option"},
		{"session/new.models", "model"},
		{"session/new._meta", "_meta"},
		{"session/new:", "session"},
		{"extension ", "extension"},
	} {
		if strings.HasPrefix(it, k.prefix) {
			return k.kind
		}
	}
	return "other"
}

// CheckAcross judges the requirements on every run and keeps each requirement's best
// verdict (met, then missing, then unverified) with that run's evidence, naming the profile.
func CheckAcross(runs []report.ProfileRun, clients []Profile, names []string) *report.Checklist {
	rank := map[report.RequirementVerdict]int{report.RequirementMet: 0, report.RequirementMissing: 1, report.RequirementUnverified: 2}
	var best *report.Checklist
	for i, run := range runs {
		c := Check(run.Result, clients[i], names)
		for j := range c.Requirements {
			c.Requirements[j].Evidence = run.Profile + ": " + c.Requirements[j].Evidence
		}
		if best == nil {
			best = c
			continue
		}
		for j, q := range c.Requirements {
			if rank[q.Verdict] < rank[best.Requirements[j].Verdict] {
				best.Requirements[j] = q
			}
		}
	}
	if best == nil {
		return &report.Checklist{Verdict: report.RequirementUnverified, Requirements: []report.Requirement{}}
	}
	best.Verdict = overall(best.Requirements)
	return best
}
