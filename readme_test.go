package acpprobe_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMELibraryExample compiles and runs the README's library example exactly as written,
// with an acpprobe built from this tree on PATH: a newcomer's first program must work.
func TestREADMELibraryExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds acpprobe")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- library example: TestREADMELibraryExample compiles and runs this block -->\n```go\n"
	_, rest, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("README.md has no block after %q", marker)
	}
	code, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatal("the README's library example has no end")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(code+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "acpprobe"), "./cmd/acpprobe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	run := exec.Command("go", "run", filepath.Join(dir, "main.go"))
	run.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("go run of the README's example: %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != "authenticated supported" {
		t.Errorf("the README's example printed %q, and says it prints %q", got, "authenticated supported")
	}
}
