package render

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/internal/jsonout"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/report"
)

// matrixHTML is the page: one self-contained file with its CSS and script inline, so that it
// works offline from file:// and can be attached to an issue or a CI run as is.
//
//go:embed matrix.html.tmpl
var matrixHTML string

// matrixTemplate is parsed on first use, not at start-up: every acpprobe command would pay for
// it otherwise (BENCHMARKS.md §4).
var matrixTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("matrix").Funcs(template.FuncMap{
		"join":     strings.Join,
		"isMethod": func(key string) bool { return strings.HasPrefix(key, "m-") },
		// isList: columns whose cells are lists, which may wrap.
		"isList": func(key string) bool {
			switch key {
			case "version", "prompt", "mcp", "sessions", "modes", "models", "config", "reasoning":
				return true
			}
			return false
		},
	}).Parse(matrixHTML))
})

// MatrixHTML writes the matrix as one self-contained HTML page: the table of Columns, sortable
// by any column, a row's full details (agent info, capabilities, authentication, modes, config
// options, models, method support, findings by tier, error, stderr, result JSON) on a click,
// and no external asset. Every agent-controlled string is escaped by html/template.
func MatrixHTML(w io.Writer, m *matrix.Matrix) error {
	columns := ColumnsOf(m)
	page := htmlPage{GeneratedAt: m.GeneratedAt, Version: m.Version, Span: len(columns)}
	for _, c := range columns {
		page.Columns = append(page.Columns, htmlColumn{Key: c.Key, Title: c.Title, Numeric: c.Numeric})
	}
	counts := map[string]int{}
	for i, r := range m.Rows {
		row := newHTMLRow(i, r, columns)
		counts[row.Status]++
		page.Rows = append(page.Rows, row)
	}
	for _, s := range statuses {
		if counts[s.Class] > 0 {
			page.Counts = append(page.Counts, htmlCount{Class: s.Class, Label: s.Label, N: counts[s.Class]})
		}
	}
	var b bytes.Buffer
	if err := matrixTemplate().Execute(&b, page); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// statuses are the row classes of the page, in the order of its summary.
var statuses = []struct{ Class, Label string }{
	{"ok", "ok"}, {"auth", "auth required"}, {"error", "error"}, {"notrun", "not run"},
}

// rowStatus classifies a row: ok, auth (authentication required), error (the probe could not
// complete), notrun (never launched).
func rowStatus(r matrix.Row) string {
	switch {
	case r.Problem != "" || r.Result == nil:
		return "notrun"
	case r.Result.Error != nil && r.Result.Error.Code == report.ErrAuthRequired:
		return "auth"
	case r.Result.Error != nil:
		return "error"
	case r.Result.Auth.Status == report.AuthRequired:
		return "auth"
	}
	return "ok"
}

type htmlPage struct {
	GeneratedAt, Version string
	Span                 int // columns of the table
	Columns              []htmlColumn
	Rows                 []htmlRow
	Counts               []htmlCount
}

type htmlColumn struct {
	Key, Title string
	Numeric    bool
}

type htmlCount struct {
	Class, Label string
	N            int
}

type htmlCell struct {
	Key, Text, Class string
	// Sort is the numeric sort key of a numeric column ("" when the cell has no number).
	Sort    string
	Numeric bool
}

type htmlRow struct {
	Index                  int
	ID, Source, Launch     string
	Problem, Transcript    string
	Status, StatusText     string
	Cells                  []htmlCell
	Result                 *report.Result
	Agent                  []htmlKV
	Caps                   []htmlCapGroup
	AuthMethods            []htmlAuthMethod
	Modes                  []htmlChoice
	Configs                []htmlConfig
	Models                 []htmlChoice
	Methods                []htmlMethod
	Tiers                  []htmlTier
	Extensions             []htmlExtension
	Turns                  []htmlTurn
	Timings                []htmlKV
	Effects                []htmlKV // what the run did to the machine (nil when not observed)
	ErrorAgent, ResultJSON string
	FindingCount           int
	AuthClass              string // the style of the auth status
	// InitUnknown and SessionUnknown say why what initialize (capabilities) and session/new
	// (modes, models, config options) tell is not known; "" when it is.
	InitUnknown, SessionUnknown string
}

type htmlKV struct{ K, V string }

// htmlTurn is one prompt-turn scenario: its outcome, its summary, its details.
type htmlTurn struct {
	Scenario, Outcome, Facts string
	Details                  []htmlKV
}

type htmlCapGroup struct {
	Name  string
	Items []htmlCap
}

type htmlCap struct {
	Name string
	On   bool
}

type htmlAuthMethod struct {
	ID, Name, Type, Description string
	Vars, Meta                  []string
}

// htmlChoice is a mode, a model or a config value; Current marks the selected one.
type htmlChoice struct {
	ID, Name, Description string
	Current               bool
}

type htmlConfig struct {
	ID, Name, Category, Type, Current string
	Values                            []htmlChoice
}

type htmlMethod struct {
	Name, Support, Code, Message, Ms string
}

type htmlTier struct {
	Tier, Class string
	Findings    []report.Finding
}

type htmlExtension struct {
	Kind, Name, Note string
	Count            int
}

func newHTMLRow(i int, r matrix.Row, columns []Column) htmlRow {
	row := htmlRow{Index: i, ID: r.ID, Source: r.Source, Launch: r.Launch, Problem: r.Problem, Transcript: r.Transcript,
		Status: rowStatus(r), StatusText: cmp.Or(Reason(r), Status(r)), Result: r.Result}
	for _, c := range columns {
		cell := htmlCell{Key: c.Key, Text: c.Value(r), Numeric: c.Numeric}
		if c.Numeric {
			if _, err := strconv.ParseFloat(cell.Text, 64); err == nil {
				cell.Sort = cell.Text
			}
		}
		cell.Class = cellClass(c.Key, cell.Text, row.Status)
		row.Cells = append(row.Cells, cell)
	}
	x := r.Result
	if x == nil {
		return row
	}
	if !Initialized(x) {
		row.InitUnknown = initReason(x)
		row.SessionUnknown = row.InitUnknown
	} else if !sessionCreated(x) {
		row.SessionUnknown = sessionReason(x)
	}
	row.Agent = agentKVs(x)
	row.AuthClass = cellClass("auth", string(x.Auth.Status), row.Status)
	row.Caps = capGroups(x.Capabilities)
	row.AuthMethods = authMethods(x.AuthMethods)
	for _, m := range x.Modes {
		row.Modes = append(row.Modes, htmlChoice{ID: m.ID, Name: m.Name, Description: m.Description, Current: m.ID == x.CurrentModeID})
	}
	current := ""
	if x.ModelConfig != nil {
		current = x.ModelConfig.CurrentValue
	}
	for _, m := range x.Models {
		row.Models = append(row.Models, htmlChoice{ID: m.ID, Name: m.Name, Description: m.Description, Current: current != "" && m.ID == current})
	}
	for _, o := range x.ConfigOptions {
		cur := strings.TrimSpace(string(o.CurrentValue))
		if s := o.Current(); s != "" {
			cur = s
		}
		c := htmlConfig{ID: o.ID, Name: o.Name, Category: o.Category, Type: o.Type, Current: cur}
		for _, v := range o.Options {
			name := v.Name
			if v.Group != "" {
				name = strings.TrimSpace(v.Group + " / " + name)
			}
			c.Values = append(c.Values, htmlChoice{ID: v.Value, Name: name, Description: v.Description, Current: v.Value == cur})
		}
		row.Configs = append(row.Configs, c)
	}
	if x.SideEffects != nil {
		row.Effects = effectsKVs(x)
	}
	row.Methods = methods(x.Methods)
	row.Tiers = tiers(x.Findings)
	row.FindingCount = len(x.Findings)
	row.Extensions = extensionList(x)
	for _, tr := range x.Turns {
		ht := htmlTurn{Scenario: tr.Scenario, Outcome: string(tr.Outcome), Facts: turnFacts(tr)}
		for _, d := range turnDetails(tr) {
			ht.Details = append(ht.Details, htmlKV{d[0], d[1]})
		}
		row.Turns = append(row.Turns, ht)
	}
	t := x.Timings
	for _, kv := range []struct {
		k string
		v float64
	}{{"spawn → initialize", t.SpawnToInitializeMs}, {"initialize", t.InitializeMs}, {"session/new", t.SessionNewMs},
		{"methods", t.MethodsMs}, {"teardown", t.TeardownMs}, {"total", t.TotalMs}} {
		// Before initialize answered, only the steps that took time were reached.
		if row.InitUnknown != "" && kv.v == 0 && kv.k != "total" {
			continue
		}
		row.Timings = append(row.Timings, htmlKV{kv.k, fmt.Sprintf("%.1f ms", kv.v)})
	}
	if x.Error != nil && len(x.Error.AgentError) > 0 {
		row.ErrorAgent = jsonText(x.Error.AgentError)
	}
	row.ResultJSON = jsonText(x)
	return row
}

// cellClass styles a cell: the status, the auth status, method support, and "-" as empty.
func cellClass(key, text, status string) string {
	switch {
	case key == "status":
		return "st st-" + status
	case text == "-":
		return "nil"
	case key == "auth":
		switch report.AuthState(text) {
		case report.AuthAuthenticated:
			return "v-ok"
		case report.AuthRequired:
			return "v-auth"
		}
		return "v-unknown"
	case strings.HasPrefix(key, "m-"):
		switch text {
		case "yes":
			return "v-ok"
		case "no":
			return "v-no"
		}
		return "v-unknown"
	case key == "findings":
		if strings.HasPrefix(text, "0/") {
			return ""
		}
		return "v-bad"
	}
	return ""
}

func agentKVs(x *report.Result) []htmlKV {
	var kvs []htmlKV
	add := func(k, v string) {
		if v != "" {
			kvs = append(kvs, htmlKV{k, v})
		}
	}
	switch {
	case !Initialized(x):
		add("agentInfo", "not known")
	case x.AgentInfo != nil:
		add("name", x.AgentInfo.Name)
		add("title", x.AgentInfo.Title)
		add("version", x.AgentInfo.Version)
	default:
		add("agentInfo", "(none)")
	}
	switch {
	case !Initialized(x):
		add("protocol", "not known")
	case x.ProtocolVersion != nil:
		add("protocol", strconv.Itoa(*x.ProtocolVersion))
	default:
		add("protocol", "(unknown)")
	}
	add("command", x.Agent.Command)
	add("cwd", x.Agent.Cwd)
	add("probed at", x.Agent.ProbedAt)
	if x.Exit != nil {
		add("exit", exitText(x))
	}
	add("stderr", fmt.Sprintf("%d bytes", x.StderrBytes))
	return kvs
}

func capGroups(c report.Capabilities) []htmlCapGroup {
	p, m, s, e := c.PromptCapabilities, c.McpCapabilities, c.SessionCapabilities, c.Experimental
	groups := []htmlCapGroup{
		{"prompt", []htmlCap{{"text", true}, {"resource_link", true}, {"image", p.Image}, {"audio", p.Audio}, {"embeddedContext", p.EmbeddedContext}}},
		{"mcp", []htmlCap{{"stdio", true}, {"http", m.HTTP}, {"sse", m.SSE}, {"acp", m.ACP}}},
		{"session", []htmlCap{{"loadSession", c.LoadSession}, {"list", s.List}, {"resume", s.Resume}, {"close", s.Close},
			{"fork", s.Fork}, {"delete", s.Delete}, {"additionalDirectories", s.AdditionalDirectories}}},
		{"auth", []htmlCap{{"logout", c.Auth.Logout}}},
		{"experimental", []htmlCap{{"nes", e.NES}, {"providers", e.Providers}, {"positionEncoding", e.PositionEncoding}}},
	}
	if len(c.MetaKeys) > 0 {
		g := htmlCapGroup{Name: "_meta"}
		for _, k := range c.MetaKeys {
			g.Items = append(g.Items, htmlCap{k, true})
		}
		groups = append(groups, g)
	}
	return groups
}

func authMethods(raws []json.RawMessage) []htmlAuthMethod {
	var out []htmlAuthMethod
	for _, raw := range raws {
		o := acp.ParseObject(raw)
		a := htmlAuthMethod{ID: o.String("id"), Name: o.String("name"), Type: o.String("type"), Description: o.String("description")}
		if a.Type == "" {
			a.Type = "agent"
		}
		for _, v := range o.Array("vars") {
			a.Vars = append(a.Vars, acp.ParseObject(v).String("name"))
		}
		if meta := o.Object("_meta"); meta != nil {
			a.Meta = meta.Keys()
		}
		out = append(out, a)
	}
	return out
}

// methods lists the method support table: the probed methods in report order, then any other.
func methods(ms map[string]report.MethodSupport) []htmlMethod {
	var names []string
	seen := map[string]bool{}
	for _, m := range acp.ProbedMethods {
		if _, ok := ms[m]; ok {
			names = append(names, m)
			seen[m] = true
		}
	}
	var rest []string
	for m := range ms {
		if !seen[m] {
			rest = append(rest, m)
		}
	}
	sort.Strings(rest)
	var out []htmlMethod
	for _, name := range append(names, rest...) {
		s := ms[name]
		m := htmlMethod{Name: name, Support: string(s.Support), Message: s.Message, Ms: fmt.Sprintf("%.1f", s.Ms)}
		if s.Code != nil {
			m.Code = strconv.Itoa(*s.Code)
		}
		out = append(out, m)
	}
	return out
}

func tiers(fs []report.Finding) []htmlTier {
	var out []htmlTier
	for _, tier := range report.Tiers {
		g := htmlTier{Tier: string(tier), Class: "tier-" + strings.ToLower(string(tier))}
		for _, f := range fs {
			if f.Tier == tier {
				g.Findings = append(g.Findings, f)
			}
		}
		if len(g.Findings) > 0 {
			out = append(out, g)
		}
	}
	// Findings of a tier this renderer does not know still show, last.
	other := htmlTier{Tier: "OTHER", Class: "tier-info"}
	for _, f := range fs {
		if f.Tier.Rank() == len(report.Tiers) {
			other.Findings = append(other.Findings, f)
		}
	}
	if len(other.Findings) > 0 {
		out = append(out, other)
	}
	return out
}

func extensionList(x *report.Result) []htmlExtension {
	inv := x.Extensions
	if inv == nil {
		return nil
	}
	describe := func(known bool, vendor, class string) string {
		switch {
		case known:
			return vendor + ", " + class
		case vendor != "":
			return vendor + ", not in the catalogue"
		}
		return "unknown vendor"
	}
	var out []htmlExtension
	for _, k := range inv.MetaKeys {
		out = append(out, htmlExtension{Kind: "_meta", Name: k.Key, Note: string(k.Form) + "; " + describe(k.Known, k.Vendor, string(k.Class)), Count: k.Count})
	}
	for _, m := range inv.Methods {
		out = append(out, htmlExtension{Kind: "method", Name: m.Name, Note: string(m.ObservedKind) + "; " + describe(m.Known, m.Vendor, string(m.Class)), Count: m.Count})
	}
	for _, v := range inv.UnknownVariants {
		note := "not in the ACP schema"
		if v.Known {
			note = "catalogued for " + v.Vendor
		}
		out = append(out, htmlExtension{Kind: v.Field, Name: v.Value, Note: note, Count: v.Count})
	}
	return out
}

// jsonText is v as JSON writes it (the agent's own values compact, whatever their depth),
// without the final newline; "" when v cannot be written.
func jsonText(v any) string {
	b, err := jsonout.Indent(v)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(b), "\n")
}
