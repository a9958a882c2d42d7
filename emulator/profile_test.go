package emulator

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEmbeddedProfiles(t *testing.T) {
	set, err := LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range set.All() {
		names = append(names, p.Name)
	}
	want := []string{"acptest-model", "anthropic", "auto", "claude-agent-acp", "claude-code-acp", "codebuddy-code", "codex-acp", "gemini", "gemini-cli",
		"openai-chat", "openai-responses", "opencode", "pi-acp", "qwen-code"}
	if !slices.Equal(names, want) {
		t.Errorf("profiles %v, want %v", names, want)
	}
	for _, name := range []string{"anthropic", "openai-responses", "openai-chat", "gemini"} {
		d, err := ParseDialect(name)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := set.Backend(d)
		if !ok || p.Dialect != d || len(p.Match.keys()) != 0 || len(p.Env) == 0 {
			t.Errorf("backend %s: %+v %v", d, p, ok)
		}
	}
	for _, tc := range []struct {
		keys        Keys
		name, byKey string
	}{
		{Keys{AgentName: "@zed-industries/claude-agent-acp"}, "claude-agent-acp", "agentInfo.name @zed-industries/claude-agent-acp"},
		{Keys{AgentName: "@agentclientprotocol/claude-agent-acp"}, "claude-agent-acp", "agentInfo.name @agentclientprotocol/claude-agent-acp"},
		{Keys{RegistryID: "codex-acp", AgentName: "gemini-cli"}, "codex-acp", "registry id codex-acp"},
		{Keys{RegistryID: "unknown", ConfigName: "gemini"}, "gemini-cli", "config name gemini"},
		{Keys{AgentName: "gemini-cli"}, "gemini-cli", "agentInfo.name gemini-cli"},
		// The package an npx command runs, under any scope and at any version.
		{Keys{Package: "@agentclientprotocol/codex-acp@2.6.0"}, "codex-acp", "package @agentclientprotocol/codex-acp@2.6.0"},
		{Keys{Package: "@qwen-code/qwen-code"}, "qwen-code", "package @qwen-code/qwen-code"},
		// The program: an agent without agentInfo (CodeBuddy) is known by it.
		{Keys{Program: "codebuddy"}, "codebuddy-code", "program codebuddy"},
		{Keys{Program: "claude-agent-acp", AgentName: "OpenCode"}, "claude-agent-acp", "program claude-agent-acp"},
	} {
		p, by, ok := set.Match(tc.keys)
		if !ok || p.Name != tc.name || by != tc.byKey {
			t.Errorf("Match(%+v) = %s by %s (%v), want %s by %s", tc.keys, p.Name, by, ok, tc.name, tc.byKey)
		}
	}
	if _, err := ParseDialect("openai"); err == nil {
		t.Errorf("ParseDialect accepted openai")
	}
	if p, _, ok := set.Match(Keys{RegistryID: "goose", AgentName: "someone"}); ok {
		t.Errorf("an agent without a profile matched %s", p.Name)
	}
}

// TestAgentProfiles: each agent's profile is chosen by the keys that agent really has: its
// ACP registry id and the agentInfo.name its initialize answer gives (pinned versions, as
// verified with acpprobe turn).
func TestAgentProfiles(t *testing.T) {
	set, err := LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		profile, registryID, agentName string
		dialect                        Dialect
	}{
		{"claude-agent-acp", "claude-acp", "@zed-industries/claude-agent-acp", Anthropic},
		{"claude-agent-acp", "claude-acp", "@agentclientprotocol/claude-agent-acp", Anthropic},
		{"codex-acp", "codex-acp", "@agentclientprotocol/codex-acp", OpenAIResponses},
		{"codebuddy-code", "codebuddy-code", "", OpenAIChat},
		{"claude-code-acp", "claude-code-acp", "@zed-industries/claude-code-acp", Anthropic},
		{"codex-acp", "codex-acp", "codex-acp", OpenAIResponses},
		{"gemini-cli", "gemini", "gemini-cli", Gemini},
		{"qwen-code", "qwen-code", "qwen-code", OpenAIChat},
		{"opencode", "opencode", "OpenCode", Anthropic},
		{"pi-acp", "pi-acp", "pi-acp", Anthropic},
	} {
		for _, k := range []Keys{{RegistryID: tc.registryID}, {AgentName: tc.agentName}} {
			if k == (Keys{}) {
				continue
			}
			p, _, ok := set.Match(k)
			if !ok || p.Name != tc.profile || p.Dialect != tc.dialect {
				t.Errorf("Match(%+v) = %q %s (%v), want %q %s", k, p.Name, p.Dialect, ok, tc.profile, tc.dialect)
			}
		}
		if p, _ := set.Get(tc.profile); len(p.Verified) == 0 || len(p.Notes) == 0 {
			t.Errorf("profile %s: no verified versions or no notes", tc.profile)
		}
	}
}

// TestProfilesPointAtTheEmulator: every embedded profile, made concrete, gives its agent the
// emulator's URL and the dummy key (in its environment or in a file), leaves no placeholder,
// and writes JSON files that parse.
func TestProfilesPointAtTheEmulator(t *testing.T) {
	set, err := LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:4567"
	for _, p := range set.All() {
		home := t.TempDir()
		s, err := p.Setup(Values{BaseURL: url, Port: 4567, Home: home})
		if err != nil {
			t.Errorf("%s: %v", p.Name, err)
			continue
		}
		all := strings.Join(s.Env, "\n")
		if s.Gateway != nil {
			all += "\n" + s.Gateway.BaseURL + "\n" + DummyKey // a gateway login needs no key
		}
		for _, f := range s.Files {
			all += "\n" + f.Content
			if strings.HasSuffix(f.Path, ".json") && !json.Valid([]byte(f.Content)) {
				t.Errorf("%s: %s is not valid JSON:\n%s", p.Name, f.Path, f.Content)
			}
			if !strings.HasPrefix(f.Path, home+string(filepath.Separator)) {
				t.Errorf("%s: file %s outside HOME %s", p.Name, f.Path, home)
			}
		}
		if !strings.Contains(all, url) || !strings.Contains(all, DummyKey) || strings.Contains(all, "{{") {
			t.Errorf("%s: the setup does not give the emulator URL and the dummy key, or keeps a placeholder:\n%s", p.Name, all)
		}
	}
}

func TestSetupCodex(t *testing.T) {
	set, err := LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("codex-acp")
	home := t.TempDir()
	s, err := p.Setup(Values{BaseURL: "http://127.0.0.1:4567", Port: 4567, Home: home})
	if err != nil {
		t.Fatal(err)
	}
	codexHome := filepath.Join(home, ".codex")
	if !slices.Equal(s.Env, []string{"CODEX_HOME=" + codexHome}) || s.Authenticate != "" || s.Dialect != OpenAIResponses {
		t.Errorf("setup %+v", s)
	}
	if s.Gateway == nil || s.Gateway.Method != "gateway" || s.Gateway.BaseURL != "http://127.0.0.1:4567/v1" {
		t.Fatalf("gateway %+v, want the gateway login with the emulator's /v1", s.Gateway)
	}
	if got := string(s.Gateway.Meta()); got != `{"gateway":{"baseUrl":"http://127.0.0.1:4567/v1","headers":{}}}` {
		t.Errorf("gateway _meta %s", got)
	}
	env := s.Environ([]string{"PATH=/bin", "OPENAI_BASE_URL=https://api.openai.com/v1", "OPENAI_API_KEY=sk-real", "DEFAULT_AUTH_REQUEST={}", "HOME=" + home})
	if slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "DEFAULT_AUTH_REQUEST=")
	}) || !slices.Contains(env, "PATH=/bin") {
		t.Errorf("environ %v", env)
	}
}

// The agent had the HOME before the setup writes there (a turn's earlier connection) and
// planted links: to a directory of the user's where qwen-code's config directory goes, to a file
// of the user's where the config file goes, and in place of the HOME itself. Write never
// writes through one (before, it overwrote the user's file).
func TestSetupWritesThroughNoLink(t *testing.T) {
	set, err := LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("qwen-code") // it writes ~/.qwen/settings.json
	user := t.TempDir()
	precious := filepath.Join(user, "settings.json")
	if err := os.WriteFile(precious, []byte("the user's own"), 0o600); err != nil {
		t.Fatal(err)
	}
	intact := func(what string) {
		t.Helper()
		if b, err := os.ReadFile(precious); err != nil || string(b) != "the user's own" {
			t.Errorf("%s: the user's file is now %q (%v)", what, b, err)
		}
		if entries, _ := os.ReadDir(user); len(entries) != 1 {
			t.Errorf("%s: the user's directory holds %d entries", what, len(entries))
		}
	}
	for _, c := range []struct {
		name  string
		plant func(home string) error
		fails bool // the write cannot be done without following the link
	}{
		{"config directory", func(home string) error { return os.Symlink(user, filepath.Join(home, ".qwen")) }, true},
		{"config file", func(home string) error {
			if err := os.Mkdir(filepath.Join(home, ".qwen"), 0o700); err != nil {
				return err
			}
			return os.Symlink(precious, filepath.Join(home, ".qwen", "settings.json"))
		}, false},
		{"HOME", func(home string) error {
			if err := os.Remove(home); err != nil {
				return err
			}
			return os.Symlink(user, home)
		}, true},
	} {
		home := filepath.Join(t.TempDir(), "home")
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		s, err := p.Setup(Values{BaseURL: "http://127.0.0.1:4567", Port: 4567, Home: home})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.plant(home); err != nil {
			t.Fatal(err)
		}
		err = s.Write()
		if c.fails != (err != nil) {
			t.Errorf("%s: Write = %v", c.name, err)
		}
		intact(c.name)
		if !c.fails {
			if st, err := os.Lstat(filepath.Join(home, ".qwen", "settings.json")); err != nil || !st.Mode().IsRegular() {
				t.Errorf("%s: the config is %v (%v), want a file of its own in the HOME", c.name, st, err)
			}
		}
	}
}

func TestValuesFor(t *testing.T) {
	s := start(t, Options{})
	v := ValuesFor(s, "/h")
	set, _ := LoadProfiles()
	p, _ := set.Get("claude-agent-acp")
	st, err := p.Setup(v)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(st.Env, "ANTHROPIC_BASE_URL="+s.URL()) || !slices.Contains(st.Env, "ANTHROPIC_API_KEY="+DummyKey) || !slices.Contains(st.Empty, "IS_SANDBOX") {
		t.Errorf("setup %+v", st)
	}
}

// writeProfile writes a user profile file.
func writeProfile(t *testing.T, dir, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadProfilesDir(t *testing.T) {
	dir := t.TempDir()
	writeProfile(t, dir, "qwen-code.json", `{"name":"qwen-code","match":{"registryIds":["qwen-code"]},"dialect":"openai-chat",
		"env":{"OPENAI_BASE_URL":"{{baseURL}}/v1","OPENAI_API_KEY":"{{dummyKey}}","PORT_ONLY":"{{ port }}"},"notes":["user"]}`)
	writeProfile(t, dir, "gemini-cli.json", `{"name":"gemini-cli","match":{"agentNames":["gemini-cli"]},"dialect":"gemini","env":{"X":"{{home}}"},
		"files":[{"path":".gemini/settings.json","content":"{\"privacy\":{\"usageStatisticsEnabled\":false}}"}]}`)
	writeProfile(t, dir, "README.md", "not a profile")
	set, err := LoadProfilesDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, by, ok := set.Match(Keys{RegistryID: "qwen-code"})
	if !ok || p.Name != "qwen-code" || by != "registry id qwen-code" {
		t.Fatalf("user profile not matched: %+v", p)
	}
	s, err := p.Setup(Values{BaseURL: "http://127.0.0.1:9", Port: 9, Home: "/h"})
	if err != nil || !slices.Contains(s.Env, "PORT_ONLY=9") || !slices.Contains(s.Env, "OPENAI_BASE_URL=http://127.0.0.1:9/v1") {
		t.Errorf("setup %v %v", s.Env, err)
	}
	g, _ := set.Get("gemini-cli")
	if g.Env["X"] != "{{home}}" || g.Match.RegistryIDs != nil || len(g.Files) != 1 {
		t.Errorf("user file did not replace the embedded gemini-cli profile: %+v", g)
	}
	if _, _, ok := set.Match(Keys{RegistryID: "gemini"}); ok {
		t.Errorf("the replaced profile's registry id still matches")
	}
}

func TestLoadProfilesDirErrors(t *testing.T) {
	valid := func(name string) string {
		return `{"name":"` + name + `","dialect":"anthropic","env":{"A":"{{baseURL}}"}}`
	}
	for _, tc := range []struct {
		name, file, content string
		want                string
	}{
		{"unknown key", "x.json", `{"name":"x","dialect":"anthropic","envs":{}}`, `unknown field "envs"`},
		{"trailing data", "x.json", valid("x") + `{}`, "data after the top-level object"},
		{"not JSON", "x.json", `{"name":`, "invalid profile JSON"},
		{"file name", "y.json", valid("x"), "must be named x.json"},
		{"bad name", "X Y.json", valid("X Y"), "name \"X Y\""},
		{"dialect", "x.json", `{"name":"x","dialect":"openai"}`, `dialect "openai"`},
		{"placeholder", "x.json", `{"name":"x","dialect":"gemini","env":{"A":"{{apiKey}}"}}`, "unknown placeholder {{apiKey}}"},
		{"unclosed", "x.json", `{"name":"x","dialect":"gemini","env":{"A":"{{baseURL}"}}`, "opens no"},
		{"env name", "x.json", `{"name":"x","dialect":"gemini","env":{"A=B":"1"}}`, "not a variable name"},
		{"escape", "x.json", `{"name":"x","dialect":"gemini","files":[{"path":"../.bashrc","content":""}]}`, "inside HOME"},
		{"absolute", "x.json", `{"name":"x","dialect":"gemini","files":[{"path":"/etc/x","content":""}]}`, "inside HOME"},
		{"unclean", "x.json", `{"name":"x","dialect":"gemini","homeDirs":{"D":"a/../../b"}}`, "inside HOME"},
		{"empty and set", "x.json", `{"name":"x","dialect":"gemini","env":{"A":"1"},"emptyEnv":["A"]}`, "also set in env"},
		{"duplicate key", "x.json", `{"name":"x","dialect":"gemini","match":{"registryIds":["gemini"]}}`, `registryId gemini is also claimed`},
		{"blank key", "x.json", `{"name":"x","dialect":"gemini","match":{"agentNames":[" "]}}`, "empty or has surrounding spaces"},
		{"too large", "x.json", `{"name":"x","dialect":"gemini","notes":["` + strings.Repeat("n", maxProfileFile) + `"]}`, "this file may have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeProfile(t, dir, tc.file, tc.content)
			_, err := LoadProfilesDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("error %v, want one naming %s and saying %q", err, tc.file, tc.want)
			}
		})
	}
	t.Run("not regular", func(t *testing.T) {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "x.json")
		writeProfile(t, filepath.Dir(target), "x.json", valid("x"))
		if err := os.Symlink(target, filepath.Join(dir, "x.json")); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "d.json"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := LoadProfilesDir(dir)
		if err == nil || strings.Count(err.Error(), "not a regular file") != 2 {
			t.Errorf("error %v, want the symlink and the directory rejected", err)
		}
	})
	if _, err := LoadProfilesDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Errorf("a missing directory was accepted")
	}
	if _, err := LoadProfilesDir(""); err == nil {
		t.Errorf("an empty directory name was accepted")
	}
}

// TestAutoProfile: the auto profile is the union AutoEnv computes from the other profiles, so
// it cannot drift from them: a profile that adds a base-URL or key variable, or a variable it
// wants empty, fails here until auto.json has it too. The conflicts are the four its notes
// name; a new one fails here, to be named.
func TestAutoProfile(t *testing.T) {
	set, err := LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	p, ok := set.Backend(Auto)
	if !ok || p.Dialect != Auto || len(p.Match.keys()) != 0 || len(p.Files) != 0 || p.Authenticate != "" {
		t.Fatalf("backend auto: %+v %v", p, ok)
	}
	a := set.AutoEnv()
	if !maps.Equal(p.Env, a.Env) || !slices.Equal(p.EmptyEnv, a.EmptyEnv) {
		t.Errorf("profiles/auto.json has env %v and emptyEnv %v; the other profiles give env %v and emptyEnv %v", p.Env, p.EmptyEnv, a.Env, a.EmptyEnv)
	}
	for _, other := range set.All() {
		for name, v := range other.Env {
			if (strings.Contains(v, "{{baseURL}}") || strings.Contains(v, "{{dummyKey}}")) && p.Env[name] == "" {
				t.Errorf("%s sets %s=%s, which auto does not", other.Name, name, v)
			}
		}
	}
	var names []string
	for _, c := range a.Conflicts {
		names = append(names, c.Name)
		if len(c.Values) != 1 || len(c.Emptied) == 0 {
			t.Errorf("conflict %+v: want one value, and profiles that want it empty", c)
		}
	}
	if want := []string{"ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"}; !slices.Equal(names, want) {
		t.Errorf("conflicts %v, want %v (named in auto.json's notes)", names, want)
	}
	s, err := p.Setup(Values{BaseURL: "http://127.0.0.1:4567", Port: 4567, Home: t.TempDir()})
	if err != nil || !slices.Contains(s.Env, "OPENAI_BASE_URL=http://127.0.0.1:4567/v1") || !slices.Contains(s.Env, "ANTHROPIC_BASE_URL=http://127.0.0.1:4567") ||
		!slices.Contains(s.Env, "GEMINI_API_KEY="+DummyKey) {
		t.Errorf("setup %+v %v", s, err)
	}
}

// TestAutoEnvConflicts: AutoEnv over the embedded profiles and three more, two of which set a
// variable to one value, a third to another, and a fourth wants it empty: the value most of
// them give wins, and the conflict names all four; a variable that does not point at the
// emulator is not taken.
func TestAutoEnvConflicts(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a1", "a2", "b"} {
		url := map[string]string{"a1": "{{baseURL}}/a", "a2": "{{baseURL}}/a", "b": "{{baseURL}}/b"}[name]
		writeProfile(t, dir, name+".json", `{"name":"`+name+`","match":{},"dialect":"anthropic","env":{"X_BASE_URL":"`+url+`","X_MODE":"fast"},"emptyEnv":["X_TOKEN"]}`)
	}
	writeProfile(t, dir, "c.json", `{"name":"c","match":{},"dialect":"gemini","env":{"Y_KEY":"{{dummyKey}}"},"emptyEnv":["X_BASE_URL"]}`)
	set, err := LoadProfilesDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := set.AutoEnv()
	if a.Env["X_BASE_URL"] != "{{baseURL}}/a" || a.Env["Y_KEY"] != "{{dummyKey}}" || a.Env["X_MODE"] != "" {
		t.Errorf("env %v", a.Env)
	}
	if slices.Contains(a.EmptyEnv, "X_BASE_URL") || !slices.Contains(a.EmptyEnv, "X_TOKEN") {
		t.Errorf("emptyEnv %v", a.EmptyEnv)
	}
	var c *EnvConflict
	for i := range a.Conflicts {
		if a.Conflicts[i].Name == "X_BASE_URL" {
			c = &a.Conflicts[i]
		}
	}
	if c == nil || !slices.Equal(c.Values["{{baseURL}}/a"], []string{"a1", "a2"}) || !slices.Equal(c.Values["{{baseURL}}/b"], []string{"b"}) || !slices.Equal(c.Emptied, []string{"c"}) {
		t.Errorf("conflicts %+v", a.Conflicts)
	}
}
