package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

const evil = `<script>alert(1)</script>`

func intp(n int) *int { return &n }

// htmlMatrix is a matrix built by hand: an agent that works, one that needs authentication
// (with findings), one that could not be launched, and one whose every string is hostile.
func htmlMatrix() *matrix.Matrix {
	ok := &report.Result{
		Schema: report.ResultSchema, ProtocolVersion: intp(1),
		AgentInfo: &acp.Implementation{Name: "claude-agent-acp", Title: "Claude", Version: "0.23.1"},
		Capabilities: report.Capabilities{LoadSession: true, PromptCapabilities: report.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities: report.McpCapabilities{HTTP: true}, SessionCapabilities: report.SessionCapabilities{List: true, Close: true},
			MetaKeys: []string{"claudeCode"}},
		AuthMethods: []json.RawMessage{},
		Auth:        report.AuthStatus{Status: report.AuthAuthenticated, Evidence: []string{"session/new succeeded without authenticate"}},
		Modes:       []acp.Mode{{ID: "default", Name: "Default"}, {ID: "plan", Name: "Plan Mode", Description: "no tool execution"}},
		Models:      []acp.Model{{ID: "opus", Name: "Opus"}, {ID: "haiku", Name: "Haiku"}}, CurrentModeID: "default",
		ConfigOptions: []acp.ConfigOption{{ID: "model", Name: "Model", Category: "model", Type: "select", CurrentValue: json.RawMessage(`"opus"`),
			Options: []acp.SelectOption{{Value: "opus", Name: "Opus"}, {Value: "haiku", Name: "Haiku"}}}},
		ModelConfig: &report.ModelConfig{ConfigID: "model", Values: []string{"opus", "haiku"}, CurrentValue: "opus"},
		Methods: map[string]report.MethodSupport{
			acp.MethodSessionList:   {Support: report.Supported, Ms: 1.5},
			acp.MethodSessionDelete: {Support: report.Unsupported, Code: intp(-32601), Message: "Method not found"},
		},
		Timings:    report.Timings{SpawnToInitializeMs: 812.4, TotalMs: 1500},
		StderrTail: "claude: ready\n",
	}
	auth := &report.Result{
		Schema: report.ResultSchema, ProtocolVersion: intp(1),
		AgentInfo: &acp.Implementation{Name: "codex-acp", Version: "0.16.0"},
		AuthMethods: []json.RawMessage{
			json.RawMessage(`{"id":"chatgpt","name":"Login with ChatGPT"}`),
			json.RawMessage(`{"type":"env_var","id":"codex-api-key","name":"Use CODEX_API_KEY","vars":[{"name":"CODEX_API_KEY"}]}`),
		},
		Auth: report.AuthStatus{Status: report.AuthRequired},
		Methods: map[string]report.MethodSupport{
			acp.MethodSessionLoad: {Support: report.Supported, Code: intp(-32000), Message: "Authentication required"},
		},
		Timings: report.Timings{SpawnToInitializeMs: 95},
		Findings: []report.Finding{
			{ID: "protocol.notification-answered", Tier: report.TierMandatory, Title: "Notification answered", Message: "the agent answered a notification", Seq: 7},
			{ID: "protocol.stdin-exit", Tier: report.TierAdvisory, Title: "No exit on stdin close", Message: "still running 2 s after stdin closed"},
			{ID: "schema.unstable", Tier: report.TierInfo, Message: "acp is unstable", Pointer: "/result/agentCapabilities/mcpCapabilities/acp"},
		},
		Error: &report.Error{Code: report.ErrAuthRequired, Stage: record.StageSessionNew, Message: "session/new requires authentication",
			AgentError: json.RawMessage(`{"code":-32000,"message":"Authentication required"}`)},
	}
	hostile := &report.Result{
		Schema: report.ResultSchema, ProtocolVersion: intp(1),
		AgentInfo:   &acp.Implementation{Name: "x" + evil, Title: `"><img src=x onerror=alert(2)>`, Version: "1"},
		AuthMethods: []json.RawMessage{json.RawMessage(`{"id":"<b>id</b>","name":"` + `<script>alert(5)<\/script>` + `","type":"<i>t</i>"}`)},
		Auth:        report.AuthStatus{Status: report.AuthAuthenticated, Evidence: []string{evil}},
		Modes:       []acp.Mode{{ID: `mode"onmouseover="alert(3)`, Name: evil}},
		ConfigOptions: []acp.ConfigOption{{ID: "</td></tr></table>", Name: evil, Type: "select", CurrentValue: json.RawMessage(`"</script>"`),
			Options: []acp.SelectOption{{Value: "</script>", Name: `'; alert(4); '`}}}},
		Methods:    map[string]report.MethodSupport{"_vendor/" + evil: {Support: report.Supported, Message: evil}},
		Findings:   []report.Finding{{ID: "x", Tier: report.TierInfo, Message: evil, Pointer: evil}},
		StderrTail: "</pre>" + evil + "<!--",
		Timings:    report.Timings{SpawnToInitializeMs: 3},
	}
	return &matrix.Matrix{Schema: matrix.Schema, Version: "0.9.9-test", GeneratedAt: "2026-11-29T12:00:00Z", Rows: []matrix.Row{
		{ID: "claude", Source: "registry", Launch: "npx -y @zed-industries/claude-agent-acp", Result: ok},
		{ID: "codex", Source: "registry", Launch: "codex-acp", Result: auth},
		{ID: "goose", Source: "registry", Launch: "goose acp", Problem: "goose is not on PATH"},
		{ID: "evil" + evil, Source: "config", Launch: "evil " + evil, Result: hostile},
	}}
}

func renderHTML(t *testing.T, m *matrix.Matrix) string {
	t.Helper()
	var b bytes.Buffer
	if err := MatrixHTML(&b, m); err != nil {
		t.Fatalf("MatrixHTML: %v", err)
	}
	return b.String()
}

func TestMatrixHTMLContent(t *testing.T) {
	m := htmlMatrix()
	out := renderHTML(t, m)

	must := func(what, s string) {
		t.Helper()
		if !strings.Contains(out, s) {
			t.Errorf("%s: the page lacks %q", what, s)
		}
	}
	must("doctype", "<!DOCTYPE html>")
	must("title", "<title>ACP capability matrix · 2026-11-29T12:00:00Z</title>")
	must("version", "acpprobe 0.9.9-test")
	must("generation time", `<time datetime="2026-11-29T12:00:00Z">2026-11-29T12:00:00Z</time>`)
	for _, c := range Columns {
		must("column title", ">"+template.HTMLEscapeString(c.Title)+"<span class=\"arrow\">")
		must("column key", `<th scope="col" data-key="`+c.Key+`"`)
		if n := strings.Count(out, `<td data-key="`+c.Key+`"`); n != len(m.Rows) {
			t.Errorf("column %s: %d cells, want one per row (%d)", c.Key, n, len(m.Rows))
		}
	}
	for _, r := range m.Rows {
		must("row id", `data-id="`+template.HTMLEscapeString(r.ID)+`"`)
	}
	// Numeric columns sort by number: marked, with the number in data-sort.
	must("numeric header", `<th scope="col" data-key="startup" aria-sort="none" class="num">`)
	must("numeric cell", `<td data-key="startup" class=" num" data-sort="812">812</td>`)
	must("missing number", `<td data-key="startup" class="nil num" data-sort="">-</td>`)
	// Status classes.
	for id, st := range map[string]string{"claude": "ok", "codex": "auth", "goose": "notrun"} {
		must("status of "+id, `<tbody class="agent st-`+st+`" data-id="`+id+`"`)
	}
	must("status text", `<span class="clamp">auth_required: session/new requires authentication</span>`)
	must("not run", "not run: goose is not on PATH")

	// The details.
	must("agentInfo", "claude-agent-acp")
	must("capability chip", `<li class="chip on">embeddedContext</li>`)
	must("capability off", `<li class="chip off">audio</li>`)
	must("_meta capability", `<li class="chip on">claudeCode</li>`)
	must("auth method", `<code>codex-api-key</code></td><td class="nw">env_var</td>`)
	must("auth method default type", `<code>chatgpt</code></td><td class="nw">agent</td>`)
	must("auth vars", "<code>CODEX_API_KEY</code>")
	must("mode", `<code>default</code> <span class="chip cur">current</span>`)
	must("config value", `<li class="chip cur" title="Opus">opus</li>`)
	must("model", "<code>haiku</code>")
	must("method code", `<td class="sup-unsupported">unsupported</td><td class="mono">-32601</td><td>Method not found</td>`)
	for _, tier := range []string{"MANDATORY · 1", "ADVISORY · 1", "INFO · 1"} {
		must("tier", tier)
	}
	if strings.Contains(out, "CAPABILITY · ") {
		t.Errorf("an empty tier is shown")
	}
	must("finding", "<code>protocol.notification-answered</code>")
	must("finding message", "the agent answered a notification")
	must("error", "Error: auth_required")
	must("agent error", "&#34;code&#34;: -32000")
	must("stderr", "claude: ready")
	must("result JSON", "&#34;schema&#34;: &#34;acpprobe.result/v1&#34;,\n  &#34;agent&#34;:")
	must("problem", `<dt>problem</dt><dd>goose is not on PATH</dd>`)

	// Escaping: the hostile strings are shown, never interpreted.
	for _, bad := range []string{"<script>alert", "<img src=x", `"onmouseover=`, "<b>id</b>", "<i>t</i>", "</td></tr></table>", "</pre><script", "<!--"} {
		if strings.Contains(out, bad) {
			t.Errorf("unescaped agent data in the page: %q", bad)
		}
	}
	must("escaped agent name", "x&lt;script&gt;alert(1)&lt;/script&gt;")
	must("escaped row id", `data-id="evil&lt;script&gt;alert(1)&lt;/script&gt;"`)
	if n := strings.Count(out, "<script"); n != 1 {
		t.Errorf("%d <script elements, want the page's own 1", n)
	}

	// Self-contained: no tag refers to anything (no src, href, …, no URL in the style sheet).
	attr := regexp.MustCompile(`(?i)\b(src|href|action|formaction|poster|srcset|data|background)\s*=`)
	for _, tag := range regexp.MustCompile(`<[a-zA-Z][^>]*>`).FindAllString(out, -1) {
		if attr.MatchString(tag) {
			t.Errorf("a tag refers to a resource: %s", tag)
		}
	}
	if loc := regexp.MustCompile(`(?i)url\(|@import|<(link|iframe|img|object|embed|base|audio|video|source)\b`).FindStringIndex(out); loc != nil {
		t.Errorf("the page refers to an external resource: %q", out[max(0, loc[0]-40):min(len(out), loc[1]+40)])
	}
	// The test data holds no URL, so any would come from the page itself.
	for _, scheme := range []string{"http://", "https://", "//fonts", "data:"} {
		if strings.Contains(out, scheme) {
			t.Errorf("the page contains %q", scheme)
		}
	}

	// Structure: every container is closed.
	for _, tag := range []string{"html", "head", "body", "style", "script", "header", "main", "table", "thead", "tbody", "tr", "th", "td", "section", "details", "pre", "ul", "dl", "div", "button"} {
		open := len(regexp.MustCompile(`<`+tag+`[\s>]`).FindAllStringIndex(out, -1))
		closed := strings.Count(out, "</"+tag+">")
		if open != closed || open == 0 {
			t.Errorf("<%s>: %d opened, %d closed", tag, open, closed)
		}
	}
	if n := strings.Count(out, `<tbody class="agent`); n != len(m.Rows) {
		t.Errorf("%d agent rows, want %d", n, len(m.Rows))
	}
	if n := strings.Count(out, `<tr class="detail"`); n != len(m.Rows) {
		t.Errorf("%d detail rows, want %d", n, len(m.Rows))
	}
	if n := strings.Count(out, `colspan="`+strconv.Itoa(len(Columns))+`"`); n != len(m.Rows) {
		t.Errorf("%d detail cells spanning the %d columns, want %d", n, len(Columns), len(m.Rows))
	}
}

// The page is a pure function of the matrix (map order never leaks in).
func TestMatrixHTMLDeterministic(t *testing.T) {
	a, b := renderHTML(t, htmlMatrix()), renderHTML(t, htmlMatrix())
	if a != b {
		t.Errorf("two renderings of the same matrix differ")
	}
}

func TestMatrixHTMLEmpty(t *testing.T) {
	out := renderHTML(t, &matrix.Matrix{Schema: matrix.Schema, Version: "dev", GeneratedAt: "2026-01-01T00:00:00Z"})
	if !strings.Contains(out, "0</span> agents") || strings.Contains(out, `<tbody class="agent`) {
		t.Errorf("an empty matrix should render an empty table")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errWrite }

var errWrite = errors.New("write failed")

func TestMatrixHTMLWriteError(t *testing.T) {
	if err := MatrixHTML(failWriter{}, htmlMatrix()); err != errWrite {
		t.Errorf("MatrixHTML on a failing writer: %v, want the writer's error", err)
	}
}

// TestMatrixHTMLNotKnown (issue 13, item 8): the details of an agent that never answered
// initialize say so instead of showing capabilities, and those of an agent without a session
// say that modes, models and config options are not known.
func TestMatrixHTMLNotKnown(t *testing.T) {
	spawn := &report.Result{Schema: report.ResultSchema, Raw: report.Raw{Initialize: json.RawMessage("null")},
		Auth:  report.AuthStatus{Status: report.AuthUnknown},
		Error: &report.Error{Code: report.ErrSpawnFailed, Stage: record.StageSpawn, Message: "no such file"}}
	m := htmlMatrix()
	m.Rows = []matrix.Row{{ID: "spawn", Result: spawn}, m.Rows[1]}
	out := renderHTML(t, m)
	spawnPart, authPart, _ := strings.Cut(out, `data-id="codex"`)
	for _, want := range []string{
		"<h3>Capabilities</h3><p class=\"none\">Not known: the agent never answered initialize.</p>",
		"<dt>agentInfo</dt><dd>not known</dd>",
		"Not known: the agent never answered initialize.</p>\n</section>\n<section class=\"card wide\"><h3>Config options",
		`<p class="none">Not known: the agent never answered initialize.</p>`,
	} {
		if !strings.Contains(spawnPart, want) {
			t.Errorf("the spawn failure's details lack %q", want)
		}
	}
	if strings.Contains(spawnPart, `class="chip`) || strings.Contains(spawnPart, "No findings.") {
		t.Errorf("the spawn failure's details show capabilities or 'No findings'")
	}
	if n := strings.Count(authPart, "Not known: session/new did not succeed (auth_required).</p>"); n != 3 {
		t.Errorf("the auth_required row says modes, models and config options are not known %d times, want 3", n)
	}
}

// TestMatrixHTMLSideEffects: a row whose run observed side effects (check --isolate --auth-ab
// of the side-effects fault) has a Side effects card and the auth oracle in its
// Authentication card; its summary row says them in two cells.
func TestMatrixHTMLSideEffects(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "side-effects.result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := renderHTML(t, &matrix.Matrix{Schema: matrix.Schema, Rows: []matrix.Row{{ID: "fault", Result: &r}}})
	for _, want := range []string{
		`<section class="card span2"><h3>Side effects</h3>`,
		`<dd>created home/.acptest/state.json (file, 44 bytes)</dd>`,
		`<dd>xdg-open https://login.acptest.invalid/oauth/authorize?… at 57 ms</dd>`,
		`Your identity against an empty one (--auth-ab): <strong>authenticated</strong>`,
		`<td data-key="effects"`, `home, 3 files, 1 browser, 2 survived`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
