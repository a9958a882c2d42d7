package acpprobe_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/acpprobe/acpprobe"

// allowed lists, for each package of the module ("." is the root package), the module
// packages it may import directly (DESIGN.md "Parts"). Anything outside the module is free
// (stdlib and pinned libraries).
var allowed = map[string][]string{
	"cmd/acpprobe":    {"internal/cli", "sandbox"}, // sandbox.Init: the namespace helper is the binary itself
	"internal/cli":    {"*"},
	"internal/render": {"probe", "conformance", "extensions", "acp", "matrix", "record", "registry", "drift", "internal/jsonout"},
	".":               {"probe", "conformance", "extensions", "jsonrpc", "record", "sandbox", "transcript", "transport"},
	"matrix":          {".", "probe", "extensions", "sandbox", "transcript", "internal/jsonout"},
	"turn":            {".", "acp", "emulator", "jsonrpc", "probe", "record", "sandbox", "sentinel", "transport"},
	"drift":           {"probe", "matrix", "internal/safeio"},
	"conformance":     {"probe", "acp", "acp/schema", "extensions", "jsonrpc", "record", "sentinel", "internal/safeio"},
	"probe":           {"acp", "transport", "jsonrpc", "record", "extensions", "internal/buildinfo", "sandbox", "internal/schematable"},
	"registry":        {"internal/safeio", "internal/schematable"},
	"extensions":      {"internal/safeio"},
	"transcript":      {"jsonrpc", "record", "internal/safeio"},
	"record":          {"acp", "jsonrpc"},
	"acp":             {"jsonrpc"},
	"acp/schema":      {"internal/schematable"},
	"transport":       {"jsonrpc", "record", "internal/safefs"},
	"jsonrpc":         {},
	"internal/safeio": {},
	"acptest":         {"acp", "jsonrpc", "transport"},
	"tap":             {"jsonrpc", "record", "transport"},
	"sentinel":        {"record"}, // sentinel MCP servers: the MCP Go SDK; what reaches them is record payloads
	"bench/driver":    {},         // benchmark programs: standard library only
	"bench/rawclient": {},
	"bench/agentshim": {},
	"e2e":             {}, // tests only: see testAllowed

	// a fake model on loopback: knows nothing of ACP or the probe; its requests are record
	// payloads (the backend's config files it writes in an agent's HOME: internal/safefs)
	"emulator": {"record", "internal/safefs"},
	// the root package, turn and the CLI call it; what it observes is record payloads
	"sandbox": {"record", "internal/safefs"},
	// writes and removals beneath a directory an agent can also write to: stdlib and x/sys only
	"internal/safefs": {},

	// the version the toolchain stamped (probe sends it as clientInfo.version): stdlib only
	"internal/buildinfo": {},

	// JSON Schemas compiled into static Go tables, and their validator: stdlib (and x/text) only
	"internal/schematable": {},
	// the test oracle of schematable (jsonschema/v6 and mutated values): imported by tests only
	"internal/schematable/schematest": {"internal/schematable"},
	// the generators of the tables (go generate)
	"acp/schema/internal/gen": {"internal/schematable"},
	"registry/internal/gen":   {"internal/schematable"},
	// the generator of the built-in vendor catalogue (go generate ./extensions)
	"extensions/internal/gen": {"extensions", "internal/schematable"},
	// acpprobe's JSON documents, proportional to their input (render and matrix --out): stdlib only
	"internal/jsonout": {},
}

// testAllowed lists what a package's tests may import besides what the package itself may:
// every package's tests may also use the reference agent (acptest) and the package under
// test; the end-to-end suite, which has no code of its own, drives the product from the top.
var testAllowed = map[string][]string{
	"*":     {"acptest"},
	"probe": {"transcript", "internal/schematable/schematest"}, // recordings as test input; ValidateResult's oracle
	// the root's tests find exchanges in the record by their ACP method name.
	".": {"acp"},
	// the validators' tests compare them with their oracle
	"acp/schema":           {"internal/schematable/schematest"},
	"internal/schematable": {"internal/schematable/schematest"},
	// matrix's tests hold in-process agents behind their own transport.Pipe to count the
	// agents running at once.
	"matrix": {"transport"},
	// acptest's tests run the model persona's prompt turns against the model emulator (whose
	// requests are record payloads).
	"acptest": {"emulator", "record"},
	// sentinel's tests check its mcpServers entries against the pinned ACP schema.
	"sentinel": {"acp/schema"},
	// e2e's tests run turns at the net level: a sandbox.Options, the emulator.Keys naming the
	// agent, and sandbox.Init (the test binary is the namespace helper).
	"e2e": {".", "acp", "acptest", "conformance", "emulator", "internal/render", "jsonrpc", "matrix", "probe", "record", "registry", "sandbox", "transport", "turn"},
}

func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		parts := strings.Split(line, "|")
		pkg := relative(parts[0])
		seen++
		rules, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in DESIGN.md's list of parts (add it there and here)", pkg)
			continue
		}
		for _, dep := range moduleImports(parts[1]) {
			if dep == "internal/cli" && pkg != "cmd/acpprobe" {
				t.Errorf("%s imports internal/cli: nothing but the main package may", pkg)
			}
			if !permitted(rules, dep) {
				t.Errorf("%s imports %s, against the arrows of DESIGN.md", pkg, dep)
			}
		}
		testRules := append(append(append([]string{pkg}, rules...), testAllowed["*"]...), testAllowed[pkg]...)
		for _, dep := range moduleImports(parts[2]) {
			if !permitted(testRules, dep) {
				t.Errorf("tests of %s import %s, against the arrows of DESIGN.md", pkg, dep)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("go list saw only %d packages", seen)
	}
}

// relative names a module package by its path inside the module ("." for the root).
func relative(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// moduleImports are the module's own packages among space-separated import paths.
func moduleImports(list string) []string {
	var out []string
	for _, imp := range strings.Fields(list) {
		if imp == module || strings.HasPrefix(imp, module+"/") {
			out = append(out, relative(imp))
		}
	}
	return out
}

func permitted(rules []string, dep string) bool {
	for _, r := range rules {
		if r == "*" || r == dep {
			return true
		}
	}
	return false
}

// TestAnalyzeLinksNoServer: a library user who analyses a transcript (the root package's
// Analyze, on the record) links neither the MCP SDK, nor oauth2, nor an HTTP server. The
// record owns its payload types, so the packages that produce them (the sentinels, the model
// emulator) stay out.
func TestAnalyzeLinksNoServer(t *testing.T) {
	for _, pkg := range []string{module, module + "/record"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if len(deps) < 10 {
			t.Fatalf("go list -deps %s listed only %v", pkg, deps)
		}
		for _, dep := range deps {
			if dep == "net/http" || strings.Contains(dep, "modelcontextprotocol") || strings.Contains(dep, "golang.org/x/oauth2") ||
				dep == module+"/sentinel" || dep == module+"/emulator" {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
