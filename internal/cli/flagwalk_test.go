package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/sandbox"
)

// parsers are the command-line halves of the commands, for TestEveryFlagDoesSomething. agent
// hands its flags to the reference agent (acptest tests them) and version has none.
var parsers = map[string]func(args []string, io Stdio) (any, error){
	"probe":       func(a []string, io Stdio) (any, error) { return newProbeOptions(a, io) },
	"check":       func(a []string, io Stdio) (any, error) { return newCheckOptions(a, io) },
	"demo":        func(a []string, io Stdio) (any, error) { return newDemoOptions(a, io) },
	"tap":         func(a []string, io Stdio) (any, error) { return newTapOptions(a, io) },
	"matrix":      func(a []string, io Stdio) (any, error) { return newMatrixOptions(a, io) },
	"agents":      func(a []string, io Stdio) (any, error) { return newAgentsOptions(a, io) },
	"analyze":     func(a []string, io Stdio) (any, error) { return newAnalyzeOptions(a, io) },
	"replay":      func(a []string, io Stdio) (any, error) { return newReplayOptions(a, io) },
	"lint-client": func(a []string, io Stdio) (any, error) { return newLintClientOptions(a, io) },
	"diff":        func(a []string, io Stdio) (any, error) { return newDiffOptions(a, io) },
	"extensions":  func(a []string, io Stdio) (any, error) { return newExtensionsOptions(a, io) },
	"turn":        func(a []string, io Stdio) (any, error) { return newTurnOptions(a, io) },
}

// TestEveryFlagDoesSomething walks the flags every command lists in its help and checks that
// each one changes the command's options: a flag that changes nothing does nothing for that
// command and must not be offered. (That the run function reads each option is what the
// command's own tests show.) A flag without a sample value here fails the test, so a new flag
// cannot slip past it.
func TestEveryFlagDoesSomething(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	config := write("agents.json", `{"agents": {"acptest-claude": {"command": "sh", "args": ["-c", "exit 1"]}}}`)
	reg := write("agent.json", `{"id": "acptest-claude", "name": "Other", "version": "1.0.0", "description": "d",
		"distribution": {"npx": {"package": "@example/other@1.0.0"}}}`)
	write("cat/example.org.json", `{"schema": "acpprobe.extensions/v1", "namespace": "example.org", "name": "Example",
		"namespaced": true, "forms": ["flat"], "source": "a test", "metaKeys": [{"name": "k", "direction": "agent-to-client",
		"class": "private", "where": ["x"], "description": "d", "credential": true}]}`)
	baseline := write("known.txt", "framing.stdout-non-json a reason\n")
	// The program of reg's package on PATH: --registry-command runs npx instead.
	write("bin/other", "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(dir, "bin", "other"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(dir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	profiles := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(profiles, 0o755); err != nil {
		t.Fatal(err)
	}

	// sample sets each flag to a value that is not its default; a bool flag is just named.
	sample := map[string]string{
		"command": "some-other-agent --acp", "cwd": dir, "env": "K=V", "timeout": "7s", "startup-timeout": "7s",
		"request-timeout": "7s", "grace": "7s", "protocol-version": "2", "auth-policy": "fail", "registry": reg,
		"config": config, "transcript": filepath.Join(dir, "t.ndjson"), "catalogue": filepath.Join(dir, "cat"),
		"max-line-size": "1000", "persona": "gemini", "schema": "v2", "fail-on": "info", "baseline": baseline,
		"findings": filepath.Join(dir, "f.ndjson"), "parallel": "2", "format": "md", "out": dir, "ignore": "x",
		"vendor": "gemini", "scenario": "cancel", "backend": "gemini", "profiles": profiles, "turn-timeout": "7s",
		"keep-sandbox": filepath.Join(dir, "kept"), "pass-env": "PASS_ME", "client-profile": "zed", "client-profiles": "minimal,zed", "require": "loadSession",
		// matrix runs isolated by default: what changes it is turning it off; turn too, and
		// never unsandboxed: what changes it is the net level.
		"matrix/isolate": "=off", "turn/isolate": "=net",
	}
	// base is the command line a flag is added to: per command, and per command/flag where the
	// flag needs another one to mean anything.
	base := map[string][]string{
		"probe": {"acptest-claude"}, "check": {"acptest-claude"}, "tap": {"acptest-claude"}, "matrix": {"acptest-claude"}, "turn": {"acptest-claude"},
		"analyze": {"t.ndjson"}, "replay": {"t.ndjson"}, "lint-client": {"t.ndjson"}, "diff": {"a.json", "b.json"},
		"probe/command": {}, "check/command": {}, "turn/command": {},
		"check/turns": {"acptest-claude"}, "check/scenario": {"--turns", "acptest-claude"}, "check/backend": {"--turns", "acptest-claude"},
		"check/profiles": {"--turns", "acptest-claude"}, "check/turn-timeout": {"--turns", "acptest-claude"},
		"matrix/scenario": {"--turns", "acptest-claude"}, "matrix/backend": {"--turns", "acptest-claude"},
		"matrix/profiles": {"--turns", "acptest-claude"}, "matrix/turn-timeout": {"--turns", "acptest-claude"},
		"matrix/mcp": {"--turns", "acptest-claude"}, "tap/command": {}, "check/list": {}, "tap/findings": {"--check", "acptest-claude"},
	}
	for _, c := range []string{"probe", "check", "turn", "tap", "matrix"} {
		base[c+"/registry-command"] = []string{"--registry", reg, "acptest-claude"}
	}
	// refused are the flags a command lists only to refuse them with the reason (a usage error
	// that says it): the command still knows them.
	refused := map[string]string{"turn/auth-ab": "does not go with prompt turns"}
	flagLine := regexp.MustCompile(`(?m)^  --([a-z][a-z0-9-]*)`)
	for _, c := range commands() {
		parse, ok := parsers[c.name]
		if !ok {
			if c.name != "agent" && c.name != "version" {
				t.Errorf("command %s has no parser in the flag walk", c.name)
			}
			continue
		}
		var help bytes.Buffer
		if _, err := parse([]string{"-h"}, Stdio{Out: &help}); !errors.Is(err, errHelp) {
			t.Fatalf("%s -h: %v", c.name, err)
		}
		for _, m := range flagLine.FindAllStringSubmatch(help.String(), -1) {
			name := m[1]
			t.Run(c.name+"/"+name, func(t *testing.T) {
				args, ok := base[c.name+"/"+name]
				if !ok {
					args = base[c.name]
				}
				stdio := Stdio{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
				set := []string{"--" + name}
				if v, ok := sample[c.name+"/"+name]; ok {
					set = []string{"--" + name + v} // a flag whose default differs per command
				} else if v, ok := sample[name]; ok {
					set = append(set, v)
				} else if !isBool(t, help.String(), name) {
					t.Fatalf("no sample value for --%s", name)
				}
				if c := sandbox.Available(); set[0] == "--isolate=net" && !c.Net {
					t.Skipf("the net level is not available here: %s", c.NetUnavailable)
				}
				with, err := parse(append(slices.Clone(args), set...), stdio)
				if why, ok := refused[c.name+"/"+name]; ok {
					var ue *usageError
					if !errors.As(err, &ue) || !strings.Contains(err.Error(), why) {
						t.Errorf("%s %q: %v, want the usage error %q", c.name, append(args, set...), err, why)
					}
					return
				}
				if err != nil {
					t.Fatalf("%s %q: %v", c.name, append(args, set...), err)
				}
				// Without the flag the command line may be incomplete (--command, check
				// --list): an error there is a difference too.
				without, err := parse(slices.Clone(args), stdio)
				if err != nil && len(args) == 0 {
					return
				}
				if err != nil {
					t.Fatalf("%s %q: %v", c.name, args, err)
				}
				if reflect.DeepEqual(without, with) {
					t.Errorf("%s %s changes nothing: the flag does nothing for this command", c.name, strings.Join(set, " "))
				}
			})
		}
	}
}

// isBool says whether flag name is listed as a bool in help (no value placeholder after it).
func isBool(t *testing.T, help, name string) bool {
	t.Helper()
	m := regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(name) + `( \S+)?( |\n)`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("--%s is not in the help", name)
	}
	return m[1] == ""
}
