package probe_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/report"
)

var update = flag.Bool("update", false, "rewrite golden files")

// validateResult checks a result against report/result.schema.json, as a consumer would see it
// (through JSON).
func validateResult(t *testing.T, r *report.Result) {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := report.ValidateResult(b); err != nil {
		t.Errorf("result does not match result.schema.json: %v\n%s", err, b)
	}
}

// TestSchemaRejectsDrift makes sure the schema check can fail: an undocumented field and a
// wrong type are both rejected.
func TestSchemaRejectsDrift(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "minimal"}, nil)
	b, _ := json.Marshal(r)
	var doc map[string]any
	json.Unmarshal(b, &doc)
	doc["surprise"] = 1
	doc["protocolVersion"] = "1"
	b, _ = json.Marshal(doc)
	err := report.ValidateResult(b)
	if err == nil {
		t.Fatal("schema accepted an undocumented field and a string protocolVersion")
	}
}

// TestGoldenClaude compares the claude persona's result, without its volatile fields, with
// testdata/claude.golden.json (go test ./probe -run TestGoldenClaude -update rewrites it).
func TestGoldenClaude(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "claude"}, nil)
	got := stable(t, r)
	path := filepath.Join("testdata", "claude.golden.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s (run with -update if the change is intended)\n--- got\n%s", path, got)
	}
}

// stable renders a result with the fields that change from run to run blanked.
func stable(t *testing.T, r *report.Result) []byte {
	t.Helper()
	b, _ := json.Marshal(r)
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	agent := doc["agent"].(map[string]any)
	for _, k := range []string{"command", "argv", "cwd", "probedAt", "durationMs", "pid"} {
		agent[k] = "(volatile)"
	}
	doc["timings"] = "(volatile)"
	for _, m := range doc["methods"].(map[string]any) {
		m.(map[string]any)["ms"] = "(volatile)"
	}
	if x, ok := doc["exit"].(map[string]any); ok && x["afterStdinCloseMs"] != nil {
		x["afterStdinCloseMs"] = "(volatile)"
	}
	if x, ok := doc["exit"].(map[string]any); ok && x["containment"] != nil {
		x["containment"] = "(volatile: what this machine allows)"
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}
