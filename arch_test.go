package acpprobe_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/acpprobe/acpprobe"

// parts reads DESIGN.md's "Parts" block: for each package of the module ("." is the root
// package, written acpprobe there), the module packages it imports ("*": any) and those its
// tests import besides.
func parts(t *testing.T) (imports, tests map[string][]string) {
	t.Helper()
	b, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Parts")
	if start < 0 {
		t.Fatal(`DESIGN.md has no "## Parts" section`)
	}
	block := doc[start:]
	open := strings.Index(block, "```\n")
	end := strings.Index(block[open+4:], "```")
	if open < 0 || end < 0 {
		t.Fatal("DESIGN.md's Parts section has no code block")
	}
	imports, tests = map[string][]string{}, map[string][]string{}
	pkg := ""
	list := func(s string) []string {
		var out []string
		for _, p := range strings.Split(s, ",") {
			p = strings.TrimSpace(p)
			switch p {
			case "", "(stdlib)", "(none)":
				continue
			case "acpprobe":
				p = "."
			}
			out = append(out, p)
		}
		return out
	}
	for _, line := range strings.Split(block[open+4:open+4+end], "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case line == "":
		case line[0] != ' ':
			pkg = strings.Fields(line)[0]
			if pkg == "acpprobe" {
				pkg = "."
			}
			if _, dup := imports[pkg]; dup {
				t.Errorf("DESIGN.md lists %s twice", pkg)
			}
			imports[pkg] = nil
		case strings.HasPrefix(trimmed, "-> "):
			imports[pkg] = append(imports[pkg], list(strings.TrimPrefix(trimmed, "-> "))...)
		case strings.HasPrefix(trimmed, "tests -> "):
			tests[pkg] = append(tests[pkg], list(strings.TrimPrefix(trimmed, "tests -> "))...)
		}
	}
	if len(imports) < 10 {
		t.Fatalf("DESIGN.md's Parts block lists only %d packages", len(imports))
	}
	return imports, tests
}

// TestImportArrows holds the code's imports against DESIGN.md's Parts block, both ways: an
// import that is not listed fails, and so does a listed arrow that the code does not have (for
// the packages and for their tests), so that DESIGN.md says exactly what the code is.
func TestImportArrows(t *testing.T) {
	claimed, claimedTests := parts(t)
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}}|{{join .Imports " "}}|{{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		pkg := relative(fields[0])
		seen[pkg] = true
		rules, ok := claimed[pkg]
		if !ok {
			t.Errorf("package %s is not in DESIGN.md's Parts block", pkg)
			continue
		}
		imports := moduleImports(fields[1])
		for _, dep := range imports {
			if dep == "internal/cli" && pkg != "cmd/acpprobe" {
				t.Errorf("%s imports internal/cli: nothing but the main package may", pkg)
			}
			if !slices.Contains(rules, "*") && !slices.Contains(rules, dep) {
				t.Errorf("%s imports %s, which DESIGN.md does not list", pkg, dep)
			}
		}
		for _, dep := range rules {
			if dep != "*" && !slices.Contains(imports, dep) {
				t.Errorf("DESIGN.md says %s imports %s; it does not", pkg, dep)
			}
		}
		testImports := moduleImports(fields[2])
		for _, dep := range testImports {
			if dep != pkg && dep != "acptest" && !slices.Contains(rules, "*") && !slices.Contains(rules, dep) && !slices.Contains(claimedTests[pkg], dep) {
				t.Errorf("tests of %s import %s, which DESIGN.md does not list", pkg, dep)
			}
		}
		for _, dep := range claimedTests[pkg] {
			if !slices.Contains(testImports, dep) {
				t.Errorf("DESIGN.md says the tests of %s import %s; they do not", pkg, dep)
			}
			if slices.Contains(rules, dep) {
				t.Errorf("DESIGN.md lists %s among the imports of %s and of its tests: once is enough", dep, pkg)
			}
		}
	}
	for pkg := range claimed {
		if !seen[pkg] {
			t.Errorf("DESIGN.md lists %s, which is not a package of the module", pkg)
		}
	}
	if len(seen) < 5 {
		t.Fatalf("go list saw only %d packages", len(seen))
	}
}

// TestConformanceDoesNotDrive: the judge reads facts; it never imports the engine that drives
// agents (its active steps are the engine's).
func TestConformanceDoesNotDrive(t *testing.T) {
	imports, _ := parts(t)
	for _, pkg := range []string{"conformance", "derive", "report", "record"} {
		if slices.Contains(imports[pkg], "probe") || slices.Contains(imports[pkg], "transport") {
			t.Errorf("%s imports the engine (%v): it must only read records and facts", pkg, imports[pkg])
		}
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

// No text file of the module keeps a merge's conflict markers: DESIGN.md once did, and a test
// that parses it would have read only one side.
func TestNoConflictMarkers(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".json", ".txtar", ".sh", ".txt", ".yml", ".yaml":
		default:
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "<<<<<<< ") || strings.HasPrefix(line, ">>>>>>> ") {
				t.Errorf("%s:%d: a merge conflict marker: %q", path, i+1, line)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
