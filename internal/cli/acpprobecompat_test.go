package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acptest"
)

// tsType is a TypeScript type of acp-probe's AgentProbeResult (its README, ../shared/seeds/003_…),
// as a checker of decoded JSON: kind is string, number, boolean, array, object or any;
// nullable adds "| null"; fields are an object's members, optional ones marked "?".
type tsType struct {
	kind     string
	nullable bool
	fields   map[string]tsType // name, or name+"?" for an optional member
	items    *tsType           // an array's elements
}

func tsNullable(t tsType) tsType { t.nullable = true; return t }

var (
	tsString  = tsType{kind: "string"}
	tsNumber  = tsType{kind: "number"}
	tsBoolean = tsType{kind: "boolean"}
	tsAny     = tsType{kind: "any"}
)

func tsArray(of tsType) tsType            { return tsType{kind: "array", items: &of} }
func tsObject(f map[string]tsType) tsType { return tsType{kind: "object", fields: f} }
func tsBooleans(names ...string) tsType {
	f := map[string]tsType{}
	for _, n := range names {
		f[n] = tsBoolean
	}
	return tsObject(f)
}

// acpProbeResult is AgentProbeResult, field for field. Where acpprobe departs from it, and
// docs/acp-probe.md says so, the type here is the departure (marked "departs").
var acpProbeResult = tsObject(map[string]tsType{
	"agent": tsObject(map[string]tsType{"id": tsNullable(tsString), "command": tsString, "argv": tsArray(tsString),
		"probedAt": tsString, "durationMs": tsNumber}),
	"protocolVersion": tsNullable(tsNumber), // departs: null when initialize gave none (error is then set)
	"agentInfo":       tsNullable(tsObject(map[string]tsType{"name": tsString, "title?": tsString, "version?": tsString})),
	"capabilities": tsObject(map[string]tsType{
		"loadSession":         tsBoolean,
		"promptCapabilities":  tsBooleans("image", "audio", "embeddedContext"),
		"mcpCapabilities":     tsObject(map[string]tsType{"http": tsBoolean, "sse": tsBoolean, "meta?": tsAny}),
		"sessionCapabilities": tsBooleans("close", "list", "resume", "fork", "additionalDirectories"),
		// departs: no experimental.auth (the auth capability is capabilities.auth).
		"experimental?": tsObject(map[string]tsType{"nes": tsBoolean, "providers": tsBoolean, "positionEncoding": tsBoolean}),
	}),
	"authMethods":          tsArray(tsAny),
	"models":               tsArray(tsObject(map[string]tsType{"id": tsString, "name?": tsString, "description?": tsString})),
	"modes":                tsArray(tsObject(map[string]tsType{"id": tsString, "name?": tsString, "description?": tsString})),
	"configOptions":        tsArray(tsAny),
	"reasoning":            tsNullable(tsObject(map[string]tsType{"configId": tsString, "values": tsArray(tsAny), "defaultValue?": tsAny})),
	"modelConfig":          tsNullable(tsObject(map[string]tsType{"configId": tsString, "values": tsArray(tsString), "currentValue?": tsAny})),
	"supportsConfigOption": tsNullable(tsBoolean), // departs: null when not probed (error is then set, or --no-methods)
	"error?":               tsObject(map[string]tsType{"code": tsString, "stderr?": tsString}),
	"raw":                  tsObject(map[string]tsType{"initialize": tsAny, "newSession": tsAny}),
})

// acpProbeErrorCodes are the codes of acp-probe's ProbeError; acpprobe adds those of
// acpprobeErrorCodes (docs/acp-probe.md).
var (
	acpProbeErrorCodes = []string{"spawn_failed", "initialize_timeout", "session_new_timeout", "auth_required", "protocol_mismatch", "agent_crashed", "unknown"}
	acpprobeErrorCodes = []string{"metadata_required", "interrupted", "truncated"}
)

// check reports where v departs from t; extra object members are additions, not departures.
func (t tsType) check(path string, v any) []string {
	if v == nil {
		if t.nullable || t.kind == "any" {
			return nil
		}
		return []string{path + ": null, want " + t.kind}
	}
	var got string
	switch v.(type) {
	case string:
		got = "string"
	case float64:
		got = "number"
	case bool:
		got = "boolean"
	case []any:
		got = "array"
	case map[string]any:
		got = "object"
	}
	if t.kind != "any" && got != t.kind {
		return []string{fmt.Sprintf("%s: %s, want %s", path, got, t.kind)}
	}
	var bad []string
	switch x := v.(type) {
	case []any:
		for i, e := range x {
			bad = append(bad, t.items.check(fmt.Sprintf("%s[%d]", path, i), e)...)
		}
	case map[string]any:
		for name, ft := range t.fields {
			key, optional := strings.CutSuffix(name, "?")
			fv, ok := x[key]
			if !ok {
				if !optional {
					bad = append(bad, path+"."+key+": missing")
				}
				continue
			}
			bad = append(bad, ft.check(path+"."+key, fv)...)
		}
	}
	return bad
}

// TestAcpProbeTypesReadOurJSON (issue 25, item 13): every result acpprobe writes decodes as
// acp-probe's AgentProbeResult, but for the departures docs/acp-probe.md lists: the kept
// results of real agents (testdata/agents) and of the format-1 recordings (testdata/v1), and
// today's probe of each reference persona. An error's code is acp-probe's or one of the
// codes acpprobe adds, and a null protocolVersion or supportsConfigOption comes with the
// reason it is null.
func TestAcpProbeTypesReadOurJSON(t *testing.T) {
	docs := map[string][]byte{}
	for _, pattern := range []string{filepath.Join(recordedDirInternal, "*", "*.result.json"), filepath.Join("..", "..", "testdata", "v1", "*.result.json")} {
		files, err := filepath.Glob(pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no results in %s (%v)", pattern, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			docs[f] = b
		}
	}
	for _, persona := range []string{"claude", "codex", "gemini", "codebuddy", "minimal"} {
		var out bytes.Buffer
		_ = probeRun(t.Context(), &ProbeOptions{IO: Stdio{Out: &out}, Target: inProcess(t, acptest.Config{Persona: persona}), JSON: true})
		docs["persona "+persona] = out.Bytes()
	}
	for name, b := range docs {
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		for _, bad := range acpProbeResult.check("result", doc) {
			t.Errorf("%s: %s", name, bad)
		}
		e, _ := doc["error"].(map[string]any)
		if code, _ := e["code"].(string); e != nil && !slices.Contains(acpProbeErrorCodes, code) && !slices.Contains(acpprobeErrorCodes, code) {
			t.Errorf("%s: error code %q is neither acp-probe's nor one docs/acp-probe.md adds", name, code)
		}
		if doc["protocolVersion"] == nil && e == nil {
			t.Errorf("%s: protocolVersion null without an error", name)
		}
		if doc["supportsConfigOption"] == nil && e == nil && !skippedConfigOption(doc) {
			t.Errorf("%s: supportsConfigOption null without an error or a skipped probe", name)
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "acp-probe.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range acpprobeErrorCodes {
		if !strings.Contains(string(doc), "`"+code+"`") {
			t.Errorf("docs/acp-probe.md does not list the error code %s acpprobe adds", code)
		}
	}
}

// recordedDirInternal is the kept recordings of real agents (recorded_test.go's recordedDir,
// seen from this package's tests).
var recordedDirInternal = filepath.Join("..", "..", "testdata", "agents")

// skippedConfigOption reports whether a result says session/set_config_option was not probed.
func skippedConfigOption(doc map[string]any) bool {
	methods, _ := doc["methods"].(map[string]any)
	m, _ := methods["session/set_config_option"].(map[string]any)
	return m != nil && m["support"] == "skipped"
}
