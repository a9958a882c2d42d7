package registry

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// newerIndex is shaped like the published registry.json of 2026-08: newer fields (website,
// license_url, sha256, preview), a uvx entry, and an extensions array.
const newerIndex = `{
  "version": "1.0.0",
  "agents": [
    {
      "id": "fast-agent",
      "name": "fast-agent",
      "version": "0.10.1",
      "description": "Code and build agents with comprehensive multi-provider support",
      "website": "https://fast-agent.ai",
      "license": "Apache 2.0",
      "icon": "https://cdn.agentclientprotocol.com/registry/v1/latest/fast-agent.svg",
      "distribution": {"uvx": {"package": "fast-agent-acp==0.10.1", "args": ["-x"], "env": {"FAST_AGENT_MODEL": "codexplan"}}}
    },
    {
      "id": "claude-acp",
      "name": "Claude Agent",
      "version": "0.85.1",
      "description": "ACP wrapper for Anthropic's Claude",
      "license": "proprietary",
      "license_url": "https://github.com/agentclientprotocol/claude-agent-acp/blob/main/LICENSE",
      "distribution": {"npx": {"package": "@agentclientprotocol/claude-agent-acp@0.85.1"}},
      "preview": {"version": "0.85.2-preview.22", "distribution": {"npx": {"package": "@agentclientprotocol/claude-agent-acp@0.85.2-preview.22"}}}
    },
    {
      "id": "codex-acp",
      "name": "Codex CLI",
      "version": "0.20.0",
      "description": "ACP adapter for OpenAI's coding assistant",
      "distribution": {"binary": {
        "linux-x86_64": {"archive": "https://example.com/codex-acp-0.20.0-x86_64-unknown-linux-gnu.tar.gz", "cmd": "./codex-acp",
          "sha256": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
      }}
    }
  ],
  "extensions": [
    {"id": "some-extension", "name": "x", "version": "1.0.0", "description": "x", "distribution": {"npx": {"package": "x@1.0.0"}}}
  ]
}`

func TestLoadFileIndex(t *testing.T) {
	p := writeFile(t, t.TempDir(), "registry.json", newerIndex)
	entries, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
		if e.Source != SourceRegistry || !e.Listed || e.Origin != p {
			t.Errorf("%s: Source %q Listed %v Origin %q", e.ID, e.Source, e.Listed, e.Origin)
		}
	}
	if !slices.Equal(ids, []string{"claude-acp", "codex-acp", "fast-agent"}) {
		t.Fatalf("ids %v", ids)
	}
	if entries[2].Website != "https://fast-agent.ai" || entries[0].LicenseURL == "" ||
		entries[1].Distribution.Binary["linux-x86_64"].SHA256 != "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" {
		t.Errorf("newer fields not read: %+v", entries)
	}

	// The newer registry layered over the embedded one: its entries win.
	r := Default().With(entries...)
	l, err := r.Resolve("fast-agent", linux("uvx"))
	if err != nil || l.Kind != KindUVX || !slices.Equal(l.Argv, []string{"uvx", "fast-agent-acp==0.10.1", "-x"}) ||
		l.Env["FAST_AGENT_MODEL"] != "codexplan" || l.StartupTimeout != ColdStartTimeout {
		t.Errorf("fast-agent: %+v, %v", l, err)
	}
	_, err = r.Resolve("codex-acp", linux())
	if err == nil || !strings.Contains(err.Error(), "codex-acp-0.20.0") || !strings.Contains(err.Error(), "sha256 0123") {
		t.Errorf("codex-acp from the newer index: %v", err)
	}
	if l, err := r.Resolve("claude-acp", linux("npx")); err != nil || l.Source != SourceRegistry {
		t.Errorf("claude-acp: the index entry should replace the built-in: %+v, %v", l, err)
	}
}

func TestLoadFileAgentJSON(t *testing.T) {
	dir := t.TempDir()
	b, err := dataFS.ReadFile("data/gemini/agent.json")
	if err != nil {
		t.Fatal(err)
	}
	p := writeFile(t, dir, "gemini/agent.json", string(b))
	entries, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].ID != "gemini" || !entries[0].Listed || entries[0].Origin != p {
		t.Errorf("entries %+v", entries)
	}
	b, _ = dataFS.ReadFile("data/_not_yet_unsupported/goose/agent.json")
	p = writeFile(t, dir, "_not_yet_unsupported/goose/agent.json", string(b))
	entries, err = LoadFile(p)
	if err != nil || len(entries) != 1 || entries[0].Listed {
		t.Errorf("unlisted agent.json: %+v, %v", entries, err)
	}
	// With a byte order mark.
	p = writeFile(t, dir, "bom.json", "\xef\xbb\xbf"+`{"id":"a","name":"A","version":"1.0.0","description":"d","distribution":{"npx":{"package":"a@1.0.0"}}}`)
	if _, err := LoadFile(p); err != nil {
		t.Errorf("BOM: %v", err)
	}
}

// Every embedded agent.json also loads through LoadFile.
func TestLoadFileEmbeddedFiles(t *testing.T) {
	dir := t.TempDir()
	n := 0
	err := fs.WalkDir(dataFS, "data", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "agent.json" {
			return err
		}
		b, _ := dataFS.ReadFile(p)
		entries, err := LoadFile(writeFile(t, dir, strings.TrimPrefix(p, "data/"), string(b)))
		if err != nil {
			t.Error(err)
		} else if entries[0].Listed == strings.Contains(p, "_not_yet_unsupported") {
			t.Errorf("%s: Listed %v", p, entries[0].Listed)
		}
		n++
		return nil
	})
	if err != nil || n != 16 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	agent := func(dist string) string {
		return `{"id":"x","name":"X","version":"1.0.0","description":"d","distribution":` + dist + `}`
	}
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"empty.json", "", []string{"invalid JSON"}},
		{"syntax.json", "{\n  \"agents\": [\n    {\"id\": \"x\",}\n  ]\n}", []string{"invalid JSON at line 3, column"}},
		{"truncated.json", `{"agents": [`, []string{"invalid JSON"}},
		{"array.json", `[]`, []string{"must be a JSON object, got JSON array"}},
		{"neither.json", `{"name": "x"}`, []string{"neither a registry index", "nor an agent.json"}},
		{"config.json", `{"agents": {"x": {"command": "x"}}}`, []string{"looks like an agents config file"}},
		{"agents-type.json", `{"version": "1.0.0", "agents": "x"}`, []string{`"agents" must be an array`}},
		{"version.json", `{"version": "2.0.0", "agents": []}`, []string{`registry index version "2.0.0" is not supported`}},
		{"missing.json", `{"version":"1.0.0","agents":[{"id":"x","distribution":{"npx":{"package":"x@1"}}}]}`,
			[]string{"agents[0]", `agent "x"`, "missing or empty required field(s): name, version, description"}},
		{"dup.json", `{"version":"1.0.0","agents":[` + agent(`{"npx":{"package":"x@1"}}`) + `,` + agent(`{"npx":{"package":"x@1"}}`) + `]}`,
			[]string{"agents[1]", `duplicate id "x" (also agents[0])`}},
		{"badid.json", `{"id":"X_1","name":"X","version":"1.0.0","description":"d","distribution":{"npx":{"package":"x@1"}}}`,
			[]string{`id "X_1" must be lowercase`}},
		{"args.json", agent(`{"npx":{"package":"x@1","args":["--acp", 2]}}`), []string{`agent "x"`, "distribution.npx.args", "got JSON number, want string"}},
		{"env.json", agent(`{"uvx":{"package":"x","env":{"A":true}}}`), []string{"distribution.uvx.env", "got JSON bool"}},
		{"nodist.json", agent(`{}`), []string{`"distribution" is missing or empty`}},
		{"unknowndist.json", agent(`{"bunx":{"package":"x@1"}}`), []string{"no supported distribution (npx, uvx or binary); has: bunx"}},
		{"nopkg.json", agent(`{"npx":{"args":["a"]}}`), []string{"distribution.npx.package is missing or empty"}},
		{"emptybin.json", agent(`{"binary":{}}`), []string{"distribution.binary is empty"}},
		{"noarchive.json", agent(`{"binary":{"linux-x86_64":{"cmd":"./x"}}}`), []string{"distribution.binary.linux-x86_64.archive is missing"}},
		{"nocmd.json", agent(`{"binary":{"linux-x86_64":{"archive":"https://x/x.zip"}}}`), []string{"distribution.binary.linux-x86_64.cmd is missing"}},
		{"sha.json", agent(`{"binary":{"linux-x86_64":{"archive":"https://x/x.zip","cmd":"./x","sha256":"abc"}}}`), []string{`sha256 "abc" is not 64 hex digits`}},
		{"binstr.json", agent(`{"binary":"x"}`), []string{"distribution.binary", "got JSON string"}},
	} {
		p := writeFile(t, t.TempDir(), tc.name, tc.content)
		_, err := LoadFile(p)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), p+": ") && !strings.HasPrefix(err.Error(), p+` (agent "`) {
			t.Errorf("%s: error %q does not start with the file name", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
	_, err := LoadFile(filepath.Join(t.TempDir(), "nope.json"))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nope.json") {
		t.Errorf("missing file: %v", err)
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	p := writeFile(t, dir, "agents.json", `{
  "agents": {
    "gemini": {"command": "gemini", "args": ["--experimental-acp"], "env": {"GEMINI_API_KEY": "k"}},
    "Local Agent": {"command": "./bin/agent", "cwd": "work", "default_mode": "ask"},
    "abs": {"command": "/opt/agent", "args": null, "env": null, "cwd": "/srv"},
    "via-npx": {"command": "npx", "args": ["-y", "@scope/agent@1.0.0"]}
  }
}`)
	entries, err := LoadConfig(p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
		if e.Source != SourceConfig || e.Origin != p || !e.Listed || e.Command == nil || !slices.Equal(e.Kinds(), []Kind{KindConfig}) {
			t.Errorf("%s: %+v", e.ID, e)
		}
	}
	if !slices.Equal(ids, []string{"Local Agent", "abs", "gemini", "via-npx"}) {
		t.Fatalf("ids %v", ids)
	}
	if c := entries[0].Command; c.Cwd != filepath.Join(dir, "work") || c.Command != "./bin/agent" {
		t.Errorf("relative cwd: %+v", c)
	}
	if c := entries[1].Command; c.Cwd != "/srv" || c.Args != nil || c.Env != nil {
		t.Errorf("abs: %+v", c)
	}

	// A config entry named like a registry id wins over it.
	r := Default().With(entries...)
	l, err := r.Resolve("gemini", linux("gemini", "npx"))
	if err != nil || l.Kind != KindConfig || !slices.Equal(l.Argv, []string{"gemini", "--experimental-acp"}) || l.Env["GEMINI_API_KEY"] != "k" {
		t.Errorf("gemini from config: %+v, %v", l, err)
	}
	l, err = r.Resolve("local agent", linux(filepath.Join(dir, "work", "bin", "agent")))
	if err != nil || l.ID != "Local Agent" || l.Dir != filepath.Join(dir, "work") {
		t.Errorf("Local Agent: %+v, %v", l, err)
	}
	l, err = r.Resolve("via-npx", linux("npx"))
	if err != nil || l.StartupTimeout != ColdStartTimeout {
		t.Errorf("via-npx: %+v, %v", l, err)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"syntax.json", "{\"agents\": {\n\"a\": {\"command\": \"x\"\n}", []string{"invalid JSON"}},
		{"noagents.json", `{"servers": {}}`, []string{`no "agents" object`, `no "agent_servers" object`}},
		{"agentsarray.json", `{"agents": []}`, []string{"looks like a registry index"}},
		{"agentsstr.json", `{"agents": "x"}`, []string{`"agents" must be an object`}},
		{"agentsnull.json", `{"agents": null}`, []string{`"agents" must be an object`}},
		{"notobj.json", `{"agents": {"a": "cmd"}}`, []string{`agent "a"`, `must be an object with a "command"`}},
		{"nocmd.json", `{"agents": {"a": {"args": []}}}`, []string{`agent "a"`, `"command" is required`}},
		{"emptycmd.json", `{"agents": {"a": {"command": " "}}}`, []string{`agent "a"`, `"command" must not be empty`}},
		{"cmdtype.json", `{"agents": {"a": {"command": ["x"]}}}`, []string{`"command" must be a string, got an array`}},
		{"argstype.json", `{"agents": {"a": {"command": "x", "args": "--acp"}}}`, []string{`"args" must be an array of strings, got a string`}},
		{"argelem.json", `{"agents": {"a": {"command": "x", "args": ["--acp", 3]}}}`, []string{`"args"[1] must be a string, got a number`}},
		{"envtype.json", `{"agents": {"a": {"command": "x", "env": ["A=b"]}}}`, []string{`"env" must be an object of strings, got an array`}},
		{"envval.json", `{"agents": {"a": {"command": "x", "env": {"A": 1}}}}`, []string{`"env".A must be a string, got a number`}},
		{"envname.json", `{"agents": {"a": {"command": "x", "env": {"A=B": "1"}}}}`, []string{`invalid variable name "A=B"`}},
		{"cwdtype.json", `{"agents": {"a": {"command": "x", "cwd": false}}}`, []string{`"cwd" must be a string, got a boolean`}},
		{"emptyname.json", `{"agents": {"": {"command": "x"}}}`, []string{`agent ""`, "must not be empty"}},
	} {
		p := writeFile(t, t.TempDir(), tc.name, tc.content)
		_, err := LoadConfig(p)
		if err == nil {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		if !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s: error %q does not start with the file name", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
	}
	_, err := LoadConfig(filepath.Join(t.TempDir(), "nope.json"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestLineCol(t *testing.T) {
	b := []byte("ab\ncd\nef")
	for _, tc := range []struct {
		off       int64
		line, col int
	}{{0, 1, 1}, {1, 1, 1}, {2, 1, 2}, {4, 2, 1}, {5, 2, 2}, {8, 3, 2}, {99, 3, 2}} {
		if l, c := lineCol(b, tc.off); l != tc.line || c != tc.col {
			t.Errorf("lineCol(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
}
