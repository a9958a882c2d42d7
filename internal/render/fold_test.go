package render_test

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
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
}
