package acpprobe_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/transport"
)

// acpProbeTypes is acp-probe's AgentProbeResult as its documentation types it (seed 003,
// "Result shape"), one line a field: the JSON types a TypeScript consumer decodes it with
// ("?" marks an optional field; members the interface leaves untyped are not listed).
var acpProbeTypes = map[string]string{
	"agent":                                      "object",
	"agent.id":                                   "string|null",
	"agent.command":                              "string",
	"agent.argv":                                 "array",
	"agent.probedAt":                             "string",
	"agent.durationMs":                           "number",
	"protocolVersion":                            "number",
	"agentInfo":                                  "object|null",
	"capabilities":                               "object",
	"capabilities.loadSession":                   "boolean",
	"capabilities.promptCapabilities":            "object",
	"capabilities.mcpCapabilities":               "object",
	"capabilities.sessionCapabilities":           "object",
	"capabilities.experimental":                  "object?",
	"capabilities.experimental.auth":             "boolean",
	"capabilities.experimental.nes":              "boolean",
	"capabilities.experimental.providers":        "boolean",
	"capabilities.experimental.positionEncoding": "boolean",
	"authMethods":                                "array",
	"models":                                     "array",
	"modes":                                      "array",
	"configOptions":                              "array",
	"reasoning":                                  "object|null",
	"modelConfig":                                "object|null",
	"supportsConfigOption":                       "boolean",
	"error":                                      "object?",
	"error.code":                                 "string",
	"raw":                                        "object",
	"raw.initialize":                             "any",
	"raw.newSession":                             "any",
	"capabilities.promptCapabilities.image":      "boolean",
	"capabilities.promptCapabilities.audio":      "boolean",
	"capabilities.promptCapabilities.embeddedContext": "boolean",
}

// acpProbeErrorCodes are the values acp-probe's ProbeError.code may take.
var acpProbeErrorCodes = []string{"spawn_failed", "initialize_timeout", "session_new_timeout", "auth_required", "protocol_mismatch", "agent_crashed", "unknown"}

// jsonType is the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	}
	return "object"
}

// lookup is the value at a dotted path of a decoded document, and whether it is there.
func lookup(doc map[string]any, path string) (any, bool) {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		o, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = o[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// typeDifferences lists where doc departs from acp-probe's types, by field: what acp-probe
// types it as and what the document holds.
func typeDifferences(doc map[string]any) map[string]string {
	out := map[string]string{}
	for path, want := range acpProbeTypes {
		optional := strings.HasSuffix(want, "?")
		want = strings.TrimSuffix(want, "?")
		parent, _, _ := strings.Cut(path, ".")
		if i := strings.LastIndex(path, "."); i > 0 {
			parent = path[:i]
		}
		if p, ok := lookup(doc, parent); parent != path && (!ok || p == nil) {
			continue // the parent is absent or null: judged at the parent
		}
		v, ok := lookup(doc, path)
		switch {
		case !ok && optional:
		case !ok:
			out[path] = "absent"
		case want == "any":
		case !slices.Contains(strings.Split(want, "|"), jsonType(v)):
			out[path] = jsonType(v)
		}
	}
	if code, ok := lookup(doc, "error.code"); ok {
		if s, _ := code.(string); !slices.Contains(acpProbeErrorCodes, s) {
			out["error.code"] = s
		}
	}
	return out
}

// TestAcpProbeTypes (issue 25, item 13): acpprobe's JSON decodes with acp-probe's documented
// AgentProbeResult types, except for the differences the README's table under "Reading it
// with acp-probe's types" names, and that table names no difference that does not occur. The
// results: a complete probe, a --no-methods probe, a spawn failure, and an interrupted probe.
func TestAcpProbeTypes(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "### Reading it with acp-probe's types")
	if !ok {
		t.Fatal("README.md has no section \"Reading it with acp-probe's types\"")
	}
	table, _, _ = strings.Cut(table, "\n\n## ")
	documented := map[string]string{} // field -> acpprobe's column
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-zA-Z.]+)` \\| [^|\\n]*(?:\\\\\\|[^|\\n]*)* \\| ([^\\n]*?) \\| [^\\n]* \\|$").FindAllStringSubmatch(table, -1) {
		documented[m[1]] = m[2]
	}
	if len(documented) == 0 {
		t.Fatal("the README's table of differences has no rows")
	}

	// Interrupted while the agent holds session/new (a parent context that ends is a signal).
	interrupted, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	runs := map[string]struct {
		ctx context.Context
		po  probe.Options
	}{
		"probe":         {context.Background(), probe.Options{Launcher: acptest.Launcher(acptest.Config{Persona: "claude"})}},
		"--no-methods":  {context.Background(), probe.Options{Launcher: acptest.Launcher(acptest.Config{Persona: "codex"}), SkipMethods: true}},
		"spawn failure": {context.Background(), probe.Options{Launcher: transport.Command{Argv: []string{"/nonexistent/agent"}}}},
		"interrupted":   {interrupted, probe.Options{Launcher: acptest.Launcher(acptest.Config{Persona: "gemini", Faults: acptest.Faults{HangOn: "session/new"}})}},
	}
	seen := map[string]bool{}
	for name, run := range runs {
		r, err := acpprobe.Run(run.ctx, acpprobe.Options{Probe: run.po})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		for field, got := range typeDifferences(doc) {
			seen[field] = true
			col, ok := documented[field]
			switch {
			case !ok:
				t.Errorf("%s: %s is %s where acp-probe types it %s, and the README's table does not say so", name, field, got, acpProbeTypes[field])
			case got == "null" && !strings.Contains(col, "null"):
				t.Errorf("%s: %s is null, and the README's row says %q", name, field, col)
			case field == "error.code" && !strings.Contains(col, "`"+got+"`"):
				t.Errorf("%s: error.code %q is not acp-probe's, and the README's row does not name it", name, got)
			}
		}
	}
	for field := range documented {
		if !seen[field] && field != "error.code" {
			t.Errorf("the README's table names %s, which no result here departs on", field)
		}
	}
	if !seen["error.code"] {
		t.Error("no result had an error code acp-probe lacks: the interrupted probe's should be interrupted")
	}
}
