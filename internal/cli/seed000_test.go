package cli_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// seed000Doc is the page that answers seed 000's question on the real CodeBuddy Code, and
// seed000Transcript the recording its tables come from.
const (
	seed000Doc        = "../../docs/codebuddy.md"
	seed000Transcript = "codebuddy-code-2.117.0/check-turns.ndjson"
	seed000Begin      = "<!-- seed-000 tables: written by internal/cli's TestSeed000Tables from testdata/agents/" + seed000Transcript + " -->\n"
	seed000End        = "<!-- end of the seed-000 tables -->\n"
)

// TestSeed000Tables re-derives the tables of docs/codebuddy.md from the recorded CodeBuddy Code
// 2.117.0 check: the prompt shapes it rejects and the error details that say its union, the
// content blocks it accepts and which of them reach its model, and how the answer is delivered
// (the update kinds carrying it, the stopReason, the time from the last chunk to the answer).
// With -update it rewrites them.
func TestSeed000Tables(t *testing.T) {
	r := analyzeRecorded(t, seed000Transcript)
	got := seed000Tables(t, r)
	doc, err := os.ReadFile(seed000Doc)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := strings.Index(string(doc), seed000Begin), strings.Index(string(doc), seed000End)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no seed-000 tables between %q and %q", seed000Doc, seed000Begin, seed000End)
	}
	kept := string(doc[begin+len(seed000Begin) : end])
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" { // help_test.go's -update
		out := string(doc[:begin+len(seed000Begin)]) + got + string(doc[end:])
		if err := os.WriteFile(seed000Doc, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if kept != got {
		t.Errorf("the tables of %s are not those the transcript gives (go test ./internal/cli -run TestSeed000Tables -update):\n%s\nwant:\n%s", seed000Doc, kept, got)
	}
}

// analyzeRecorded is acpprobe.Analyze of a transcript of testdata/agents.
func analyzeRecorded(t *testing.T, file string) *report.Result {
	t.Helper()
	r, err := acpprobe.Analyze(context.Background(), readRecorded(t, filepath.Join(recordedDir, file)), acpprobe.AnalyzeOptions{})
	if err != nil {
		t.Fatalf("analyze %s: %v", file, err)
	}
	return r
}

// seed000Tables are the three tables, in markdown.
func seed000Tables(t *testing.T, r *report.Result) string {
	t.Helper()
	var b strings.Builder
	ps := r.PromptShapes
	if ps == nil || len(ps.Probes) == 0 {
		t.Fatal("the transcript has no prompt-shape probes")
	}
	b.WriteString("| prompt sent | outcome | answer | what the error details say |\n| --- | --- | --- | --- |\n")
	for _, p := range ps.Probes {
		var a struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		_ = json.Unmarshal(p.Answer, &a)
		fmt.Fprintf(&b, "| `%s` | %s | %d %s | %s |\n", compact(p.Prompt), p.Outcome, a.Code, a.Message, zodSummary(a.Data))
	}
	fmt.Fprintf(&b, "\nError style: %s. Branches of the union the details name: %s; fields they require: %s.\n\n",
		ps.ErrorStyle, strings.Join(branchTypes(ps.InferredBranches), ", "), strings.Join(ps.RequiredFields, ", "))

	var shapes, completion *report.Turn
	for i := range r.Turns {
		switch r.Turns[i].Scenario {
		case string(record.ScenarioShapes):
			shapes = &r.Turns[i]
		case string(record.ScenarioCompletion):
			completion = &r.Turns[i]
		}
	}
	if shapes == nil || completion == nil || len(completion.Runs) == 0 || len(shapes.Runs) != len(shapes.Shapes) {
		t.Fatalf("the transcript lacks the completion and prompt-shapes turns: %+v", r.Turns)
	}
	b.WriteString("| content block | advertised | accepted | reached the model | the model's last user message held |\n| --- | --- | --- | --- | --- |\n")
	for _, s := range shapes.Shapes {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", s.Type, yesNo(s.Advertised), yesNo(s.Accepted), yesNo(s.Reached), strings.Join(s.ReachedAs, ", "))
	}
	b.WriteString("\n| turn | update kinds carrying the answer | stopReason | first chunk (ms) | last chunk → answer (ms) | updates after the answer |\n| --- | --- | --- | --- | --- | --- |\n")
	runs := append([]report.TurnRun{completion.Runs[0]}, shapes.Runs...)
	names := []string{"completion"}
	for _, s := range shapes.Shapes {
		names = append(names, "prompt-shapes: "+s.Type)
	}
	for i, run := range runs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d |\n", names[i], strings.Join(run.TextIn, ", "), run.StopReason, ms(run.FirstChunkMs), ms(run.AnswerAfterChunkMs), run.UpdatesAfter)
	}
	return b.String()
}

func compact(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	out, _ := json.Marshal(v)
	return strings.ReplaceAll(string(out), "|", `\|`)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func ms(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.0f", *v)
}

func branchTypes(bs []report.ShapeBranch) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Type)
	}
	return out
}

var expectedLiteral = regexp.MustCompile(`^Invalid input: expected "([^"]+)"$`)

// zodSummary says in a cell what a zod error tree names: per field, the literals it expects
// (a union's discriminator) or its messages, each once.
func zodSummary(data json.RawMessage) string {
	var tree map[string]json.RawMessage
	if json.Unmarshal(data, &tree) != nil || len(tree) == 0 {
		if len(data) > 0 && string(data) != "null" {
			return "`" + compact(data) + "`"
		}
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range tree {
			if k != "_errors" && !yield(k) {
				return
			}
		}
	}) {
		var node struct {
			Errors []string `json:"_errors"`
		}
		if json.Unmarshal(tree[k], &node) != nil {
			parts = append(parts, k+": "+compact(tree[k]))
			continue
		}
		var literals, msgs []string
		for _, e := range node.Errors {
			if m := expectedLiteral.FindStringSubmatch(e); m != nil {
				literals = append(literals, m[1])
			} else if !slices.Contains(msgs, e) {
				msgs = append(msgs, e)
			}
		}
		switch {
		case len(literals) > 0:
			parts = append(parts, k+" ∈ {"+strings.Join(literals, ", ")+"}")
		case len(msgs) > 0:
			parts = append(parts, k+": "+strings.Join(msgs, "; "))
		}
	}
	if len(parts) == 0 {
		if d := compact(data); d != "{}" {
			return "`" + d + "`"
		}
	}
	return strings.Join(parts, "<br>")
}
