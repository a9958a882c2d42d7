package registry

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestPrograms: an entry's programs are its distribution's cmd, the table's bins for packages
// not named after their program, else the last element of the package name.
func TestPrograms(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want []string
	}{
		{"gemini", []string{"gemini"}},                          // @google/gemini-cli: the table
		{"qwen-code", []string{"qwen"}},                         // @qwen-code/qwen-code: the table
		{"claude-acp", []string{"claude-agent-acp"}},            // @agentclientprotocol/claude-agent-acp
		{"codebuddy-code", []string{"codebuddy", "cbc"}},        // the table: both bins
		{"github-copilot", []string{"copilot-language-server"}}, // @github/copilot-language-server
		{"qoder", []string{"qodercli"}},                         // @qoder-ai/qodercli
		{"codex-acp", nil},                                      // a binary distribution: its cmd is looked up as it is
	} {
		e, err := Lookup(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Programs(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Programs() = %q, want %q", tc.id, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		e    Entry
		want []string
	}{
		{"npx cmd", Entry{Distribution: Distribution{NPX: &Package{Package: "@x/tools@1.0.0", Cmd: "x-acp"}}}, []string{"x-acp"}},
		{"unscoped", Entry{Distribution: Distribution{NPX: &Package{Package: "opencode-ai@1.18.33"}}}, []string{"opencode"}},
		{"uvx", Entry{Distribution: Distribution{UVX: &Package{Package: "fast-agent-acp==0.2.0"}}}, []string{"fast-agent-acp"}},
		{"uvx extras", Entry{Distribution: Distribution{UVX: &Package{Package: "agent[acp]>=1"}}}, []string{"agent"}},
		{"npx and uvx", Entry{Distribution: Distribution{NPX: &Package{Package: "a@1"}, UVX: &Package{Package: "a==1"}}}, []string{"a"}},
		{"config", Entry{Source: SourceConfig, Command: &Command{Command: "npx"}}, nil},
	} {
		if got := tc.e.Programs(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Programs() = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSplitPackage(t *testing.T) {
	for _, tc := range []struct {
		k                   Kind
		spec, name, version string
	}{
		{KindNPX, "@google/gemini-cli@0.27.3", "@google/gemini-cli", "0.27.3"},
		{KindNPX, "@google/gemini-cli", "@google/gemini-cli", ""},
		{KindNPX, "opencode-ai@latest", "opencode-ai", "latest"},
		{KindNPX, "opencode-ai", "opencode-ai", ""},
		{KindUVX, "name==1.2.3", "name", "1.2.3"},
		{KindUVX, "name@1.2.3", "name", "1.2.3"},
		{KindUVX, "name", "name", ""},
	} {
		if n, v := splitPackage(tc.k, tc.spec); n != tc.name || v != tc.version {
			t.Errorf("splitPackage(%s, %q) = %q, %q; want %q, %q", tc.k, tc.spec, n, v, tc.name, tc.version)
		}
	}
}

// TestResolveOnPath: an npx or uvx entry whose program is on PATH runs it with the
// distribution's arguments and environment (and the config's ExtraEnv), nothing fetched, and
// says what it replaces; RegistryCommand runs the registry's command; a binary distribution
// on PATH still comes first; nothing on PATH is the package runner as before.
func TestResolveOnPath(t *testing.T) {
	e := Entry{ID: "x", Source: SourceRegistry, ExtraEnv: map[string]string{"EXTRA": "1"}, Distribution: Distribution{
		NPX: &Package{Package: "@x/x-acp@1.0.0", Args: []string{"--acp"}, Env: map[string]string{"PKG": "1"}}}}
	l, err := e.Resolve(linux("x-acp", "npx"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != KindPath || !slices.Equal(l.Argv, []string{"x-acp", "--acp"}) || l.Path != "/fake/bin/x-acp" ||
		l.StartupTimeout != 0 || l.Env["PKG"] != "1" || l.Env["EXTRA"] != "1" || l.Package != "@x/x-acp@1.0.0" ||
		!slices.Equal(l.Replaces, []string{"npx", "-y", "@x/x-acp@1.0.0", "--acp"}) {
		t.Errorf("on PATH: %+v", l)
	}
	if got, want := l.Resolution(), "resolved to x-acp on PATH (/fake/bin/x-acp, version unknown until it answers initialize) instead of npx -y @x/x-acp@1.0.0 --acp"; got != want {
		t.Errorf("Resolution() = %q, want %q", got, want)
	}
	env := linux("x-acp", "npx")
	env.RegistryCommand = true
	if l, err := e.Resolve(env); err != nil || l.Kind != KindNPX || l.Resolution() != "" || l.StartupTimeout != ColdStartTimeout ||
		!slices.Equal(l.Argv, []string{"npx", "-y", "@x/x-acp@1.0.0", "--acp"}) {
		t.Errorf("RegistryCommand: %+v, %v", l, err)
	}
	if l, err := e.Resolve(linux("npx")); err != nil || l.Kind != KindNPX {
		t.Errorf("not on PATH: %+v, %v", l, err)
	}
	// Not on PATH and no npx: the reason is npx's, as before.
	if _, err := e.Resolve(linux()); err == nil || err.Error() != `agent "x" cannot run here: npx not found on PATH; to install: install Node.js (npx comes with npm): https://nodejs.org` {
		t.Errorf("nothing on PATH: %v", err)
	}
	both := e
	both.Distribution.Binary = map[string]BinaryTarget{"linux-x86_64": {Archive: "https://x/x.tar.gz", Cmd: "./x-bin"}}
	if l, err := both.Resolve(linux("x-bin", "x-acp", "npx")); err != nil || l.Kind != KindBinary {
		t.Errorf("binary and npx: %+v, %v", l, err)
	}
	uvx := Entry{ID: "u", Distribution: Distribution{UVX: &Package{Package: "u-acp==2.0", Args: []string{"acp"}}}}
	if l, err := uvx.Resolve(linux("u-acp", "uvx")); err != nil || l.Kind != KindPath ||
		!slices.Equal(l.Argv, []string{"u-acp", "acp"}) || !slices.Equal(l.Replaces, []string{"uvx", "u-acp==2.0", "acp"}) {
		t.Errorf("uvx on PATH: %+v, %v", l, err)
	}
	// The list says it too.
	st := New(e).List(linux("x-acp"))
	if len(st) != 1 || st[0].Kind != KindPath || !st[0].CanRun || st[0].RunsHere() != "yes (x-acp on PATH)" ||
		!slices.Equal(st[0].Replaces, l.Replaces) {
		t.Errorf("List: %+v", st)
	}
}

// TestInstalledPackage: the package.json of the npm package a program on PATH links into
// names the package and version (bin as an object or as one path), and nothing else does.
func TestInstalledPackage(t *testing.T) {
	dir := t.TempDir()
	write := func(p, content string) {
		t.Helper()
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, name string) string {
		t.Helper()
		p := filepath.Join(dir, "bin", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(dir, target), p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("lib/node_modules/@google/gemini-cli/package.json", `{"name": "@google/gemini-cli", "version": "0.61.0", "bin": {"gemini": "bundle/gemini.js"}}`)
	write("lib/node_modules/@google/gemini-cli/bundle/gemini.js", "#!/usr/bin/env node\n")
	write("lib/node_modules/@x/one/package.json", `{"name": "@x/one", "version": "2.0.0", "bin": "dist/index.js"}`)
	write("lib/node_modules/@x/one/dist/index.js", "#!/usr/bin/env node\n")
	// A package.json on the way up that does not install the program is not its package.
	write("lib/node_modules/@tencent-ai/agent-sdk/package.json", `{"name": "@tencent-ai/agent-sdk", "version": "0.3.201"}`)
	write("lib/node_modules/@tencent-ai/agent-sdk/cli/package.json", `{"name": "@tencent-ai/codebuddy-code", "version": "2.117.0", "bin": {"codebuddy": "./bin/codebuddy", "cbc": "./bin/codebuddy"}}`)
	write("lib/node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy", "#!/usr/bin/env node\n")
	write("plain/other", "#!/bin/sh\n")
	// A package.json that is a FIFO would block a plain read for ever: it is refused.
	write("lib/node_modules/fifo/dist/index.js", "#!/usr/bin/env node\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "lib/node_modules/fifo/package.json"), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ path, program, want string }{
		{link("lib/node_modules/@google/gemini-cli/bundle/gemini.js", "gemini"), "gemini", "@google/gemini-cli 0.61.0"},
		{link("lib/node_modules/@x/one/dist/index.js", "one"), "one", "@x/one 2.0.0"},
		{link("lib/node_modules/@tencent-ai/agent-sdk/cli/bin/codebuddy", "cbc"), "cbc", "@tencent-ai/codebuddy-code 2.117.0"},
		{link("lib/node_modules/@x/one/dist/index.js", "two"), "two", ""}, // not the package's bin
		{filepath.Join(dir, "plain/other"), "other", ""},
		{link("lib/node_modules/fifo/dist/index.js", "fifo"), "fifo", ""},
		{filepath.Join(dir, "missing"), "missing", ""},
	} {
		if got := installedPackage(tc.path, tc.program); got != tc.want {
			t.Errorf("installedPackage(%s, %s) = %q, want %q", tc.path, tc.program, got, tc.want)
		}
	}
	gemini, err := Lookup("gemini")
	if err != nil {
		t.Fatal(err)
	}
	l, err := gemini.Resolve(Env{GOOS: "linux", GOARCH: "amd64", LookPath: func(f string) (string, error) {
		return filepath.Join(dir, "bin", f), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := "resolved to gemini on PATH (" + filepath.Join(dir, "bin", "gemini") + ": @google/gemini-cli 0.61.0) instead of npx -y @google/gemini-cli@0.27.3 --experimental-acp"
	if l.Installed != "@google/gemini-cli 0.61.0" || l.Resolution() != want {
		t.Errorf("gemini: %+v\nResolution() = %q\nwant          %q", l, l.Resolution(), want)
	}
}
