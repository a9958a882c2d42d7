package registry

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// zedSettings is a Zed settings.json: JSONC (comments, trailing commas), Zed's own settings
// beside agent_servers, and the entry types Zed writes.
const zedSettings = `// Zed settings
{
  "theme": "One Dark", /* Zed's, ignored */
  "agent": {"default_model": {"provider": "zed.dev", "model": "x"}},
  "agent_servers": {
    "My Agent": {
      "type": "custom",
      "command": "/opt/my-agent", // the executable
      "args": ["--acp",],
      "env": {"MY_LOG": "1"},
      "default_mode": "ask",
      "default_model": "m",
      "favorite_models": ["m"],
      "default_config_options": {"mode": "ask"},
      "favorite_config_option_values": {"mode": ["ask"]},
    },
    "Codex (tapped)": {"command": "/usr/local/bin/acpprobe", "args": ["tap", "--", "npx", "-y", "@zed-industries/codex-acp"], "env": {}},
    "gemini": {"type": "registry", "env": {"GEMINI_API_KEY": "k"}},
    "from-extension": {"type": "extension", "env": {}},
  },
}
`

// acpxConfig is an acpx config file: its own settings beside agents, argv and command+args.
const acpxConfig = `{
  "defaultAgent": "codex",
  "defaultPermissions": "approve-all",
  "nonInteractivePermissions": "deny",
  "authPolicy": "skip",
  "ttl": 300,
  "timeout": null,
  "format": "text",
  "mcpServers": [],
  "auth": {"openai_api_key": "sk-x"},
  "agents": {
    "my-custom": {"argv": ["./bin/my-acp-server", "acp"]},
    "codex": {"command": "/usr/local/bin/codex-acp", "args": ["--mode", "stable"]}
  }
}`

func TestLoadConfigShapes(t *testing.T) {
	dir := t.TempDir()
	entries, err := LoadConfig(writeFile(t, dir, "settings.json", zedSettings))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Entry{}
	for _, e := range entries {
		byID[e.ID] = e
	}
	if _, ok := byID["from-extension"]; ok || len(entries) != 3 {
		t.Errorf("entries %v: want My Agent, Codex (tapped), gemini (an extension agent has no command to run)", entries)
	}
	if c := byID["My Agent"].Command; c == nil || c.Command != "/opt/my-agent" || !slices.Equal(c.Args, []string{"--acp"}) || c.Env["MY_LOG"] != "1" {
		t.Errorf("My Agent: %+v", byID["My Agent"])
	}
	if c := byID["Codex (tapped)"].Command; c == nil || c.Args[0] != "tap" {
		t.Errorf("Codex (tapped): %+v", byID["Codex (tapped)"])
	}
	// A registry entry is the registry's agent of that id, with Zed's env on top.
	r := Default().With(entries...)
	l, err := r.Resolve("gemini", linux("npx"))
	if err != nil || l.Kind != KindNPX || !slices.Equal(l.Argv, []string{"npx", "-y", "@google/gemini-cli@0.27.3", "--experimental-acp"}) ||
		l.Env["GEMINI_API_KEY"] != "k" {
		t.Errorf("gemini through Zed's registry entry: %+v, %v", l, err)
	}
	// Without the registry agent, the entry says why it cannot run.
	_, err = New(entries...).Resolve("gemini", linux("npx"))
	if err == nil || !strings.Contains(err.Error(), "registry has no agent") {
		t.Errorf("registry entry without the registry's agent: %v", err)
	}

	entries, err = LoadConfig(writeFile(t, dir, "config.json", acpxConfig))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || entries[0].ID != "codex" || entries[1].ID != "my-custom" {
		t.Fatalf("acpx entries %+v", entries)
	}
	if c := entries[1].Command; c.Command != "./bin/my-acp-server" || !slices.Equal(c.Args, []string{"acp"}) {
		t.Errorf("argv: %+v", c)
	}
	if c := entries[0].Command; c.Command != "/usr/local/bin/codex-acp" || !slices.Equal(c.Args, []string{"--mode", "stable"}) {
		t.Errorf("command + args: %+v", c)
	}
}

func TestLoadConfigStrict(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ content, want string }{
		{`{"agents": {"a": {"command": "x", "arg": ["y"]}}}`, `agent "a": unknown key "arg" (did you mean "args"?)`},
		{`{"agents": {"a": {"command": "x", "enviroment": {}}}}`, `agent "a": unknown key "enviroment"`},
		{`{"agents": {"a": {"command": "x"}}, "agnets": {}}`, `unknown top-level key "agnets" (did you mean "agents"?)`},
		{`{"agents": {"a": {"argv": ["x"], "command": "x"}}}`, `agent "a": give "argv", or "command" and "args", not both`},
		{`{"agents": {"a": {"argv": []}}}`, `agent "a": "argv" must not be empty`},
		{`{"agents": {"a": {"argv": ["x", 1]}}}`, `agent "a": "argv"[1] must be a string, got a number`},
		{`{"agents": {"a": {"type": "registry", "command": "x"}}}`, `agent "a": "type": "registry" names the registry's agent "a": it takes no "command"`},
		{`{"agents": {"a": {"type": "plugin", "command": "x"}}}`, `agent "a": unknown "type" "plugin" (want custom, registry or extension)`},
		{`{"agents": {"a": {"command": "node ./no/such/agent.mjs"}}}`, `agent "a": "command" "node ./no/such/agent.mjs" is not an executable`},
		{`{"agent_servers": {"a": {"command": "x", "cwd": "/w", "argv": ["x"]}}}`, `agent "a": unknown key "argv"`},
		{`{"agent_servers": {"a": {"env": {}}}}`, `agent "a": "command" is required`},
		{"{\"agents\": {\"a\": {\"command\": \"x\" /* unterminated }}}", `unterminated comment`},
		{`{"agents": {"a": {"command": "x",, "args": []}}}`, `invalid JSON at line 1`},
	} {
		p := writeFile(t, dir, "c.json", tc.content)
		_, err := LoadConfig(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), p+": ") {
			t.Errorf("%s:\n  error %v\n  want  %s: …%s…", tc.content, err, p, tc.want)
		}
	}
}

func TestStripJSONC(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{`{"a": 1, // c` + "\n}", `{"a": 1      ` + "\n}"},
		{`{"a": "//not /* a comment", /* c */ "b": [1,2,],}`, `{"a": "//not /* a comment",         "b": [1,2 ] }`},
		{`{"a": "\"//", }`, `{"a": "\"//"  }`},
		{"/* a\nb */{}", "    \n    {}"},
		{`[1, /* x */ ]`, `[1          ]`},                       // a comment between the comma and the bracket
		{`{"a": ",}", "b": [",]"]}`, `{"a": ",}", "b": [",]"]}`}, // commas inside strings stay
	} {
		got, err := stripJSONC([]byte(tc.in))
		if err != nil || string(got) != tc.out {
			t.Errorf("stripJSONC(%q) = %q, %v; want %q", tc.in, got, err, tc.out)
		}
	}
}

// TestConfigParseIsLinear: a config of 40,000 agents (1.4 MB) parses in a
// small multiple of what decoding the same bytes into plain maps costs, measured side by side
// in the same run. A duplicate check that scanned every entry parsed so far made it quadratic
// (80,000 agents: 63-133 s before the agent started; 40,000: about 80x the decode).
func TestConfigParseIsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	var b strings.Builder
	b.WriteString(`{"agents":{`)
	const n = 40000
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"agent-%d":{"command":"/bin/true","args":["--acp"]}`, i)
	}
	b.WriteString(`}}`)
	data := []byte(b.String())
	if len(data) > MaxFileSize {
		t.Fatalf("the config is %d bytes, over MaxFileSize %d", len(data), MaxFileSize)
	}
	best := func(f func()) time.Duration {
		d := time.Duration(math.MaxInt64)
		for range 2 {
			start := time.Now()
			f()
			d = min(d, time.Since(start))
		}
		return d
	}
	decode := best(func() {
		var top map[string]map[string]map[string]any
		if err := json.Unmarshal(data, &top); err != nil {
			t.Fatal(err)
		}
	})
	var entries []Entry
	parse := best(func() {
		var err error
		if entries, err = parseConfig("big.json", data); err != nil {
			t.Fatal(err)
		}
	})
	if len(entries) != n || entries[0].ID != "agent-0" {
		t.Fatalf("parsed %d entries (first %+v), want %d", len(entries), entries[0], n)
	}
	if parse > 20*decode {
		t.Errorf("parsing %d entries took %v, %.0fx decoding the same bytes (%v): not linear", n, parse, float64(parse)/float64(decode), decode)
	}
	t.Logf("parse %v, decode %v (%.1fx)", parse, decode, float64(parse)/float64(decode))
}
