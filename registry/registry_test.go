package registry

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakePath returns a LookPath that finds exactly the given names, in /fake/bin.
func fakePath(found ...string) func(string) (string, error) {
	return func(file string) (string, error) {
		if slices.Contains(found, file) {
			return "/fake/bin/" + filepath.Base(file), nil
		}
		return "", errors.New("executable file not found in $PATH")
	}
}

func linux(found ...string) Env {
	return Env{GOOS: "linux", GOARCH: "amd64", LookPath: fakePath(found...)}
}

var (
	wantListed   = []string{"auggie", "claude-code-acp", "codex-acp", "factory-droid", "gemini", "github-copilot", "kimi", "mistral-vibe", "opencode", "qoder", "qwen-code"}
	wantUnlisted = []string{"cagent", "code-assistant", "goose", "junie-acp", "stakpak"}
)

func TestEmbeddedSnapshot(t *testing.T) {
	entries, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var listed, unlisted []string
	for _, e := range entries {
		if e.Source != SourceRegistry {
			t.Errorf("%s: Source = %q, want registry", e.ID, e.Source)
		}
		if !strings.HasPrefix(e.Origin, "embedded:data/") || !strings.HasSuffix(e.Origin, "/"+e.ID+"/agent.json") {
			t.Errorf("%s: Origin = %q", e.ID, e.Origin)
		}
		if e.Listed {
			listed = append(listed, e.ID)
		} else {
			unlisted = append(unlisted, e.ID)
			if !strings.Contains(e.Origin, "/_not_yet_unsupported/") {
				t.Errorf("%s: unlisted but Origin %q", e.ID, e.Origin)
			}
		}
	}
	if !slices.Equal(listed, wantListed) {
		t.Errorf("listed = %v, want %v", listed, wantListed)
	}
	if !slices.Equal(unlisted, wantUnlisted) {
		t.Errorf("unlisted = %v, want %v", unlisted, wantUnlisted)
	}
}

// Every embedded agent.json resolves on linux-x86_64 to the registry's own command once its
// executable is on PATH (RegistryCommand: its package's program would otherwise run instead).
func TestEmbeddedResolveLinux(t *testing.T) {
	entries, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	env := Env{GOOS: "linux", GOARCH: "amd64", LookPath: func(f string) (string, error) { return "/fake/bin/" + f, nil }, RegistryCommand: true}
	for _, e := range entries {
		l, err := e.Resolve(env)
		if err != nil {
			t.Errorf("%s: %v", e.ID, err)
			continue
		}
		if len(l.Argv) == 0 || l.Path == "" || l.ID != e.ID || l.Kind != e.Kinds()[0] {
			t.Errorf("%s: launch %+v", e.ID, l)
		}
		if strings.ContainsAny(l.Argv[0], `/\`) {
			t.Errorf("%s: argv[0] %q is not a bare command name", e.ID, l.Argv[0])
		}
	}
}

// The embedded files are the snapshot's, byte for byte, and PROVENANCE.md carries its commit.
func TestEmbeddedProvenance(t *testing.T) {
	prov, err := dataFS.ReadFile("data/PROVENANCE.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{SnapshotCommit, SnapshotDate, "github.com/agentclientprotocol/registry"} {
		if !bytes.Contains(prov, []byte(want)) {
			t.Errorf("PROVENANCE.md lacks %q", want)
		}
	}
	for _, name := range []string{"data/agent.schema.json", "data/registry.schema.json"} {
		if _, err := dataFS.ReadFile(name); err != nil {
			t.Errorf("schema not embedded: %v", err)
		}
	}
	src := filepath.Join("..", "..", "shared", "acp-registry", "snapshot-2026-02-07")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("reference snapshot not beside the checkout: %v", err)
	}
	n := 0
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		want, _ := os.ReadFile(p)
		got, err := dataFS.ReadFile("data/" + filepath.ToSlash(rel))
		if err != nil {
			t.Errorf("%s not embedded: %v", rel, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the snapshot", rel)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 18 {
		t.Errorf("snapshot has %d files, want 18", n)
	}
}

func TestDefaultAndBuiltins(t *testing.T) {
	embedded, _ := Embedded()
	for _, b := range Builtins() {
		if b.Source != SourceBuiltin || !b.Listed || b.Origin == "" {
			t.Errorf("builtin %s: Source %q Listed %v Origin %q", b.ID, b.Source, b.Listed, b.Origin)
		}
		for _, e := range embedded {
			if e.ID == b.ID || slices.Contains(b.Aliases, e.ID) {
				t.Errorf("builtin %s collides with snapshot entry %s", b.ID, e.ID)
			}
		}
	}
	if got, want := len(Default().Entries()), len(embedded)+len(Builtins()); got != want {
		t.Errorf("Default has %d entries, want %d", got, want)
	}

	// CodeBuddy Code: its programs codebuddy and cbc on PATH, else the registry's npx line.
	for _, prog := range []string{"codebuddy", "cbc"} {
		l, err := Resolve("codebuddy", linux(prog, "npx"))
		if err != nil {
			t.Fatal(err)
		}
		if l.ID != "codebuddy-code" || l.Kind != KindPath || l.Source != SourceBuiltin || l.StartupTimeout != 0 ||
			!slices.Equal(l.Argv, []string{prog, "--acp"}) || l.Path != "/fake/bin/"+prog ||
			!slices.Equal(l.Replaces, []string{"npx", "-y", "@tencent-ai/codebuddy-code@2.156.0", "--acp"}) {
			t.Errorf("codebuddy with %s on PATH: %+v", prog, l)
		}
	}
	l, err := Resolve("codebuddy-code", linux("npx"))
	if err != nil || l.Kind != KindNPX || l.StartupTimeout != ColdStartTimeout || l.Package != "@tencent-ai/codebuddy-code@2.156.0" ||
		!slices.Equal(l.Argv, []string{"npx", "-y", "@tencent-ai/codebuddy-code@2.156.0", "--acp"}) {
		t.Errorf("codebuddy-code without it on PATH: %+v, %v", l, err)
	}
	_, err = Resolve("codebuddy-code", linux())
	var nr *NotRunnableError
	if !errors.As(err, &nr) || nr.Reason != "npx not found on PATH" {
		t.Errorf("codebuddy-code with an empty PATH: %v", err)
	}

	l, err = Resolve("claude-agent-acp", linux("npx"))
	if err != nil {
		t.Fatal(err)
	}
	if l.ID != "claude-acp" || !slices.Equal(l.Argv, []string{"npx", "-y", "@agentclientprotocol/claude-agent-acp@0.85.1"}) {
		t.Errorf("claude-acp: %+v", l)
	}
}

func TestLookup(t *testing.T) {
	r := Default()
	for _, tc := range []struct{ in, want string }{
		{"gemini", "gemini"},
		{"Gemini", "gemini"},
		{"CODEBUDDY", "codebuddy-code"},
		{"codebuddy", "codebuddy-code"},
	} {
		e, err := r.Lookup(tc.in)
		if err != nil || e.ID != tc.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tc.in, e.ID, err, tc.want)
		}
	}
	if e, err := Lookup("qwen-code"); err != nil || e.Name != "Qwen Code" {
		t.Errorf("package Lookup: %+v, %v", e, err)
	}
	// Case-insensitive only when unambiguous.
	r2 := New(Entry{ID: "Agent", Source: SourceConfig, Command: &Command{Command: "a"}},
		Entry{ID: "agent", Source: SourceConfig, Command: &Command{Command: "b"}})
	if e, err := r2.Lookup("Agent"); err != nil || e.Command.Command != "a" {
		t.Errorf("exact match: %+v, %v", e, err)
	}
	if _, err := r2.Lookup("AGENT"); err == nil {
		t.Error("ambiguous case-insensitive match resolved")
	}
}

func TestWithPrecedence(t *testing.T) {
	cfg := []Entry{
		{ID: "gemini", Name: "gemini", Source: SourceConfig, Listed: true, Command: &Command{Command: "gemini", Args: []string{"--acp"}}},
		{ID: "codebuddy", Name: "codebuddy", Source: SourceConfig, Listed: true, Command: &Command{Command: "my-codebuddy"}},
	}
	r := Default().With(cfg...)
	l, err := r.Resolve("gemini", linux("gemini", "npx"))
	if err != nil || l.Kind != KindConfig || l.Source != SourceConfig || !slices.Equal(l.Argv, []string{"gemini", "--acp"}) {
		t.Errorf("config gemini: %+v, %v", l, err)
	}
	// A config entry named like a built-in alias takes the name; the built-in keeps its id.
	l, err = r.Resolve("codebuddy", linux("my-codebuddy", "codebuddy"))
	if err != nil || l.Argv[0] != "my-codebuddy" {
		t.Errorf("config codebuddy: %+v, %v", l, err)
	}
	if l, err = r.Resolve("codebuddy-code", linux("codebuddy")); err != nil || l.Source != SourceBuiltin || l.Kind != KindPath {
		t.Errorf("builtin codebuddy-code: %+v, %v", l, err)
	}
	// Default itself is unchanged.
	if l, err := Resolve("gemini", linux("npx")); err != nil || l.Kind != KindNPX {
		t.Errorf("Default changed: %+v, %v", l, err)
	}
	// A newer registry entry replaces a built-in of the same id, aliases and all.
	newer := Entry{ID: "codebuddy-code", Name: "Codebuddy Code", Version: "2.156.0", Source: SourceRegistry, Listed: true,
		Distribution: Distribution{NPX: &Package{Package: "@tencent-ai/codebuddy-code@2.156.0", Args: []string{"--acp"}}}}
	r = Default().With(newer)
	if l, err := r.Resolve("codebuddy-code", linux("npx")); err != nil || l.Kind != KindNPX || l.Source != SourceRegistry {
		t.Errorf("newer codebuddy-code: %+v, %v", l, err)
	}
	if _, err := r.Resolve("codebuddy", linux("npx")); err == nil {
		t.Error("alias of the replaced built-in still resolves")
	}
}

func TestEnvironAndString(t *testing.T) {
	l := Launch{Argv: []string{"npx", "-y", "@a/b@1.0.0", "--flag=x y", ""}, Env: map[string]string{"B": "2", "A": "it's"}}
	got := l.Environ([]string{"PATH=/bin", "A=old", "C=3"})
	want := []string{"PATH=/bin", "A=it's", "C=3", "B=2"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	if s, want := l.String(), `A='it'\''s' B=2 npx -y @a/b@1.0.0 '--flag=x y' ''`; s != want {
		t.Errorf("String = %s, want %s", s, want)
	}
}

func TestStartupTimeout(t *testing.T) {
	if ColdStartTimeout != 60*time.Second {
		t.Fatalf("ColdStartTimeout = %v", ColdStartTimeout)
	}
	for k, want := range map[Kind]time.Duration{KindNPX: ColdStartTimeout, KindUVX: ColdStartTimeout, KindBinary: 0, KindConfig: 0} {
		if got := k.StartupTimeout(); got != want {
			t.Errorf("%s.StartupTimeout() = %v, want %v", k, got, want)
		}
	}
	for _, tc := range []struct {
		e    Entry
		want time.Duration
	}{
		{Entry{ID: "n", Distribution: Distribution{NPX: &Package{Package: "p@1.0.0"}}}, ColdStartTimeout},
		{Entry{ID: "u", Distribution: Distribution{UVX: &Package{Package: "p==1.0.0"}}}, ColdStartTimeout},
		{Entry{ID: "b", Distribution: Distribution{Binary: map[string]BinaryTarget{"linux-x86_64": {Archive: "https://x/b.tar.gz", Cmd: "./b"}}}}, 0},
		{Entry{ID: "c", Source: SourceConfig, Command: &Command{Command: "/usr/bin/npx", Args: []string{"-y", "x"}}}, ColdStartTimeout},
		{Entry{ID: "d", Source: SourceConfig, Command: &Command{Command: "uvx"}}, ColdStartTimeout},
		{Entry{ID: "e", Source: SourceConfig, Command: &Command{Command: "my-agent"}}, 0},
	} {
		l, err := tc.e.Resolve(Env{GOOS: "linux", GOARCH: "amd64", LookPath: func(f string) (string, error) { return f, nil }, RegistryCommand: true})
		if err != nil || l.StartupTimeout != tc.want {
			t.Errorf("%s: StartupTimeout = %v, %v; want %v", tc.e.ID, l.StartupTimeout, err, tc.want)
		}
	}
}
