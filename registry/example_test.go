package registry_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/acpprobe/acpprobe/registry"
)

// onPath returns a LookPath that finds only the given commands, so the examples do not
// depend on the machine they run on.
func onPath(names ...string) func(string) (string, error) {
	return func(file string) (string, error) {
		for _, n := range names {
			if n == file {
				return "/usr/local/bin/" + file, nil
			}
		}
		return "", errors.New("not found")
	}
}

func ExampleResolve() {
	env := registry.Env{GOOS: "linux", GOARCH: "amd64", LookPath: onPath("npx")}

	l, err := registry.Resolve("gemini", env)
	fmt.Println(l.Kind, l.Argv, l.StartupTimeout, err)

	_, err = registry.Resolve("codex-acp", env)
	fmt.Println(err)

	_, err = registry.Resolve("gemni", env)
	var unknown *registry.UnknownAgentError
	fmt.Println(errors.As(err, &unknown), err)
	// Output:
	// npx [npx -y @google/gemini-cli@0.27.3 --experimental-acp] 1m0s <nil>
	// agent "codex-acp" cannot run here: codex-acp not found on PATH; to install: download https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/codex-acp-0.9.2-x86_64-unknown-linux-gnu.tar.gz, extract it and put codex-acp on PATH
	// true unknown agent "gemni"; did you mean: gemini?
}

func ExampleList() {
	env := registry.Env{GOOS: "darwin", GOARCH: "arm64", LookPath: onPath("npx", "opencode")}
	for _, s := range registry.List(env) {
		if s.Source == registry.SourceRegistry && s.Listed {
			fmt.Printf("%-16s %-6s %v\n", s.ID, s.Kind, s.CanRun)
		}
	}
	// Output:
	// auggie           npx    true
	// claude-code-acp  npx    true
	// codex-acp        binary false
	// factory-droid    binary false
	// gemini           npx    true
	// github-copilot   npx    true
	// kimi             binary false
	// mistral-vibe     binary false
	// opencode         binary true
	// qoder            npx    true
	// qwen-code        npx    true
}

func ExampleLoadConfig() {
	dir, err := os.MkdirTemp("", "agents")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "agents.json")
	cfg := `{"agents": {"gemini": {"command": "gemini", "args": ["--experimental-acp"], "env": {"GEMINI_MODEL": "flash"}}}}`
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		panic(err)
	}

	entries, err := registry.LoadConfig(path)
	if err != nil {
		panic(err)
	}
	// The config entry replaces the registry's gemini.
	reg := registry.Default().With(entries...)
	l, err := reg.Resolve("gemini", registry.Env{GOOS: "linux", GOARCH: "amd64", LookPath: onPath("gemini")})
	fmt.Println(l.Kind, l.Source, l, err)
	// Output:
	// config config GEMINI_MODEL=flash gemini --experimental-acp <nil>
}

func ExampleLoadFile() {
	dir, err := os.MkdirTemp("", "registry")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "registry.json")
	index := `{"version": "1.0.0", "extensions": [], "agents": [{"id": "fast-agent", "name": "fast-agent",
	  "version": "0.10.1", "description": "Code and build agents", "website": "https://fast-agent.ai",
	  "distribution": {"uvx": {"package": "fast-agent-acp==0.10.1", "args": ["-x"]}}}]}`
	if err := os.WriteFile(path, []byte(index), 0o644); err != nil {
		panic(err)
	}

	entries, err := registry.LoadFile(path)
	if err != nil {
		panic(err)
	}
	reg := registry.Default().With(entries...)
	l, err := reg.Resolve("fast-agent", registry.Env{GOOS: "linux", GOARCH: "amd64", LookPath: onPath("uvx")})
	fmt.Println(l.Kind, l.Argv, err)
	// Output:
	// uvx [uvx fast-agent-acp==0.10.1 -x] <nil>
}
