package e2e

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
)

// chromiumPath is Debian's chromium, which the browser check drives (no browser download).
const chromiumPath = "/usr/bin/chromium"

// xssProblem is a Problem holding markup: the page must show it as text and never run it.
const xssProblem = `launcher missing: <script>alert("acpprobe")</script><img src=x onerror=alert(2)>`

// TestMatrixHTML renders a matrix of the reference agent's personas (in-process, no real agent
// needed) with render.MatrixHTML and checks the page in headless Chromium: row count, sorting
// by a numeric and a text column, one agent's details, no external load, no script from the
// data; then the screenshot it took.
func TestMatrixHTML(t *testing.T) {
	requireE2E(t)
	root := repoRoot(t)
	dir := filepath.Join(root, "e2e", "html")
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("%s=1 but %s is missing (%v): install Debian's chromium package (apt-get update && apt-get install -y chromium)", enableVar, chromiumPath, err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("%s=1 but node is not on PATH: install Node.js", enableVar)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "playwright-core", "package.json")); err != nil {
		t.Fatalf("%s=1 but playwright-core is not installed in e2e/html/node_modules (%v); run e2e/html/install.sh first", enableVar, err)
	}

	m := referenceMatrix(t)
	want := map[string]string{
		"claude": "ok", "codex": "auth_required: ", "gemini": "ok", "minimal": "ok", "codebuddy": "ok",
		"crashes": "agent_crashed", "not-installed": "not run: " + xssProblem,
	}
	for _, r := range m.Rows {
		got := render.Status(r)
		if w := want[r.ID]; !strings.HasPrefix(got, w) {
			t.Errorf("row %s: status %q, want %q…", r.ID, got, w)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	tmp := t.TempDir()
	page := filepath.Join(tmp, "matrix.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := render.MatrixHTML(f, m); err != nil {
		t.Fatalf("MatrixHTML: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(tmp, "matrix.png")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join(dir, "check-matrix.mjs"), page, shot,
		fmt.Sprint("--rows=", len(m.Rows)), "--numeric=startup", "--text=agent",
		"--open=codex", "--expect=codex-api-key", "--expect=CODEX_API_KEY", "--expect=Authentication required",
		"--literal="+xssProblem)
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("node check-matrix.mjs:\n%s", strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("the browser check failed (%v); the page is %s", err, page)
	}

	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if cfg.Width != 1600 || cfg.Height != 1100 {
		t.Errorf("screenshot is %d×%d, want the 1600×1100 viewport", cfg.Width, cfg.Height)
	}
	// A blank page compresses to a few KiB; a rendered table with open details is far larger.
	if len(b) < 40<<10 || len(b) > 20<<20 {
		t.Errorf("screenshot is %d bytes: implausible for the rendered matrix", len(b))
	}
	t.Logf("screenshot: %s (%d bytes); page: %s", shot, len(b), page)
	// The temporary directory goes with the test; ACPPROBE_E2E_ARTIFACTS=DIR keeps a copy.
	if keep := os.Getenv("ACPPROBE_E2E_ARTIFACTS"); keep != "" {
		for _, name := range []string{page, shot} {
			data, err := os.ReadFile(name)
			if err == nil {
				err = os.MkdirAll(keep, 0o755)
			}
			if err == nil {
				err = os.WriteFile(filepath.Join(keep, filepath.Base(name)), data, 0o644)
			}
			if err != nil {
				t.Errorf("ACPPROBE_E2E_ARTIFACTS: %v", err)
			}
		}
		t.Logf("copied matrix.html and matrix.png to %s", keep)
	}
}

// referenceMatrix runs matrix.Run over the reference agent's personas in-process, each with
// a different slow start (so that sorting by startup means something), one agent that crashes
// at session/new, and one that cannot be launched.
func referenceMatrix(t *testing.T) *matrix.Matrix {
	t.Helper()
	target := func(id, launch string, cfg acptest.Config) matrix.Target {
		return matrix.Target{ID: id, Source: "reference", Launch: launch, Options: probe.Options{
			Launcher: acptest.Launcher(cfg), Cwd: t.TempDir(),
			Timeout: 30 * time.Second, StartupTimeout: 15 * time.Second, RequestTimeout: 5 * time.Second,
		}}
	}
	var targets []matrix.Target
	for _, p := range []struct {
		persona string
		slow    time.Duration
	}{{"claude", 120 * time.Millisecond}, {"codex", 40 * time.Millisecond}, {"gemini", 220 * time.Millisecond},
		{"minimal", 0}, {"codebuddy", 80 * time.Millisecond}} {
		launch := "acpprobe agent --persona " + p.persona
		if p.slow > 0 {
			launch += " --slow-start " + p.slow.String()
		}
		targets = append(targets, target(p.persona, launch, acptest.Config{Persona: p.persona, Faults: acptest.Faults{SlowStart: p.slow}}))
	}
	targets = append(targets,
		target("crashes", "acpprobe agent --persona minimal --exit-before session/new",
			acptest.Config{Persona: "minimal", Faults: acptest.Faults{ExitBefore: acp.MethodSessionNew}}),
		matrix.Target{ID: "not-installed", Source: "registry", Launch: "npx -y @example/not-installed-acp", Problem: xssProblem},
	)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return matrix.Run(ctx, targets, matrix.Options{Check: &acpprobe.Check{}})
}
