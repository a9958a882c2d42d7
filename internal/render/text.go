// Package render writes every report a command prints: for people (text, tables, Markdown,
// HTML) and for machines (JSON).
//
// Everything an agent or a file supplied is untrusted here. The text writers pass it through
// Clean (controls and invisible characters shown as escapes), the Markdown writer also
// escapes what would change the document's structure or make a link, the HTML writer leaves
// it to html/template, and the JSON writers keep the output proportional to the input however
// deep an agent nests its values. Text is laid out for the Screen it is written to (its width,
// whether it takes ANSI sequences); anything else is written for a file.
package render

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Text writes the human report of a probe: agent, protocol, capabilities, auth, modes,
// config options, methods, timings, then the error if the probe could not complete. It says
// only what was learned: what the agent never told (it never answered initialize, session/new
// did not succeed) is named once, under "Not known", instead of being shown as absent.
func Text(w io.Writer, r *report.Result) error {
	t := &textWriter{w: w, width: screenOf(w).lineWidth()}
	initOK, session := Initialized(r), sessionCreated(r)
	t.section("Agent")
	if initOK {
		name := "(no agentInfo)"
		if r.AgentInfo != nil {
			name = r.AgentInfo.Name
			if r.AgentInfo.Version != "" {
				name += " " + r.AgentInfo.Version
			}
			if r.AgentInfo.Title != "" {
				name += fmt.Sprintf(" (%s)", r.AgentInfo.Title)
			}
		}
		t.kv("name", name)
	}
	if r.Agent.ID != nil {
		t.kv("id", *r.Agent.ID)
	}
	t.kv("command", r.Agent.Command)
	t.kv("cwd", r.Agent.Cwd)
	t.kv("probed at", r.Agent.ProbedAt)
	clientText(t, r.Client)

	authKnown := r.Auth.Status != report.AuthUnknown || len(r.Auth.Evidence) > 0 || len(r.AuthMethods) > 0
	if !initOK {
		var unknown []string
		unknown = append(unknown, "agentInfo", "protocol version", "capabilities")
		if !authKnown {
			unknown = append(unknown, "authentication")
		}
		unknown = append(unknown, "modes", "config options")
		if !methodsProbed(r) {
			unknown = append(unknown, "method support")
		}
		if len(r.Findings) == 0 {
			unknown = append(unknown, "findings")
		}
		t.section("Not known")
		t.line(strings.Join(unknown, ", ") + ": " + initReason(r))
	} else {
		t.section("Protocol")
		if r.ProtocolVersion != nil {
			t.kv("version", fmt.Sprint(*r.ProtocolVersion))
		} else {
			t.kv("version", "(unknown)")
		}
		if r.ACPSchema != nil {
			t.kv("judged against", fmt.Sprintf("ACP schema %s (%s)", r.ACPSchema.Name, r.ACPSchema.Version))
		}
		capabilitiesText(t, r.Capabilities)
	}

	if initOK || authKnown {
		authText(t, r)
	}
	authABText(t, r)

	if initOK && !session {
		t.section("Not known")
		t.line("modes, config options: " + sessionReason(r))
	} else if initOK {
		modesText(t, r)
	}

	if initOK || methodsProbed(r) {
		t.section("Methods")
		for _, m := range acp.ProbedMethods {
			ms, ok := r.Methods[m]
			if !ok {
				continue
			}
			detail := string(ms.Support)
			if ms.Code != nil {
				detail += fmt.Sprintf(" (%d %s)", *ms.Code, ms.Message)
			} else if ms.Message != "" {
				detail += " (" + ms.Message + ")"
			}
			t.kv(m, detail)
		}
	}

	if r.Notifications.Total > 0 || len(r.AgentRequests) > 0 {
		t.section("Agent messages")
		for _, k := range sortedKeys(r.Notifications.ByMethod) {
			t.kv(k, fmt.Sprint(r.Notifications.ByMethod[k]))
		}
		for _, k := range sortedKeys(r.Notifications.BySessionUpdate) {
			t.kv("  "+k, fmt.Sprint(r.Notifications.BySessionUpdate[k]))
		}
		for _, k := range sortedKeys(r.AgentRequests) {
			t.kv("request "+k, fmt.Sprintf("%d (refused)", r.AgentRequests[k]))
		}
	}

	promptShapesText(t, r.PromptShapes)
	turnsText(t, r.Turns)
	extensionsText(t, r)
	if initOK || len(r.Findings) > 0 {
		findingsText(t, r)
	}
	verdictText(t, r.Verdict)
	requirementsText(t, r.Requirements)

	tm := r.Timings
	t.section("Timings")
	for _, s := range []struct {
		k  string
		ms float64
	}{{"spawn→initialize", tm.SpawnToInitializeMs}, {"initialize", tm.InitializeMs}, {"session/new", tm.SessionNewMs},
		{"methods", tm.MethodsMs}, {"teardown", tm.TeardownMs}} {
		// Before initialize answered, only the steps that took time were reached.
		if initOK || s.ms != 0 {
			t.kv(s.k, fmt.Sprintf("%.1f ms", s.ms))
		}
	}
	t.kv("total", fmt.Sprintf("%.1f ms", tm.TotalMs))
	if r.Exit != nil {
		t.kv("exit", exitText(r))
	}
	sideEffectsText(t, r)

	if r.Error != nil {
		t.section("Error")
		t.kv("code", string(r.Error.Code))
		t.kv("stage", string(r.Error.Stage))
		t.kv("message", r.Error.Message)
		if r.Error.Hint != "" {
			t.kv("hint", r.Error.Hint)
		}
		if tail := lastLines(r.Error.Stderr, 10); tail != "" {
			t.line("stderr (last lines):")
			for _, l := range strings.Split(tail, "\n") {
				t.line("  | " + l)
			}
		}
	}
	return t.err
}

func capabilitiesText(t *textWriter, c report.Capabilities) {
	t.section("Capabilities")
	t.kv("prompt", yesNo(map[string]bool{"text": true, "resource_link": true, "image": c.PromptCapabilities.Image,
		"audio": c.PromptCapabilities.Audio, "resource (embedded)": c.PromptCapabilities.EmbeddedContext},
		"text", "resource_link", "image", "audio", "resource (embedded)"))
	t.kv("mcp servers", yesNo(map[string]bool{"stdio": true, "http": c.McpCapabilities.HTTP, "sse": c.McpCapabilities.SSE, "acp": c.McpCapabilities.ACP},
		"stdio", "http", "sse", "acp"))
	s := c.SessionCapabilities
	t.kv("sessions", yesNo(map[string]bool{"load": c.LoadSession, "list": s.List, "resume": s.Resume, "close": s.Close,
		"fork": s.Fork, "delete": s.Delete, "additionalDirectories": s.AdditionalDirectories},
		"load", "list", "resume", "close", "fork", "delete", "additionalDirectories"))
	t.kv("auth", yesNo(map[string]bool{"logout": c.Auth.Logout}, "logout"))
	if len(c.MetaKeys) > 0 {
		t.kv("_meta", foldList(c.MetaKeys, listMax, ", "))
	}
}

func authText(t *textWriter, r *report.Result) {
	t.section("Authentication")
	t.kv("status", string(r.Auth.Status))
	for _, e := range r.Auth.Evidence {
		t.kv("evidence", e)
	}
	if len(r.AuthMethods) == 0 {
		t.kv("methods", "(none advertised)")
	}
	for _, m := range r.AuthMethods {
		o := acp.ParseObject(m)
		kind := o.String("type")
		if kind == "" {
			kind = "agent"
		}
		line := fmt.Sprintf("%s — %s [%s]", o.String("id"), o.String("name"), kind)
		if vars := o.Array("vars"); len(vars) > 0 {
			var names []string
			for _, v := range vars {
				names = append(names, acp.ParseObject(v).String("name"))
			}
			line += " vars: " + strings.Join(names, ", ")
		}
		if meta := o.Object("_meta"); meta != nil {
			line += " _meta: " + strings.Join(meta.Keys(), ", ")
		}
		t.kv("method", line)
	}
}

func modesText(t *textWriter, r *report.Result) {
	t.section("Modes")
	if len(r.Modes) == 0 {
		t.line("(none)")
	}
	for _, m := range r.Modes {
		mark := " "
		if m.ID == r.CurrentModeID {
			mark = "*"
		}
		t.line(fmt.Sprintf("%s %s — %s", mark, m.ID, m.Name))
	}

	t.section("Config options")
	if len(r.ConfigOptions) == 0 {
		t.line("(none)")
	}
	for _, o := range r.ConfigOptions {
		cat := o.Category
		if cat == "" {
			cat = "-"
		}
		t.line(fmt.Sprintf("%s (%s, %s) = %s", o.ID, o.Type, cat, strings.Trim(string(o.CurrentValue), `"`)))
		if len(o.Options) > 0 {
			t.line("    values: " + foldList(o.Values(), listMax, ", "))
		}
	}
	if len(r.Models) > 0 {
		var ids []string
		for _, m := range r.Models {
			ids = append(ids, m.ID)
		}
		t.kv("models", foldList(ids, listMax, ", ")+" (declared in session/new)")
	}
	if r.Reasoning != nil {
		t.kv("reasoning", fmt.Sprintf("%s: %s", r.Reasoning.ConfigID, foldList(r.Reasoning.Values, listMax, ", ")))
	}
}

func promptShapesText(t *textWriter, ps *report.PromptShapes) {
	if ps == nil {
		return
	}
	t.section("Prompt shapes")
	t.kv("session", fmt.Sprintf("%s (session/new succeeded: %v)", ps.Session, ps.SessionCreated))
	for _, p := range ps.Probes {
		code := ""
		if p.Code != nil {
			code = fmt.Sprintf(" (%d)", *p.Code)
		}
		t.kv(p.Name, string(p.Outcome)+code)
	}
	if ps.ErrorStyle != "" {
		t.kv("error style", ps.ErrorStyle)
	}
	for _, b := range ps.InferredBranches {
		t.kv("accepts", fmt.Sprintf("%s {%s}", b.Type, strings.Join(b.Required, ", ")))
	}
	if len(ps.RequiredFields) > 0 {
		t.kv("required fields", strings.Join(ps.RequiredFields, ", "))
	}
	if p := ps.Prompt; p != nil {
		t.kv("valid prompt", fmt.Sprintf("schema accepted %v, answered %v %s, updates %v", p.SchemaAccepted, p.Answered, p.StopReason, p.Updates))
	}
}

// extensionsText lists the vendor extensions the session showed, as the catalogue classifies
// them; the ones that share their kind, classification and direction are one line
// (foldSightings).
func extensionsText(t *textWriter, r *report.Result) {
	inv := r.Extensions
	if inv == nil || len(inv.MetaKeys)+len(inv.Methods)+len(inv.UnknownVariants) == 0 {
		return
	}
	t.section("Extensions")
	describe := func(known bool, vendor, class string) string {
		switch {
		case known:
			return vendor + ", " + class
		case vendor != "":
			return vendor + ", not in the catalogue"
		}
		return "unknown vendor"
	}
	var keys, methods, variants []sighting
	for _, k := range inv.MetaKeys {
		var dirs []string
		for _, d := range k.Observed {
			dirs = append(dirs, string(d))
		}
		group := fmt.Sprintf("(%s) — %s; seen %s", k.Form, describe(k.Known, k.Vendor, string(k.Class)), strings.Join(dirs, ", "))
		keys = append(keys, sighting{group: group, item: fmt.Sprintf("%s %d×", k.Key, k.Count),
			single: fmt.Sprintf("_meta %s (%s) — %s; seen %d× %s", k.Key, k.Form, describe(k.Known, k.Vendor, string(k.Class)), k.Count, strings.Join(dirs, ", "))})
	}
	for _, m := range inv.Methods {
		group := fmt.Sprintf("(%s) — %s", m.ObservedKind, describe(m.Known, m.Vendor, string(m.Class)))
		methods = append(methods, sighting{group: group, item: fmt.Sprintf("%s %d×", m.Name, m.Count),
			single: fmt.Sprintf("method %s %s; seen %d×", m.Name, group, m.Count)})
	}
	for _, v := range inv.UnknownVariants {
		note := "not in the ACP schema"
		if v.Known {
			note = "catalogued for " + v.Vendor
		}
		variants = append(variants, sighting{group: v.Field + " — " + note, item: fmt.Sprintf("%q %d×", v.Value, v.Count),
			single: fmt.Sprintf("%s %q — %s; seen %d×", v.Field, v.Value, note, v.Count)})
	}
	for _, l := range slices.Concat(foldSightings(keys, "_meta keys"), foldSightings(methods, "methods"), foldSightings(variants, "values of")) {
		t.line(l)
	}
	for _, u := range inv.Vendors {
		t.kv(u.Vendor, vendorUseText(u))
	}
	zeroMetaText(t, r.ZeroMeta)
}

// vendorUseText says how much of a vendor's catalogued surface the session used, and what of
// it should not have been there.
func vendorUseText(u extensions.VendorUse) string {
	s := fmt.Sprintf("%d of %d catalogued keys and %d of %d methods seen", u.KeysSeen, u.KeysCatalogued, u.MethodsSeen, u.MethodsCatalogued)
	switch len(u.Unknown) {
	case 0:
		s += "; none it does not list"
	default:
		s += fmt.Sprintf("; %d it does not list: %s", len(u.Unknown), foldList(u.Unknown, listMax, ", "))
	}
	if len(u.Private) > 0 {
		return s + fmt.Sprintf("; PRIVATE, never for a third-party client: %s", foldList(u.Private, listMax, ", "))
	}
	return s + ", none private"
}

// zeroMetaText is the zero-_meta contract's line: held, broken (and by what) or unverified (and
// why).
func zeroMetaText(t *textWriter, z *report.ZeroMeta) {
	if z == nil {
		return
	}
	var methods []string
	for _, s := range z.Steps {
		if s.Outcome == "ok" && !slices.Contains(methods, s.Method) {
			methods = append(methods, s.Method)
		}
	}
	line := string(z.Outcome)
	if len(methods) > 0 {
		line += " — without any _meta, " + strings.Join(methods, ", ") + " worked"
	}
	if z.Reason != "" {
		line += "; " + z.Reason
	}
	t.kv("zero _meta", line)
}

// sighting is one extension of the inventory as the text shows it.
type sighting struct {
	group  string // what the sightings of one line share: kind, classification, direction
	single string // its line when no other shares its group
	item   string // its name and count on a shared line
}

// foldSightings is the lines of the sightings, in the order first seen: the sightings of a
// group of three or more on one line ("19 _meta keys (bare) — unknown vendor; seen
// agent-to-client: altNames 6×, args 1×, … and 9 more"), the others a line each.
func foldSightings(all []sighting, noun string) []string {
	var order []string
	items := map[string][]sighting{}
	for _, s := range all {
		if _, ok := items[s.group]; !ok {
			order = append(order, s.group)
		}
		items[s.group] = append(items[s.group], s)
	}
	var lines []string
	for _, g := range order {
		if len(items[g]) < 3 {
			for _, s := range items[g] {
				lines = append(lines, s.single)
			}
			continue
		}
		var names []string
		for _, s := range items[g] {
			names = append(names, s.item)
		}
		lines = append(lines, fmt.Sprintf("%d %s %s: %s", len(names), noun, g, foldList(names, listMax, ", ")))
	}
	return lines
}

// findingsText groups the findings by tier, with where each was found and the one-line why;
// the findings of a check that differ only in their line are one entry, with their lines.
func findingsText(t *textWriter, r *report.Result) {
	t.section(fmt.Sprintf("Findings (%d)", len(r.Findings)))
	if len(r.Findings) == 0 {
		t.line("(none)")
	}
	for _, tier := range report.Tiers {
		var group []report.Finding
		for _, f := range r.Findings {
			if f.Tier == tier {
				group = append(group, f)
			}
		}
		if len(group) == 0 {
			continue
		}
		t.line(fmt.Sprintf("%s (%d)", tier, len(group)))
		for _, g := range groupFindings(group) {
			where := g.where()
			if where != "" {
				where = " [" + where + "]"
			}
			known := ""
			if g.Known {
				known = " (known: " + g.KnownReason + ")"
			}
			t.line(fmt.Sprintf("  %s%s%s", g.ID, where, known))
			t.line("      " + g.text())
		}
	}
}

// Where says where a finding was found, the same way in every report: "seq N" (the record's
// Nth line after the transcript header, which carries "seq":N; line N+1 of the transcript
// file) and the JSON pointer into that message, either of which may be missing ("" when
// both are).
func Where(f report.Finding) string {
	var parts []string
	if f.Seq != 0 {
		parts = append(parts, fmt.Sprintf("seq %d", f.Seq))
	}
	if f.Pointer != "" {
		parts = append(parts, f.Pointer)
	}
	return strings.Join(parts, " ")
}

func verdictText(t *textWriter, v *report.Verdict) {
	if v == nil {
		return
	}
	verdict := "pass"
	if v.Failed {
		verdict = "FAIL"
	}
	t.section("Verdict")
	t.kv("result", fmt.Sprintf("%s (fail on %s and above)", verdict, v.FailOn))
	var counts []string
	for _, tier := range report.Tiers {
		counts = append(counts, fmt.Sprintf("%s %d", tier, v.Counts[tier]))
	}
	t.kv("new findings", strings.Join(counts, ", "))
	if v.Baseline != "" {
		t.kv("baseline", fmt.Sprintf("%s: %d known", v.Baseline, v.Known))
	}
	for _, s := range v.Stale {
		t.kv("stale", fmt.Sprintf("%s (%s) no longer occurs: remove it from the baseline", s.ID, s.Reason))
	}
}

func exitText(r *report.Result) string {
	x := r.Exit
	var s string
	switch {
	case x.Signal != "":
		s = "killed by " + x.Signal
	case x.Code != nil:
		s = fmt.Sprintf("status %d", *x.Code)
	default:
		s = "unknown"
	}
	switch x.By {
	case record.ExitStdin:
		s += fmt.Sprintf(", %.1f ms after stdin closed", *x.AfterStdinCloseMs)
	case record.ExitSigterm, record.ExitSigkill:
		// How it ended, then the signal the teardown had to send: "status 0 on SIGTERM" is an
		// agent that handled the signal, not one that left when its stdin closed.
		if sig := strings.ToUpper(string(x.By)); x.Signal != sig {
			s += " on " + sig
		}
		s += ": still running after its stdin closed"
		if x.By == record.ExitSigkill {
			s += " and SIGTERM"
		}
	case record.ExitSelf:
		s += ", before teardown"
	}
	if x.GroupKilled {
		s += "; leftover processes of its group were killed"
	}
	return s
}

// textWriter writes the report a line at a time, each line cleaned (Clean) and wrapped to the
// width (0: not wrapped), keeping the first error.
type textWriter struct {
	w     io.Writer
	width int
	err   error
}

// kvColumn is where the value of a key-value line starts.
const kvColumn = 30

// line writes "  "+s; its continuation lines hang two columns deeper than it starts.
func (t *textWriter) line(s string) {
	s = "  " + s
	t.hang(s, indentOf(s)+2)
}

// hang writes the line s, its continuation lines starting at column hang.
func (t *textWriter) hang(s string, hang int) {
	for _, l := range wrap(Clean(s), t.width, hang) {
		if t.err == nil {
			_, t.err = fmt.Fprintln(t.w, l)
		}
	}
}

// section writes an empty line and the title of a section.
func (t *textWriter) section(name string) {
	if t.err == nil {
		_, t.err = fmt.Fprintln(t.w)
	}
	t.hang(name, 2)
}

// kv writes a key and its value, the value (and its continuation lines) at kvColumn.
func (t *textWriter) kv(k, v string) { t.hang(fmt.Sprintf("  %-27s %s", k+":", v), kvColumn) }

// yesNo lists which of the named features are on and off, in the given order.
func yesNo(on map[string]bool, order ...string) string {
	var yes, no []string
	for _, k := range order {
		if on[k] {
			yes = append(yes, k)
		} else {
			no = append(no, k)
		}
	}
	s := strings.Join(yes, ", ")
	if s == "" {
		s = "(none)"
	}
	if len(no) > 0 {
		s += "   (no: " + strings.Join(no, ", ") + ")"
	}
	return s
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
