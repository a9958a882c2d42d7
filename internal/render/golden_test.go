package render_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/drift"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with what the writers print now")

// golden compares got with testdata/name.golden (or rewrites it with -update). A deliberate
// change of a report updates its golden file in the same commit.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./internal/render -update writes it)", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s differs from %s at line %d:\n got: %q\nwant: %q", name, path, i+1, gl, wl)
			return
		}
	}
}

// loadResult reads a result as `acpprobe --json` printed it: the frozen reports of the
// recordings in testdata/v1 at the module root, or the fixtures of testdata.
func loadResult(t *testing.T, path string) *report.Result {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r report.Result
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}

func v1(t *testing.T, name string) *report.Result {
	return loadResult(t, filepath.Join("..", "..", "testdata", "v1", name+".result.json"))
}

func write(t *testing.T, f func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestTextGolden: the probe and check report for people, for results of every kind.
func TestTextGolden(t *testing.T) {
	results := map[string]*report.Result{
		// A full check: capabilities, modes, config options, methods, prompt shapes, extensions,
		// a verdict that passes.
		"text-check-claude": v1(t, "check-claude"),
		// Vendor extensions of every kind, private keys among them.
		"text-check-codebuddy": v1(t, "check-codebuddy"),
		// session/new refused: auth_required, with the auth methods and evidence.
		"text-check-codex": v1(t, "check-codex"),
		// MANDATORY findings and a failed verdict.
		"text-check-faults": v1(t, "check-faults"),
		// A crash before session/new, with the stderr tail.
		"text-probe-crash": v1(t, "probe-crash"),
		// No answer to initialize: killed by the teardown ladder.
		"text-probe-hang": v1(t, "probe-hang"),
		// A command that does not exist: nothing learned but the error.
		"text-spawn-failure": loadResult(t, filepath.Join("testdata", "spawn-failure.result.json")),
		// A baseline: a known finding with its reason, a stale entry.
		"text-check-baseline": loadResult(t, filepath.Join("testdata", "check-baseline.result.json")),
		// acpprobe turn against the model persona with four faults: every scenario's facts,
		// passed and failed outcomes, the turn findings.
		"text-turn-faults": loadResult(t, filepath.Join("testdata", "turn-faults.result.json")),
		// check --isolate --auth-ab of the side-effects fault: files, a login opened, a setsid
		// daemon and a leaked child, the kept sandbox, your identity against an empty one.
		"text-side-effects": loadResult(t, filepath.Join("testdata", "side-effects.result.json")),
		// Real long reports (research/captures/turn/B, analyze --json): claude-agent-acp 0.101.0,
		// whose sessions turn made 88 edit tool calls and whose check lists the same
		// schema.unstable finding again and again; codex-acp 2.6.0, with 50 legacy model ids.
		"text-turn-claude-agent-acp": loadResult(t, filepath.Join("testdata", "turn-claude-agent-acp.result.json")),
		"text-turn-codex-acp":        loadResult(t, filepath.Join("testdata", "turn-codex-acp.result.json")),
	}
	for name, r := range results {
		t.Run(name, func(t *testing.T) {
			golden(t, name, write(t, func(w io.Writer) error { return render.Text(w, r) }))
		})
	}
}

// testMatrix is a matrix of three probed agents (a full one, one that needs authentication, a
// crash) and one that could not run, with a problem that holds a table separator and a line
// break.
func testMatrix(t *testing.T) *matrix.Matrix {
	return &matrix.Matrix{Schema: matrix.Schema, Version: "0.1.0-test", GeneratedAt: "2026-11-30T12:00:00Z", Rows: []matrix.Row{
		{ID: "acptest-claude", Source: "reference", Launch: "acpprobe agent --persona claude", Result: v1(t, "check-claude")},
		{ID: "codex", Source: "config", Launch: "acpprobe agent --persona codex", Result: v1(t, "check-codex")},
		{ID: "crashes", Source: "config", Launch: "acpprobe agent --exit-before session/new", Result: v1(t, "probe-crash")},
		{ID: "kimi", Source: "registry", Problem: "kimi | not found on PATH;\nto install: download it"},
	}}
}

func TestMatrixGolden(t *testing.T) {
	m := testMatrix(t)
	golden(t, "matrix.txt", write(t, func(w io.Writer) error { return render.MatrixText(w, m) }))
	golden(t, "matrix.md", write(t, func(w io.Writer) error { return render.MatrixMarkdown(w, m) }))
}

func testCatalogue(t *testing.T) []render.VendorDoc {
	t.Helper()
	cat, err := extensions.LoadDir(filepath.Join("testdata", "catalogue"))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := cat.Vendor("example.org")
	if !ok {
		t.Fatal("example.org is not in the test catalogue")
	}
	return render.VendorDocs(cat, []extensions.Vendor{v})
}

// TestCatalogueGolden: acpprobe extensions, a vendor with keys of every class and status,
// methods, an auth method type and a non-key.
func TestCatalogueGolden(t *testing.T) {
	docs := testCatalogue(t)
	if len(docs) != 1 || len(docs[0].MetaKeys) != 3 || len(docs[0].Methods) != 3 || len(docs[0].AuthMethodTypes) != 1 || len(docs[0].NonKeys) != 1 {
		t.Fatalf("VendorDocs gathered %+v, want the 3 keys, 3 methods, 1 auth type and 1 non-key of example.org", docs)
	}
	golden(t, "catalogue", write(t, func(w io.Writer) error { return render.Catalogue(w, docs) }))
}

var testChecks = []conformance.Check{
	{ID: "framing.stdout-non-json", Tier: report.TierMandatory, Title: "Agent wrote a line on stdout that is not JSON"},
	{ID: "protocol.invalid-params", Tier: report.TierAdvisory, Title: "Invalid params not answered with -32602", Active: true},
	{ID: "schema.unstable", Tier: report.TierInfo, Title: "Field defined only in the unstable schema"},
}

func TestCheckListGolden(t *testing.T) {
	golden(t, "checks", write(t, func(w io.Writer) error { return render.CheckList(w, testChecks) }))
}

// testIndex is the header line agents prints for the pinned registry snapshot.
var testIndex = "ACP registry snapshot " + registry.SnapshotDate + " (" + registry.SnapshotCommit[:12] + ")"

var testAgents = []registry.Status{
	{ID: "acptest-claude", Name: "acpprobe reference agent (claude)", Version: "0.1.0", Kind: "binary", Source: registry.SourceBuiltin, Listed: true, CanRun: true},
	{ID: "gemini", Name: "Gemini CLI", Version: "0.27.3", Kind: "npx", Source: "registry", Listed: true, CanRun: true},
	{ID: "kimi", Name: "Kimi CLI, a name longer than the column holds", Version: "1.9", Kind: "binary", Source: "registry", Listed: true, Reason: "kimi not found on PATH"},
	{ID: "qwen-code", Name: "Qwen Code", Version: "0.9.1", Kind: registry.KindPath, Source: "registry", Listed: true, CanRun: true,
		Argv: []string{"qwen", "--acp"}, Installed: "@qwen-code/qwen-code 0.24.4"},
	{ID: "auggie", Name: "Auggie CLI", Version: "0.15.0", Kind: "npx", Source: "registry", Listed: true,
		Reason: "npm serves no version 0.15.0 of @augmentcode/auggie", NPM: &registry.NPMCheck{Package: "@augmentcode/auggie@0.15.0", Served: registry.NPMNoVersion}},
}

func TestAgentsGolden(t *testing.T) {
	golden(t, "agents", write(t, func(w io.Writer) error {
		return render.Agents(w, testIndex, testAgents)
	}))
}

var testChanges = []drift.Change{
	{Kind: "changed", Path: "capabilities.sessionCapabilities.delete", Text: "capabilities.sessionCapabilities.delete: false → true"},
	{Agent: "claude", Kind: "added", Path: "modes[plan]", Text: "claude: modes[plan] added"},
}

func TestDiffGolden(t *testing.T) {
	golden(t, "diff", write(t, func(w io.Writer) error { return render.Diff(w, testChanges) }))
	golden(t, "diff-none", write(t, func(w io.Writer) error { return render.Diff(w, nil) }))
}

var testFindings = []report.Finding{
	{ID: "client.private-key", Tier: report.TierAdvisory, Seq: 4, Pointer: "/params/_meta/example.org~1grant", Message: "the client sent the private key example.org/grant"},
	{ID: "client.unknown-method", Tier: report.TierAdvisory, Seq: 8, Pointer: "/method", Message: "editor/focus is not an ACP method and has no _ prefix"},
	{ID: "framing.stdout-non-json", Tier: report.TierMandatory, Seq: 3, Message: "line 3 is not JSON"},
	{ID: "protocol.stdin-exit", Tier: report.TierAdvisory, Message: "the agent did not exit when its stdin closed"},
}

func TestClientFindingsGolden(t *testing.T) {
	golden(t, "lint-client", write(t, func(w io.Writer) error { return render.ClientFindings(w, testFindings[:2]) }))
	golden(t, "lint-client-none", write(t, func(w io.Writer) error { return render.ClientFindings(w, nil) }))
}

// TestTapGolden: the tap's findings as they happen, as text (with a pointer, with a line only,
// with neither) and as the NDJSON of --findings.
func TestTapGolden(t *testing.T) {
	golden(t, "tap", write(t, func(w io.Writer) error {
		for _, f := range testFindings {
			if err := render.TapFinding(w, f); err != nil {
				return err
			}
		}
		return nil
	}))
	golden(t, "tap.ndjson", write(t, func(w io.Writer) error {
		for _, f := range testFindings[2:] {
			if err := render.JSONLine(w, f); err != nil {
				return err
			}
		}
		return nil
	}))
}

// TestProgressGolden: the matrix progress, one line per finished agent off a terminal, and
// redrawn in place on one that takes ANSI sequences.
func TestProgressGolden(t *testing.T) {
	m := testMatrix(t)
	ids := []string{m.Rows[0].ID, m.Rows[3].ID}
	events := []matrix.Event{
		{Index: 0, ID: ids[0]},
		{Index: 1, ID: ids[1], Done: true, Row: &m.Rows[3], Elapsed: 0},
		{Index: 0, ID: ids[0], Done: true, Row: &m.Rows[0], Elapsed: 1500 * time.Millisecond},
	}
	for _, tty := range []bool{false, true} {
		var b bytes.Buffer
		p := render.NewProgress(&render.Screen{W: &b, ANSI: tty}, ids)
		for _, e := range events {
			p.Update(e)
		}
		p.Finish()
		name := "progress"
		if tty {
			name = "progress-tty"
		}
		golden(t, name, b.Bytes())
	}
}

// TestWriteErrors: every writer reports a writer that fails (the CLI then exits 5), however
// much it buffers.
func TestWriteErrors(t *testing.T) {
	m := testMatrix(t)
	docs := testCatalogue(t)
	writers := map[string]func(io.Writer) error{
		"Text":           func(w io.Writer) error { return render.Text(w, v1(t, "check-claude")) },
		"JSON":           func(w io.Writer) error { return render.JSON(w, m) },
		"JSONLine":       func(w io.Writer) error { return render.JSONLine(w, testFindings[0]) },
		"MatrixText":     func(w io.Writer) error { return render.MatrixText(w, m) },
		"MatrixMarkdown": func(w io.Writer) error { return render.MatrixMarkdown(w, m) },
		"MatrixHTML":     func(w io.Writer) error { return render.MatrixHTML(w, m) },
		"Catalogue":      func(w io.Writer) error { return render.Catalogue(w, docs) },
		"CheckList":      func(w io.Writer) error { return render.CheckList(w, testChecks) },
		"Agents": func(w io.Writer) error {
			return render.Agents(w, testIndex, testAgents)
		},
		"Diff":           func(w io.Writer) error { return render.Diff(w, testChanges) },
		"Diff none":      func(w io.Writer) error { return render.Diff(w, nil) },
		"ClientFindings": func(w io.Writer) error { return render.ClientFindings(w, testFindings) },
		"TapFinding":     func(w io.Writer) error { return render.TapFinding(w, testFindings[0]) },
	}
	for name, f := range writers {
		var count counter
		if err := f(&count); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Fail at the first write, and at the last (a writer that buffers must still say so).
		for _, after := range []int{0, count.writes - 1} {
			if err := f(&failAfter{n: after}); !errors.Is(err, syscall.ENOSPC) {
				t.Errorf("%s into a writer failing after %d of its %d writes: error %v, want ENOSPC", name, after, count.writes, err)
			}
		}
	}
}

// counter counts the writes it is given.
type counter struct{ writes int }

func (c *counter) Write(p []byte) (int, error) {
	c.writes++
	return len(p), nil
}

// failAfter accepts n writes, then fails as a full disk does.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, syscall.ENOSPC
	}
	f.n--
	return len(p), nil
}
