// Package acpprobe_test holds module-wide checks. The module's code lives in the packages
// listed in ../shared/DESIGN.md; this file enforces the import arrows drawn there.
package acpprobe_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/acpprobe/acpprobe"

// allowed lists, for each package of the module, the module packages it may import directly
// (DESIGN.md "Parts"). Anything outside the module is free (stdlib and pinned libraries).
var allowed = map[string][]string{
	"cmd/acpprobe":    {"internal/cli"},
	"internal/cli":    {"*"},
	"internal/render": {"probe", "conformance", "extensions", "acp", "matrix"},
	"matrix":          {"probe", "conformance", "extensions", "transcript"},
	"drift":           {"probe", "matrix"},
	"conformance":     {"probe", "acp", "acp/schema", "extensions", "jsonrpc"},
	"probe":           {"acp", "transport", "jsonrpc", "transcript", "extensions"},
	"registry":        {},
	"extensions":      {},
	"transcript":      {"jsonrpc"},
	"acp":             {"jsonrpc"},
	"acp/schema":      {},
	"transport":       {"jsonrpc"},
	"jsonrpc":         {},
	"acptest":         {"acp", "jsonrpc", "transport"},
	"tap":             {"jsonrpc", "transport"},
	"sentinel":        {}, // sentinel MCP servers: the MCP Go SDK only
	"bench/driver":    {}, // benchmark programs: standard library only
	"bench/rawclient": {},
	"bench/agentshim": {},
	"e2e":             {"acp", "acptest", "conformance", "internal/render", "jsonrpc", "matrix", "probe", "transport"}, // test files only
}

func TestImportArrows(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if pkg == "" {
			continue
		}
		seen++
		rules, ok := allowed[pkg]
		if !ok {
			t.Errorf("package %s is not in DESIGN.md's list of parts (add it there and here)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module+"/") {
				continue
			}
			dep := strings.TrimPrefix(imp, module+"/")
			if dep == "internal/cli" && pkg != "cmd/acpprobe" {
				t.Errorf("%s imports internal/cli: nothing but the main package may", pkg)
			}
			if !permitted(rules, dep) {
				t.Errorf("%s imports %s, against the arrows of DESIGN.md", pkg, dep)
			}
		}
	}
	if seen < 5 {
		t.Fatalf("go list saw only %d packages", seen)
	}
}

func permitted(rules []string, dep string) bool {
	for _, r := range rules {
		if r == "*" || r == dep {
			return true
		}
	}
	return false
}
