package registry

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestPlatformFor(t *testing.T) {
	for _, tc := range []struct{ goos, goarch, want string }{
		{"darwin", "arm64", "darwin-aarch64"},
		{"darwin", "amd64", "darwin-x86_64"},
		{"linux", "arm64", "linux-aarch64"},
		{"linux", "amd64", "linux-x86_64"},
		{"windows", "arm64", "windows-aarch64"},
		{"windows", "amd64", "windows-x86_64"},
		{"linux", "386", ""},
		{"linux", "riscv64", ""},
		{"freebsd", "amd64", ""},
		{"android", "arm64", ""},
	} {
		if got := PlatformFor(tc.goos, tc.goarch); got != tc.want {
			t.Errorf("PlatformFor(%s, %s) = %q, want %q", tc.goos, tc.goarch, got, tc.want)
		}
		if got := (Env{GOOS: tc.goos, GOARCH: tc.goarch}).Platform(); got != tc.want {
			t.Errorf("Env.Platform(%s, %s) = %q, want %q", tc.goos, tc.goarch, got, tc.want)
		}
	}
	for _, p := range Platforms {
		goos, arch, _ := strings.Cut(p, "-")
		goarch := map[string]string{"x86_64": "amd64", "aarch64": "arm64"}[arch]
		if PlatformFor(goos, goarch) != p {
			t.Errorf("platform %s is not reachable from GOOS/GOARCH", p)
		}
	}
	h := HostEnv()
	if h.GOOS == "" || h.GOARCH == "" || h.LookPath == nil {
		t.Errorf("HostEnv = %+v", h)
	}
}

// codex-acp is a binary on all six platforms; the lookup uses the base name of cmd.
func TestResolveBinaryEveryPlatform(t *testing.T) {
	for _, p := range Platforms {
		goos, arch, _ := strings.Cut(p, "-")
		goarch := map[string]string{"x86_64": "amd64", "aarch64": "arm64"}[arch]
		name := "codex-acp"
		if goos == "windows" {
			name += ".exe"
		}
		t.Run(p, func(t *testing.T) {
			l, err := Resolve("codex-acp", Env{GOOS: goos, GOARCH: goarch, LookPath: fakePath(name)})
			if err != nil {
				t.Fatal(err)
			}
			if l.Kind != KindBinary || !slices.Equal(l.Argv, []string{name}) || l.Path != "/fake/bin/"+name || l.StartupTimeout != 0 {
				t.Errorf("launch %+v", l)
			}
			// Not on PATH: the error names the archive for this platform.
			l, err = Resolve("codex-acp", Env{GOOS: goos, GOARCH: goarch, LookPath: fakePath("npx", "uvx")})
			var nr *NotRunnableError
			if !errors.As(err, &nr) {
				t.Fatalf("err = %v, want *NotRunnableError", err)
			}
			wantURL := Default().entries["codex-acp"].Distribution.Binary[p].Archive
			if nr.ID != "codex-acp" || nr.Reason != name+" not found on PATH" || !strings.Contains(nr.Install, wantURL) ||
				!strings.Contains(nr.Install, "extract it and put "+name+" on PATH") {
				t.Errorf("error %#v", nr)
			}
			if !strings.Contains(err.Error(), wantURL) || !strings.Contains(err.Error(), `agent "codex-acp"`) {
				t.Errorf("message %q", err)
			}
			if !slices.Equal(l.Argv, []string{name}) || l.Path != "" {
				t.Errorf("launch on error %+v", l)
			}
		})
	}
}

func TestResolveRegistryKinds(t *testing.T) {
	for _, tc := range []struct {
		id       string
		env      Env
		kind     Kind
		argv     []string
		env2     map[string]string
		errParts []string // non-empty: want a *NotRunnableError containing these
	}{
		{id: "gemini", env: linux("npx"), kind: KindNPX, argv: []string{"npx", "-y", "@google/gemini-cli@0.27.3", "--experimental-acp"}},
		{id: "auggie", env: linux("npx"), kind: KindNPX, argv: []string{"npx", "-y", "@augmentcode/auggie@0.15.0", "--acp"},
			env2: map[string]string{"AUGMENT_DISABLE_AUTO_UPDATE": "1"}},
		{id: "claude-code-acp", env: linux("npx"), kind: KindNPX, argv: []string{"npx", "-y", "@zed-industries/claude-code-acp@0.16.0"}},
		{id: "gemini", env: linux(), kind: KindNPX, argv: []string{"npx", "-y", "@google/gemini-cli@0.27.3", "--experimental-acp"},
			errParts: []string{"npx not found on PATH", "install Node.js"}},
		{id: "factory-droid", env: linux("droid"), kind: KindBinary, argv: []string{"droid", "exec", "--output-format", "acp"},
			env2: map[string]string{"DROID_DISABLE_AUTO_UPDATE": "true", "FACTORY_DROID_AUTO_UPDATE_ENABLED": "false"}},
		{id: "opencode", env: linux("opencode"), kind: KindBinary, argv: []string{"opencode", "acp"}},
		{id: "mistral-vibe", env: Env{GOOS: "darwin", GOARCH: "arm64", LookPath: fakePath("vibe-acp")}, kind: KindBinary, argv: []string{"vibe-acp"}},
		{id: "goose", env: Env{GOOS: "windows", GOARCH: "amd64", LookPath: fakePath("goose.exe")}, kind: KindBinary, argv: []string{"goose.exe", "acp"}},
		// kimi has no darwin-x86_64 build.
		{id: "kimi", env: Env{GOOS: "darwin", GOARCH: "amd64", LookPath: fakePath("kimi")}, kind: KindBinary,
			errParts: []string{"no binary build for darwin-x86_64", "darwin-aarch64, linux-aarch64, linux-x86_64, windows-x86_64"}},
		// No registry platform at all.
		{id: "opencode", env: Env{GOOS: "freebsd", GOARCH: "amd64", LookPath: fakePath("opencode")}, kind: KindBinary,
			errParts: []string{"no platform for freebsd/amd64"}},
		{id: "opencode", env: Env{GOOS: "linux", GOARCH: "386", LookPath: fakePath("opencode")}, kind: KindBinary,
			errParts: []string{"no platform for linux/386"}},
		// A raw binary (no archive): save it under cmd's name.
		{id: "cagent", env: linux(), kind: KindBinary, argv: []string{"cagent", "acp"},
			errParts: []string{"cagent not found on PATH", "cagent-linux-amd64, save it as cagent on PATH and make it executable"}},
		// An unlisted entry still resolves.
		{id: "junie-acp", env: linux("npx"), kind: KindNPX, argv: []string{"npx", "-y", "@jetbrains/junie-cli@704.1.0", "--acp=true"}},
	} {
		l, err := Resolve(tc.id, tc.env)
		name := tc.id + "/" + tc.env.Platform()
		if len(tc.errParts) > 0 {
			var nr *NotRunnableError
			if !errors.As(err, &nr) {
				t.Errorf("%s: err = %v, want *NotRunnableError", name, err)
				continue
			}
			for _, p := range tc.errParts {
				if !strings.Contains(err.Error(), p) {
					t.Errorf("%s: error %q lacks %q", name, err, p)
				}
			}
		} else if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if l.ID != tc.id || l.Kind != tc.kind || l.Source != SourceRegistry || !slices.Equal(l.Argv, tc.argv) {
			t.Errorf("%s: launch %+v, want kind %s argv %q", name, l, tc.kind, tc.argv)
		}
		if len(l.Env) != len(tc.env2) {
			t.Errorf("%s: env %v, want %v", name, l.Env, tc.env2)
		}
		for k, v := range tc.env2 {
			if l.Env[k] != v {
				t.Errorf("%s: env %v, want %v", name, l.Env, tc.env2)
			}
		}
	}
}

func TestResolvePackages(t *testing.T) {
	for _, tc := range []struct {
		name string
		dist Distribution
		argv []string
	}{
		{"uvx pinned ==", Distribution{UVX: &Package{Package: "fast-agent-acp==0.10.1", Args: []string{"-x"}}}, []string{"uvx", "fast-agent-acp==0.10.1", "-x"}},
		{"uvx pinned @", Distribution{UVX: &Package{Package: "tool@1.2.3", Args: []string{"acp"}}}, []string{"uvx", "tool@1.2.3", "acp"}},
		{"uvx bare", Distribution{UVX: &Package{Package: "tool"}}, []string{"uvx", "tool"}},
		{"uvx cmd", Distribution{UVX: &Package{Package: "hermes-agent[acp]==0.3.0", Cmd: "hermes-acp", Args: []string{"--stdio"}}},
			[]string{"uvx", "--from", "hermes-agent[acp]==0.3.0", "hermes-acp", "--stdio"}},
		{"npx cmd", Distribution{NPX: &Package{Package: "@s/p@1.0.0", Cmd: "p-acp"}}, []string{"npx", "-y", "--package", "@s/p@1.0.0", "p-acp"}},
	} {
		e := Entry{ID: "x", Distribution: tc.dist, Source: SourceRegistry}
		l, err := e.Resolve(linux("npx", "uvx"))
		if err != nil || !slices.Equal(l.Argv, tc.argv) || l.StartupTimeout != ColdStartTimeout {
			t.Errorf("%s: %+v, %v; want argv %q", tc.name, l, err, tc.argv)
		}
	}
	e := Entry{ID: "py", Distribution: Distribution{UVX: &Package{Package: "py-agent==1.0.0"}}}
	_, err := e.Resolve(linux("npx"))
	if err == nil || !strings.Contains(err.Error(), "uvx not found on PATH") || !strings.Contains(err.Error(), "install uv") {
		t.Errorf("uvx missing: %v", err)
	}
}

// An entry with several distributions prefers a binary on PATH, then npx, then uvx.
func TestResolvePreference(t *testing.T) {
	e := Entry{ID: "multi", Source: SourceRegistry, Distribution: Distribution{
		Binary: map[string]BinaryTarget{"linux-x86_64": {Archive: "https://x/m.tar.gz", Cmd: "./bin/multi", Args: []string{"acp"}}},
		NPX:    &Package{Package: "multi@1.0.0", Args: []string{"--acp"}},
		UVX:    &Package{Package: "multi==1.0.0", Args: []string{"acp"}},
	}}
	if got := e.Kinds(); !slices.Equal(got, []Kind{KindBinary, KindNPX, KindUVX}) {
		t.Fatalf("Kinds = %v", got)
	}
	for _, tc := range []struct {
		found []string
		kind  Kind
		argv0 string
	}{
		{[]string{"multi", "npx", "uvx"}, KindBinary, "multi"},
		{[]string{"npx", "uvx"}, KindNPX, "npx"},
		{[]string{"uvx"}, KindUVX, "uvx"},
	} {
		l, err := e.Resolve(linux(tc.found...))
		if err != nil || l.Kind != tc.kind || l.Argv[0] != tc.argv0 {
			t.Errorf("found %v: %+v, %v; want %s", tc.found, l, err, tc.kind)
		}
	}
	l, err := e.Resolve(linux())
	var nr *NotRunnableError
	if !errors.As(err, &nr) || l.Kind != KindBinary {
		t.Fatalf("nothing found: %+v, %v", l, err)
	}
	for _, p := range []string{"multi not found on PATH", "npx not found on PATH", "uvx not found on PATH", "https://x/m.tar.gz", "put bin/multi on PATH", "install Node.js", "install uv"} {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q lacks %q", err, p)
		}
	}
}

func TestResolveInterpreterAndChecksum(t *testing.T) {
	e := Entry{ID: "nodey", Source: SourceRegistry, Distribution: Distribution{Binary: map[string]BinaryTarget{
		"linux-x86_64": {Archive: "https://x/n.zip", Cmd: "node", Args: []string{"dist/index.js"}, SHA256: strings.Repeat("ab", 32)},
	}}}
	_, err := e.Resolve(linux("node"))
	if err == nil || !strings.Contains(err.Error(), "interpreter node") || !strings.Contains(err.Error(), "sha256 "+strings.Repeat("ab", 32)) {
		t.Errorf("interpreter: %v", err)
	}
}

func TestResolveConfigCommand(t *testing.T) {
	e := Entry{ID: "local", Source: SourceConfig, Command: &Command{Command: "./bin/agent", Args: []string{"--acp"}, Cwd: "/src/agent", Env: map[string]string{"K": "v"}}}
	l, err := e.Resolve(linux("/src/agent/bin/agent"))
	if err != nil || l.Kind != KindConfig || l.Dir != "/src/agent" || l.Path != "/fake/bin/agent" ||
		!slices.Equal(l.Argv, []string{"./bin/agent", "--acp"}) || l.Env["K"] != "v" {
		t.Errorf("config: %+v, %v", l, err)
	}
	_, err = e.Resolve(linux())
	if err == nil || !strings.Contains(err.Error(), "./bin/agent not found") || strings.Contains(err.Error(), "on PATH") {
		t.Errorf("config missing: %v", err)
	}
	// Resolve works on a copy: changing the launch's env leaves the entry alone.
	l.Env["K"] = "changed"
	if e.Command.Env["K"] != "v" {
		t.Error("Launch.Env aliases the entry's map")
	}
}

func TestUnknownAgent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"gemni", []string{"gemini"}},
		{"gemini-cli", []string{"gemini"}},
		{"codex", []string{"codex-acp"}},
		{"claude", []string{"claude-acp", "claude-code-acp"}},
		{"copilot", []string{"github-copilot"}},
		{"qwen", []string{"qwen-code"}},
		{"goos", []string{"goose"}},
		{"codebudy", []string{"codebuddy-code"}},
		{"opencod", []string{"opencode"}},
		{"kimmi", []string{"kimi"}},
		{"droid", []string{"factory-droid"}},
		{"xyzzy", nil},
		{"", nil},
		{"c", nil},
	} {
		_, err := Resolve(tc.in, linux())
		var u *UnknownAgentError
		if !errors.As(err, &u) {
			t.Errorf("%q: err = %v, want *UnknownAgentError", tc.in, err)
			continue
		}
		if u.ID != tc.in || !slices.Equal(u.Suggestions, tc.want) {
			t.Errorf("%q: suggestions %q, want %q", tc.in, u.Suggestions, tc.want)
		}
	}
	_, err := Resolve("gemni", linux())
	if got, want := err.Error(), `unknown agent "gemni"; did you mean: gemini?`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	_, err = Resolve("xyzzy", linux())
	if got, want := err.Error(), `unknown agent "xyzzy"`; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	// At most five, best first.
	var many []Entry
	for _, id := range []string{"agent-a", "agent-b", "agent-c", "agent-d", "agent-e", "agent-f", "agents"} {
		many = append(many, Entry{ID: id, Source: SourceConfig, Command: &Command{Command: id}})
	}
	_, err = New(many...).Lookup("agent")
	var u *UnknownAgentError
	if !errors.As(err, &u) || len(u.Suggestions) != 5 || u.Suggestions[0] != "agents" {
		t.Errorf("many: %v", err)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"gemni", "gemini", 1}, {"gmeini", "gemini", 1},
		{"kitten", "sitting", 3}, {"codex", "qoder", 2}, {"ünï", "uni", 2},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestList(t *testing.T) {
	r := Default().With(Entry{ID: "mine", Name: "mine", Source: SourceConfig, Listed: true, Origin: "agents.json",
		Command: &Command{Command: "mine-agent"}})
	st := r.List(linux("npx", "opencode", "mine-agent"))
	byID := map[string]Status{}
	var ids []string
	for _, s := range st {
		byID[s.ID] = s
		ids = append(ids, s.ID)
	}
	if !slices.IsSorted(ids) || len(ids) != len(r.Entries()) {
		t.Fatalf("ids %v", ids)
	}
	for _, tc := range []struct {
		id     string
		canRun bool
		kind   Kind
		source Source
		listed bool
		reason string
	}{
		{"gemini", true, KindNPX, SourceRegistry, true, ""},
		{"opencode", true, KindBinary, SourceRegistry, true, ""},
		{"codex-acp", false, KindBinary, SourceRegistry, true, "codex-acp not found on PATH"},
		{"goose", false, KindBinary, SourceRegistry, false, "goose not found on PATH"},
		{"junie-acp", true, KindNPX, SourceRegistry, false, ""},
		{"codebuddy-code", true, KindNPX, SourceBuiltin, true, ""},
		{"claude-acp", true, KindNPX, SourceBuiltin, true, ""},
		{"mine", true, KindConfig, SourceConfig, true, ""},
	} {
		s, ok := byID[tc.id]
		if !ok {
			t.Errorf("%s missing", tc.id)
			continue
		}
		if s.CanRun != tc.canRun || s.Kind != tc.kind || s.Source != tc.source || s.Listed != tc.listed || s.Reason != tc.reason {
			t.Errorf("%s: %+v", tc.id, s)
		}
		if s.CanRun != (s.Install == "") && s.ID != "mine" {
			t.Errorf("%s: CanRun %v but Install %q", tc.id, s.CanRun, s.Install)
		}
		if len(s.Argv) == 0 || len(s.Kinds) == 0 {
			t.Errorf("%s: no argv or kinds: %+v", tc.id, s)
		}
	}
	if s := byID["codex-acp"]; !strings.Contains(s.Install, "x86_64-unknown-linux-gnu.tar.gz") {
		t.Errorf("codex-acp install hint %q", s.Install)
	}
	if s := byID["gemini"]; s.Name != "Gemini CLI" || s.Version != "0.27.3" || s.Description == "" {
		t.Errorf("gemini metadata %+v", s)
	}
	// With nothing on PATH no npx entry can run either.
	for _, s := range List(linux()) {
		if s.CanRun {
			t.Errorf("%s can run with an empty PATH", s.ID)
		}
		if s.Reason == "" {
			t.Errorf("%s: no reason", s.ID)
		}
	}
}
