package render_test

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// wide renders r as a terminal wide enough for any line: what a line says, unwrapped.
func wide(t *testing.T, r *report.Result) string {
	t.Helper()
	return string(write(t, func(w io.Writer) error { return render.Text(&render.Screen{W: w, Width: 100000}, r) }))
}

// lineWith is the line of text that holds s ("" when none).
func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestListsFold (issue 20 item 6): a list of similar items is one short line in the text
// report: tool calls counted by kind and status, names past ten said as "… and N more",
// the items a replay misses past three, the extension keys that share their classification.
func TestListsFold(t *testing.T) {
	var calls []report.ToolCallTruth
	for i := range 28 {
		calls = append(calls, report.ToolCallTruth{ID: fmt.Sprintf("call_emu_%d", i), Kind: "edit", Status: "completed"})
	}
	mixed := append(calls[:2:2], report.ToolCallTruth{ID: "r", Kind: "read", Status: "failed"})
	var missing []string
	var models []acp.Model
	var values []acp.SelectOption
	for i := range 50 {
		missing = append(missing, fmt.Sprintf("tool call call_emu_%d (edit, completed)", i))
		models = append(models, acp.Model{ID: fmt.Sprintf("gpt-6[%d]", i)})
		values = append(values, acp.SelectOption{Value: fmt.Sprintf("v%d", i)})
	}
	r := &report.Result{Raw: report.Raw{Initialize: []byte(`{}`), NewSession: []byte(`{}`)},
		Turns: []report.Turn{
			{Scenario: string(record.ScenarioCompletion), Outcome: report.TurnPassed, Runs: []report.TurnRun{{AnswerSeq: 9, StopReason: "end_turn", ToolCalls: calls}}},
			{Scenario: string(record.ScenarioSessions), Outcome: report.TurnFailed, Sessions: &report.SessionsTruth{
				Live: report.SessionHistory{AgentText: true, ToolCalls: mixed, Updates: 9},
				Load: &report.SessionLoad{SessionCall: report.SessionCall{Seq: 5, AnswerSeq: 8}, Missing: missing}}},
		},
		Extensions: &extensions.Inventory{MetaKeys: []extensions.SeenKey{
			{Key: "altNames", Form: "bare", Observed: []extensions.Direction{extensions.DirectionAgentToClient}, Count: 6},
			{Key: "args", Form: "bare", Observed: []extensions.Direction{extensions.DirectionAgentToClient}, Count: 1},
			{Key: "source", Form: "bare", Observed: []extensions.Direction{extensions.DirectionAgentToClient}, Count: 49},
			{Key: "claudeCode/promptQueueing", Form: "nested", Vendor: "claudeCode", Known: true, Class: "public", Observed: []extensions.Direction{extensions.DirectionAgentToClient}, Count: 1},
		}},
	}
	r.Models = models
	r.ConfigOptions = []acp.ConfigOption{{ID: "model", Type: "select", CurrentValue: []byte(`"v0"`), Options: values}}
	text := wide(t, r)
	for _, c := range []struct{ what, line, want string }{
		{"a run's tool calls", "completion:", "28 tool calls (edit, completed)"},
		{"a live turn's tool calls", "live turn:", "9 update(s): agent text, 3 tool calls (2 edit, completed; 1 read, failed)"},
		{"what a load misses", "load:", "misses tool call call_emu_0 (edit, completed); tool call call_emu_1 (edit, completed); tool call call_emu_2 (edit, completed) … and 47 more"},
		{"the models", "models:", "gpt-6[0], gpt-6[1], gpt-6[2], gpt-6[3], gpt-6[4], gpt-6[5], gpt-6[6], gpt-6[7], gpt-6[8], gpt-6[9] … and 40 more (declared in session/new)"},
		{"the values", "values:", "v0, v1, v2, v3, v4, v5, v6, v7, v8, v9 … and 40 more"},
		{"the keys of one classification", "_meta keys", "3 _meta keys (bare) — unknown vendor; seen agent-to-client: altNames 6×, args 1×, source 49×"},
		{"a key alone in its classification", "promptQueueing", "_meta claudeCode/promptQueueing (nested) — claudeCode, public; seen 1× agent-to-client"},
	} {
		if l := lineWith(text, c.line); !strings.Contains(l, c.want) {
			t.Errorf("%s: the line is %q, want it to say %q", c.what, l, c.want)
		}
	}
	if strings.Contains(text, "call_emu_27") || strings.Contains(text, "gpt-6[10]") {
		t.Errorf("the text lists what it should count:\n%s", text)
	}
}

// TestRealReportsFold: the real long reports of today's agents, at 80 columns in a file: the
// claude-agent-acp turn whose sessions scenario made 88 edit tool calls, the codex-acp check
// with 50 legacy model ids.
func TestRealReportsFold(t *testing.T) {
	for name, want := range map[string][]string{
		"turn-claude-agent-acp": {"live turn:                352 update(s): 88 tool calls (edit, completed)\n"},
		"turn-codex-acp":        {"  models:                     gpt-6.1-sol[low], gpt-6.1-sol[medium],\n", "gpt-6-astra[high], gpt-6-astra[xhigh] … and 40\n"},
	} {
		r := loadResult(t, filepath.Join("testdata", name+".result.json"))
		text := string(write(t, func(w io.Writer) error { return render.Text(w, r) }))
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: the report lacks %q:\n%s", name, w, text)
			}
		}
	}
	// claude's seven schema.unstable findings at /result/usage (one a turn), one entry; the
	// sessions finding that names every tool call a replay missed, cut.
	text := string(write(t, func(w io.Writer) error {
		return render.Text(w, loadResult(t, filepath.Join("testdata", "turn-claude-agent-acp.result.json")))
	}))
	if n := strings.Count(text, "schema.unstable ["); n != 4 || !strings.Contains(text, "schema.unstable [/result/usage, 7 times: seq 57, 70, 83, 98, 112 … and 2") {
		t.Errorf("claude-agent-acp: %d schema.unstable entries, want 4 (the seven at /result/usage one of them):\n%s", n, text)
	}
	if n := strings.Count(text, "call_emu_"); n > 10 {
		t.Errorf("claude-agent-acp: %d tool call ids in the report, want the few of a cut message and a folded list:\n%s", n, text)
	}
}

// TestFindingsFold (issue 25 item 10): the findings of a check that differ only in their line
// are one entry, with how many and on which lines, the check's unlisted count said through
// Finding.Text; findings at another place, or known, stay apart; a message longer than four
// lines is cut and says where the rest is. The report and lint-client alike.
func TestFindingsFold(t *testing.T) {
	usage := func(seq int64) report.Finding {
		return report.Finding{ID: "schema.unstable", Tier: report.TierInfo, Seq: seq, Pointer: "/result/usage",
			Message: `"usage" at /result is defined only in the v1-unstable schema, not in v1`}
	}
	var findings []report.Finding
	for i := range 10 {
		findings = append(findings, usage(int64(57+13*i)))
	}
	findings[9].More = 322
	other := usage(4)
	other.Pointer = "/result/agentCapabilities/providers"
	known := usage(200)
	known.Known, known.KnownReason = true, "accepted"
	long := report.Finding{ID: "models.legacy-ids", Tier: report.TierInfo, Seq: 6, Message: "50 of 50 legacy model ids are not values: " + strings.Repeat("gpt-6.1-sol[medium], ", 50)}
	findings = append(findings[:3], append([]report.Finding{other}, append(findings[3:], known, long)...)...)

	r := &report.Result{Raw: report.Raw{Initialize: []byte(`{}`)}, Findings: findings}
	report := wide(t, r)
	var client bytes.Buffer
	if err := render.ClientFindings(&render.Screen{W: &client, Width: 100000}, findings); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"the report": report, "lint-client": client.String()} {
		if n := strings.Count(text, "schema.unstable"); n != 3 {
			t.Errorf("%s: schema.unstable comes %d times, want 3 (the ten at /result/usage, the one elsewhere, the known one):\n%s", name, n, text)
		}
		for _, want := range []string{
			"schema.unstable [/result/usage, 10 times: seq 57, 70, 83, 96, 109 … and 5 more]",
			`"usage" at /result is defined only in the v1-unstable schema, not in v1 (and 322 more like this)`,
			"schema.unstable [seq 4 /result/agentCapabilities/providers]",
			"schema.unstable [seq 200 /result/usage]",
			"gpt-6.1-sol[medium], gpt-6… (cut: the whole message is in --json)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, text)
			}
		}
		if l := lineWith(text, "legacy model ids"); render.Width(l) > 360 {
			t.Errorf("%s: the long message takes %d columns: %q", name, render.Width(l), l)
		}
	}
	if !strings.Contains(report, "INFO (13)") {
		t.Errorf("the tier's count is not the count of findings:\n%s", report)
	}
}

// TestSideEffectsFold (issue 25 item 10): a run with your HOME says how many places agents
// keep state it compared, not the twenty names (379 columns before); a spawn failure, for
// which nothing changed, says nothing of files; the changes past ten are counted.
func TestSideEffectsFold(t *testing.T) {
	var watched []string
	for i := range 20 {
		watched = append(watched, fmt.Sprintf("~/.agent%d", i))
	}
	var changes []record.FileChange
	for i := range 15 {
		changes = append(changes, record.FileChange{Path: fmt.Sprintf("~/.agent0/f%d", i), Change: "created", Kind: "file"})
	}
	effects := func(level record.Level, watched []string, changes []record.FileChange) *report.SideEffects {
		return &report.SideEffects{Isolation: record.Isolation{Level: level},
			Files: &record.Files{Watched: watched, Changes: changes, Created: len(changes), Walked: 40}}
	}
	home := &report.Result{SideEffects: effects(record.LevelNone, watched, changes)}
	text := wide(t, home)
	if l := lineWith(text, "files:"); !strings.HasSuffix(l, "15 created, 0 changed, 0 deleted, in 20 places agents keep state under your HOME (see --json)") {
		t.Errorf("not isolated: the files line is %q", l)
	}
	if strings.Contains(text, "~/.agent19") || !strings.Contains(text, "created ~/.agent0/f9 (file, 0 bytes)") || strings.Contains(text, "f10") || !strings.Contains(text, "    … and 5 more\n") {
		t.Errorf("not isolated: the watched places are listed, or the changes past ten are:\n%s", text)
	}
	boxed := wide(t, &report.Result{SideEffects: effects(record.LevelEnvHome, []string{"home", "tmp", "run", "workspace"}, nil)})
	if l := lineWith(boxed, "files:"); !strings.HasSuffix(l, "0 created, 0 changed, 0 deleted, in home, tmp, run, workspace") {
		t.Errorf("isolated: the files line is %q", l)
	}
	spawn := loadResult(t, filepath.Join("testdata", "spawn-failure.result.json"))
	if spawn.SideEffects == nil || spawn.SideEffects.Files == nil || len(spawn.SideEffects.Files.Watched) != 20 {
		t.Fatalf("the spawn failure fixture has no side effects of 20 watched places: %+v", spawn.SideEffects)
	}
	if text := wide(t, spawn); strings.Contains(text, "files:") || !strings.Contains(text, "isolation:") {
		t.Errorf("a spawn failure says something of files, or nothing of its isolation:\n%s", text)
	}
}

// TestMatrixReasons (issue 25 item 10): the text, Markdown and HTML matrices say why each row
// is not ok, in full: the probe's message and the line of the agent's stderr that says why (a
// Node error among its stack, what npm could not fetch), never a line the message already
// has; the matrix JSON keeps the whole stderr tail.
func TestMatrixReasons(t *testing.T) {
	crash := func(message, stderr string) *report.Result {
		return &report.Result{Raw: report.Raw{Initialize: []byte(`{}`)}, StderrTail: stderr,
			Error: &report.Error{Code: report.ErrAgentCrashed, Stage: record.StageInitialize, Message: message, Stderr: stderr}}
	}
	node := "file:///agent/dist/index.js:12\n        throw new Error(msg);\n              ^\n\nError: Query closed before response received\n    at Query.cleanup (file:///agent/dist/query.js:80:15)\n\nNode.js v22.12.0\n"
	npm := "npm error code ETARGET\nnpm error notarget No matching version found for @google/gemini-cli@0.27.3.\nnpm error A complete log of this run can be found in: /root/.npm/_logs/x-debug-0.log\n"
	m := &matrix.Matrix{Schema: matrix.Schema, Rows: []matrix.Row{
		{ID: "claude", Result: crash("the agent exited with status 1 before answering initialize", node)},
		{ID: "gemini", Result: crash("the agent exited with status 1 before answering initialize", npm)},
		{ID: "said", Result: crash("the agent said: boom", "boom\n")},
		{ID: "long", Result: crash("the agent exited", "Error: "+strings.Repeat("x", 1000)+"\n")},
		{ID: "fine", Result: &report.Result{Raw: report.Raw{Initialize: []byte(`{}`)}}},
	}}
	want := map[string]string{
		"claude": "claude: agent_crashed: the agent exited with status 1 before answering initialize; stderr: Error: Query closed before response received",
		"gemini": "gemini: agent_crashed: the agent exited with status 1 before answering initialize; stderr: npm: no version 0.27.3 of @google/gemini-cli",
		"said":   "said: agent_crashed: the agent said: boom",
		"long":   "long: agent_crashed: the agent exited; stderr: Error: " + strings.Repeat("x", 152) + "…",
	}
	text := string(write(t, func(w io.Writer) error { return render.MatrixText(&render.Screen{W: w, Width: 100000}, m) }))
	md := string(write(t, func(w io.Writer) error { return render.MatrixMarkdown(w, m) }))
	page := string(write(t, func(w io.Writer) error { return render.MatrixHTML(w, m) }))
	for id, w := range want {
		if l := lineWith(text, "  "+id+": "); l != "  "+w {
			t.Errorf("text: the line of %s is %q, want %q", id, l, "  "+w)
		}
		if l := lineWith(md, "**"+id+"**"); l != "- **"+id+"**:"+strings.TrimPrefix(w, id+":") {
			t.Errorf("markdown: the line of %s is %q", id, l)
		}
		if reason := strings.TrimPrefix(w, id+": "); !strings.Contains(page, html.EscapeString(reason)) {
			t.Errorf("html: the page lacks %q", reason)
		}
	}
	if strings.Contains(text, "fine:") || strings.Contains(text, "Node.js v22") || strings.Contains(text, "debug-0.log") {
		t.Errorf("text: a reason for a row that is ok, or the wrong line of stderr:\n%s", text)
	}
	var js bytes.Buffer
	if err := render.JSON(&js, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"stderrTail": "file:///agent/dist/index.js:12\n`) {
		t.Errorf("the matrix JSON does not keep the stderr tail:\n%s", js.String())
	}
}

// TestNarrowMatrixSessions: on a terminal too narrow for every column, the Sessions turn column
// is shown or named among the columns left out, as every other column is.
func TestNarrowMatrixSessions(t *testing.T) {
	m := &matrix.Matrix{Schema: matrix.Schema, Rows: []matrix.Row{{ID: "model", Result: loadResult(t, filepath.Join("testdata", "turn-faults.result.json"))}}}
	for _, width := range []int{60, 80, 120, 200} {
		text := string(write(t, func(w io.Writer) error { return render.MatrixText(&render.Screen{W: w, Width: width}, m) }))
		named := slices.ContainsFunc(strings.Fields(text), func(w string) bool { return strings.Trim(w, ",;:()") == "Sess" })
		if !named {
			t.Errorf("at %d columns the Sessions column is neither shown nor left out by name:\n%s", width, text)
		}
	}
}
