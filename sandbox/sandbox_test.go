package sandbox_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// hostEnv is a caller's environment with a fake real HOME, credentials, proxies, a desktop and
// variables that point agents elsewhere.
func hostEnv(fakeHome string) []string {
	return []string{
		"HOME=" + fakeHome,
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "USER=someone",
		"ANTHROPIC_API_KEY=sk-ant-secret", "GITHUB_TOKEN=ghp_secret", "AWS_ACCESS_KEY_ID=AKIA",
		"SSH_AUTH_SOCK=/run/ssh.sock", "HTTPS_PROXY=http://u:p@proxy:3128",
		"NODE_OPTIONS=--require /tmp/evil.js", "DISPLAY=:0", "IS_SANDBOX=1",
		"XDG_CONFIG_HOME=" + fakeHome + "/.config", "CODEX_HOME=" + fakeHome + "/.codex",
		"CLAUDE_CONFIG_DIR=" + fakeHome + "/.claude", "GEMINI_CLI_HOME=" + fakeHome,
		"MY_TOOL_SETTING=on", "PASS_ME=yes",
	}
}

// runIn runs the test binary as an agent in mode inside s and decodes its report.
func runIn(t *testing.T, s *sandbox.Sandbox, mode string) agentReport {
	t.Helper()
	rep, err := runAgentIn(s, mode)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// runAgentIn is runIn for any goroutine.
func runAgentIn(s *sandbox.Sandbox, mode string) (agentReport, error) {
	var rep agentReport
	exe, err := os.Executable()
	if err != nil {
		return rep, err
	}
	cmd := exec.Command(exe)
	cmd.Env = append(s.Env(), agentEnvVar(mode)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := s.Prepare(cmd); err != nil {
		return rep, err
	}
	if err := cmd.Run(); err != nil {
		return rep, fmt.Errorf("agent %s: %v\n%s", mode, err, stderr.String())
	}
	if mode != "quiet" {
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			return rep, fmt.Errorf("agent report: %v: %q", err, stdout.String())
		}
	}
	return rep, nil
}

// agentEnvVar makes the test binary the agent; GORACE stops the race detector from sleeping a
// second at every exit.
func agentEnvVar(mode string) []string {
	return []string{agentEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}
}

// envMap turns KEY=VALUE pairs into a map.
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestAttack runs a hostile agent in a sandbox and checks every promise: the environment it
// sees, the files reported, the browser launches recorded, nothing in the real HOME, and a
// clean removal that does not follow the link it planted.
func TestAttack(t *testing.T) {
	fakeHome, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.New(sandbox.Options{
		Environ: hostEnv(fakeHome),
		Env:     []string{"ACPPROBE_TEST_OUTSIDE=" + outside, "ACPPROBE_TEST_TREE=150"},
		PassEnv: []string{"PASS_ME", "NOT_SET_ANYWHERE"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Level() != record.LevelEnvHome {
		t.Errorf("level = %s, want env+home", s.Level())
	}
	if st, err := os.Stat(s.Dir()); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("sandbox dir mode = %v (%v), want 0700", st.Mode().Perm(), err)
	}
	before := s.Snapshot()
	rep := runIn(t, s, "attack")
	files := sandbox.Diff(before, s.Snapshot())

	// The environment: exactly the allow-list, the sandbox's own variables and the caller's
	// explicit ones.
	got := envMap(rep.Env)
	home := s.Home()
	want := map[string]string{
		"PATH":                  s.Shims().Bin() + ":" + os.Getenv("PATH"),
		"LANG":                  "C.UTF-8",
		"LC_ALL":                "C",
		"TERM":                  "xterm",
		"USER":                  "someone",
		"PASS_ME":               "yes",
		"HOME":                  home,
		"PWD":                   s.Workspace(),
		"TMPDIR":                s.TempDir(),
		"XDG_RUNTIME_DIR":       filepath.Join(s.Dir(), "run"),
		"XDG_CONFIG_HOME":       filepath.Join(home, ".config"),
		"XDG_DATA_HOME":         filepath.Join(home, ".local/share"),
		"XDG_STATE_HOME":        filepath.Join(home, ".local/state"),
		"XDG_CACHE_HOME":        filepath.Join(home, ".cache"),
		"BROWSER":               s.Shims().Browser(),
		"CODEX_HOME":            filepath.Join(home, ".codex"),
		"CLAUDE_CONFIG_DIR":     filepath.Join(home, ".claude"),
		"GEMINI_CLI_HOME":       home,
		"QWEN_HOME":             filepath.Join(home, ".qwen"),
		"QWEN_RUNTIME_DIR":      filepath.Join(home, ".qwen"),
		"PI_CODING_AGENT_DIR":   filepath.Join(home, ".pi/agent"),
		"CURSOR_CONFIG_DIR":     filepath.Join(home, ".cursor"),
		"COPILOT_HOME":          filepath.Join(home, ".copilot"),
		agentEnv:                "attack",
		"GORACE":                "atexit_sleep_ms=0",
		"ACPPROBE_TEST_OUTSIDE": outside,
		"ACPPROBE_TEST_TREE":    "150",
	}
	if !reflect.DeepEqual(got, want) {
		for k, v := range got {
			if want[k] != v {
				t.Errorf("agent env %s=%q, want %q", k, v, want[k])
			}
		}
		for k := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("agent env lacks %s", k)
			}
		}
	}
	if rep.Cwd != s.Workspace() {
		t.Errorf("agent cwd = %s, want the workspace %s", rep.Cwd, s.Workspace())
	}
	er := s.EnvReport()
	wantDropped := []string{"ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "DISPLAY", "GEMINI_CLI_HOME", "GITHUB_TOKEN", "HOME", "HTTPS_PROXY", "IS_SANDBOX", "MY_TOOL_SETTING", "NODE_OPTIONS", "SSH_AUTH_SOCK", "XDG_CONFIG_HOME"}
	if !slices.Equal(er.Dropped, wantDropped) || !slices.Equal(s.Dropped(), wantDropped) {
		t.Errorf("dropped = %v, want %v", er.Dropped, wantDropped)
	}
	if want := []string{"ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "HTTPS_PROXY", "SSH_AUTH_SOCK"}; !slices.Equal(er.DroppedCredentials, want) {
		t.Errorf("dropped credentials = %v, want %v", er.DroppedCredentials, want)
	}
	if !slices.Equal(er.Passed, []string{"PASS_ME"}) || !slices.Equal(er.Set, []string{"ACPPROBE_TEST_OUTSIDE", "ACPPROBE_TEST_TREE"}) || len(er.Credentials) != 0 {
		t.Errorf("passed %v, set %v, credentials %v", er.Passed, er.Set, er.Credentials)
	}
	b, _ := json.Marshal(er)
	for _, secret := range []string{"sk-ant-secret", "ghp_secret", "u:p@proxy", "evil.js"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the env report holds a value: %s", b)
		}
	}

	// The files.
	wantFiles := map[string]record.FileChange{
		"home/.agentrc":                  {Path: "home/.agentrc", Change: "created", Kind: "file", Size: 5},
		"home/.config/agent/config.json": {Path: "home/.config/agent/config.json", Change: "created", Kind: "file", Size: 123},
		"tmp/scratch.bin":                {Path: "tmp/scratch.bin", Change: "created", Kind: "file", Size: 4096},
		"workspace/out.txt":              {Path: "workspace/out.txt", Change: "created", Kind: "file", Size: 7},
		"home/ro/inside.txt":             {Path: "home/ro/inside.txt", Change: "created", Kind: "file", Size: 1},
		"home/escape":                    {Path: "home/escape", Change: "created", Kind: "symlink", Size: int64(len(outside)), Target: outside},
		"tmp/pipe":                       {Path: "tmp/pipe", Change: "created", Kind: "fifo"},
	}
	if os.Getuid() == 0 { // root reads a 0000 directory; anyone else cannot list it
		wantFiles["home/locked/secret.txt"] = record.FileChange{Path: "home/locked/secret.txt", Change: "created", Kind: "file", Size: 2}
	} else if files.Unreadable != 1 {
		t.Errorf("unreadable = %d, want 1 (home/locked)", files.Unreadable)
	}
	tree := 0
	for _, c := range files.Changes {
		if strings.HasPrefix(c.Path, "home/tree/") {
			tree++
			if c.Change != "created" || c.Kind != "file" || c.Size != 1 {
				t.Errorf("tree entry %+v", c)
			}
			continue
		}
		w, ok := wantFiles[c.Path]
		if !ok {
			t.Errorf("unexpected change %+v", c)
			continue
		}
		if c != w {
			t.Errorf("change %+v, want %+v", c, w)
		}
		delete(wantFiles, c.Path)
	}
	for p := range wantFiles {
		t.Errorf("change of %s not reported", p)
	}
	if tree != 150 || files.Created != len(files.Changes) || files.Changed != 0 || files.Deleted != 0 || files.Capped || files.Truncated {
		t.Errorf("tree %d, created %d of %d listed, changed %d, deleted %d, capped %v, truncated %v", tree, files.Created, len(files.Changes), files.Changed, files.Deleted, files.Capped, files.Truncated)
	}
	if !slices.Equal(files.Watched, []string{"home", "tmp", "run", "workspace"}) {
		t.Errorf("watched = %v", files.Watched)
	}

	// The browser launches: the odd one verbatim, the concurrent ones each once, $BROWSER.
	launches, dropped, err := s.BrowserLaunches()
	if err != nil || dropped != 0 {
		t.Fatalf("launches: %v, dropped %d", err, dropped)
	}
	if len(launches) != concurrentLaunches+2 {
		t.Fatalf("%d launches recorded, want %d: %+v", len(launches), concurrentLaunches+2, launches)
	}
	var odd, browser int
	seen := map[string]bool{}
	for _, l := range launches {
		switch {
		case l.Program == "xdg-open" && reflect.DeepEqual(l.Args, oddArgs):
			odd++
		case l.Program == "xdg-open" && len(l.Args) == 1 && strings.HasPrefix(l.Args[0], "https://example.com/"):
			seen[l.Args[0]] = true
		case l.Program == "$BROWSER" && reflect.DeepEqual(l.Args, []string{"https://example.com/browser"}):
			browser++
		default:
			t.Errorf("unexpected launch %+v", l)
		}
		if l.Truncated || l.Time.IsZero() {
			t.Errorf("launch %+v: truncated or without time", l)
		}
	}
	if odd != 1 || browser != 1 || len(seen) != concurrentLaunches {
		t.Errorf("odd %d, $BROWSER %d, distinct concurrent %d", odd, browser, len(seen))
	}
	if rep.Launch != "exit status 1" || rep.Browser != "exit status 1" {
		t.Errorf("the shims should fail like a headless machine: xdg-open %s, $BROWSER %s", rep.Launch, rep.Browser)
	}
	for _, p := range []string{"pwned", "pwned2", "pwned3"} {
		for _, dir := range []string{s.Workspace(), s.Home(), s.Shims().Bin()} {
			if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
				t.Errorf("a shim ran the command in an argument: %s exists", filepath.Join(dir, p))
			}
		}
	}

	// Nothing in the real HOME; removal leaves what the link points to.
	if entries, _ := os.ReadDir(fakeHome); len(entries) != 0 {
		t.Errorf("the fake real HOME got %d entries", len(entries))
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if _, err := os.Lstat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("sandbox still there after Close: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(outside, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("removal followed the link: %q, %v", b, err)
	}
}

// TestCap: a tree larger than the cap stops the walk and says so.
func TestCap(t *testing.T) {
	s, err := sandbox.New(sandbox.Options{Environ: hostEnv(t.TempDir()), Env: []string{"ACPPROBE_TEST_OUTSIDE=/", "ACPPROBE_TEST_TREE=1200"}, MaxEntries: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := s.Snapshot()
	runIn(t, s, "attack")
	files := sandbox.Diff(before, s.Snapshot())
	if !files.Capped || files.Walked != 1000 || len(files.Changes) == 0 || len(files.Changes) > 1000 {
		t.Errorf("capped %v, walked %d, %d changes", files.Capped, files.Walked, len(files.Changes))
	}
}

// TestKeep: a kept sandbox stays where it was asked to be, with what the agent wrote.
func TestKeep(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kept")
	s, err := sandbox.New(sandbox.Options{Environ: hostEnv(t.TempDir()), KeepDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if s.Dir() != dir {
		t.Errorf("dir = %s, want %s", s.Dir(), dir)
	}
	runIn(t, s, "quiet")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "home", ".quietrc")); err != nil || len(b) != 10 {
		t.Errorf("kept file: %d bytes, %v", len(b), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bin", "probe"), nil, 0o600); err != nil {
		t.Errorf("a kept sandbox should be removable by the user (its shim dir writable): %v", err)
	}
	if _, err := sandbox.New(sandbox.Options{KeepDir: dir}); err == nil {
		t.Error("New reused a non-empty keep directory")
	}
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.New(sandbox.Options{KeepDir: fifo}); err == nil {
		t.Error("New kept a sandbox in a FIFO")
	}
}

// TestKeepLater: Keep decided after the run keeps the sandbox where it is.
func TestKeepLater(t *testing.T) {
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir())})
	if err != nil {
		t.Fatal(err)
	}
	s.Keep()
	if err := s.Close(); err != nil || !s.Kept() {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Home()); err != nil {
		t.Errorf("kept sandbox removed: %v", err)
	}
}

// TestRefused: the caller cannot point the sandbox's own variables elsewhere, and Prepare
// refuses an environment that is not the sandbox's.
func TestRefused(t *testing.T) {
	for _, o := range []sandbox.Options{
		{Env: []string{"HOME=/root"}},
		{Env: []string{"CODEX_HOME=/root/.codex"}},
		{Env: []string{"XDG_CONFIG_HOME=/x"}},
		{Env: []string{"NOEQUALS"}},
		{PassEnv: []string{"TMPDIR"}},
		{PassEnv: []string{"BROWSER"}},
		{Ports: []int{8080}},
		{Workspace: "/nonexistent/workspace"},
	} {
		o.Parent = t.TempDir()
		if s, err := sandbox.New(o); err == nil {
			s.Close()
			t.Errorf("New(%+v) accepted", o)
		} else if entries, _ := os.ReadDir(o.Parent); len(entries) != 0 {
			t.Errorf("New(%+v) failed (%v) but left %d entries", o, err, len(entries))
		}
	}
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cmd := exec.Command("true")
	cmd.Env = os.Environ()
	if err := s.Prepare(cmd); err == nil {
		t.Error("Prepare accepted the caller's own environment")
	}
}

// TestWorkspace: a workspace given by the caller (--cwd) is the agent's working directory and
// is watched, and Close leaves it.
func TestWorkspace(t *testing.T) {
	work := t.TempDir()
	mkfile(t, filepath.Join(work, "main.go"), 3)
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir()), Workspace: work})
	if err != nil {
		t.Fatal(err)
	}
	before := s.Snapshot()
	rep := runIn(t, s, "attack-lite")
	files := sandbox.Diff(before, s.Snapshot())
	if rep.Cwd != work || envMap(rep.Env)["PWD"] != work {
		t.Errorf("cwd %s, PWD %s, want %s", rep.Cwd, envMap(rep.Env)["PWD"], work)
	}
	want := []record.FileChange{{Path: "workspace/out.txt", Change: "created", Kind: "file", Size: 7}}
	if !reflect.DeepEqual(files.Changes, want) {
		t.Errorf("changes %+v, want %+v", files.Changes, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(work, "main.go")); err != nil {
		t.Errorf("Close touched the caller's workspace: %v", err)
	}
}

// TestJSONNames: the report's field names are part of the result format.
func TestJSONNames(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{record.EnvReport{}, `{"dropped":null,"droppedCredentials":null,"passed":null,"set":null,"credentials":null}`},
		{record.Files{}, `{"watched":null,"changes":null,"created":0,"changed":0,"deleted":0,"walked":0}`},
		{record.FileChange{Path: "home/x", Change: "created", Kind: "symlink", Size: 1, Target: "/"}, `{"path":"home/x","change":"created","kind":"symlink","size":1,"target":"/"}`},
		{sandbox.Launch{Program: "xdg-open", Args: []string{"u"}, Truncated: true}, `{"time":"0001-01-01T00:00:00Z","program":"xdg-open","args":["u"],"truncated":true}`},
		{sandbox.Capabilities{Levels: []record.Level{record.LevelEnvHome}, NetUnavailable: "why"}, `{"levels":["env+home"],"netUnavailable":"why"}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil || string(b) != c.want {
			t.Errorf("%T as JSON: %s (%v), want %s", c.v, b, err, c.want)
		}
	}
}

// TestCredentialNames: the credential classifier by name.
func TestCredentialNames(t *testing.T) {
	yes := []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GITHUB_TOKEN", "GH_PAT", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "GOOGLE_APPLICATION_CREDENTIALS", "CLAUDE_CODE_OAUTH_TOKEN", "AUGMENT_SESSION_AUTH", "SSH_AUTH_SOCK", "NPM_CONFIG__AUTH", "DB_PASSWORD", "CURSOR_API_KEY", "https_proxy", "ALL_PROXY", "XAUTHORITY", "MYAPIKEY", "KUBECONFIG"}
	no := []string{"PATH", "HOME", "LANG", "TERM", "PWD", "SHELL", "XDG_SESSION_TYPE", "TOKENIZERS_PARALLELISM", "KEYMAP", "EDITOR", "SSL_CERT_FILE", "NO_PROXY", "PASSAGE"}
	for _, n := range yes {
		if !sandbox.LooksLikeCredential(n) {
			t.Errorf("%s should look like a credential", n)
		}
	}
	for _, n := range no {
		if sandbox.LooksLikeCredential(n) {
			t.Errorf("%s should not look like a credential", n)
		}
	}
}

// TestAgentsData: every agent entry has a source, and its variables land inside HOME.
func TestAgentsData(t *testing.T) {
	agents := sandbox.Agents()
	if len(agents) < 9 {
		t.Fatalf("%d agents in env.json", len(agents))
	}
	names := map[string]bool{}
	for _, a := range agents {
		if a.Source == "" || len(a.RealHome) == 0 {
			t.Errorf("%s: no source or no realHome", a.Agent)
		}
		for k := range a.Env {
			if names[k] {
				t.Errorf("%s set twice", k)
			}
			names[k] = true
		}
	}
	for _, k := range []string{"CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "QWEN_HOME", "PI_CODING_AGENT_DIR", "CURSOR_CONFIG_DIR", "COPILOT_HOME"} {
		if !names[k] {
			t.Errorf("env.json does not set %s", k)
		}
	}
	sorted := append([]string(nil), sandbox.ShimPrograms...)
	sort.Strings(sorted)
	for _, p := range []string{"xdg-open", "open", "sensible-browser", "www-browser"} {
		if _, ok := slices.BinarySearch(sorted, p); !ok {
			t.Errorf("no shim for %s", p)
		}
	}
}

// userDir is a directory of the user's that an agent turns the sandbox against, holding one
// file and a bin directory; intact says whether they are as they were.
func userDir(t *testing.T) (dir string, intact func()) {
	t.Helper()
	dir = t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o750); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"precious.txt", "bin/tool"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("user data"), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	return dir, func() {
		t.Helper()
		for _, f := range []string{".", "bin"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o750 {
				t.Errorf("the user's %s: %v %v, want mode 0750 untouched", f, st, err)
			}
		}
		for _, f := range []string{"precious.txt", "bin/tool"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || string(b) != "user data" {
				t.Errorf("the user's %s: %q %v", f, b, err)
			}
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 2 {
			t.Errorf("the user's directory holds %d entries, want 2", len(entries))
		}
	}
}

// The agent replaces the sandbox root and its shims' directory with links to a directory of
// the user's: Close neither changes the mode of the target's bin nor removes or writes
// anything there, removes what it made through the directory it holds, and reports the two
// entries it had to leave (the link in its root's place, and its root emptied where the
// agent moved it). Before, Close made the user's bin 0700 and left the sandbox behind.
func TestHijackedSandboxRoot(t *testing.T) {
	outside, intact := userDir(t)
	for _, keep := range []bool{false, true} {
		t.Run(map[bool]string{false: "removed", true: "kept"}[keep], func(t *testing.T) {
			o := sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir()), Env: []string{"ACPPROBE_TEST_OUTSIDE=" + outside}}
			if keep {
				o.KeepDir = filepath.Join(t.TempDir(), "kept")
			}
			s, err := sandbox.New(o)
			if err != nil {
				t.Fatal(err)
			}
			root := s.Dir()
			t.Cleanup(func() { _ = os.Chmod(filepath.Join(root+".moved", "bin.moved"), 0o700) })
			runIn(t, s, "hijack")
			err = s.Close()
			intact()
			if keep {
				if err == nil {
					t.Error("Close of a kept sandbox whose bin was replaced by a link says nothing")
				}
				return
			}
			left := sandbox.Leftovers(err)
			if len(left) != 1 || left[0].Dir != root || left[0].Path != "." || !strings.Contains(left[0].Reason, "replaced") {
				t.Errorf("left %+v (%v), want the root's replaced entry", left, err)
			}
			if entries, err := os.ReadDir(root + ".moved"); err != nil || len(entries) != 0 {
				t.Errorf("the moved sandbox holds %v (%v), want it emptied", entries, err)
			}
		})
	}
}

// A file 200 directories below HOME (its path far longer than PATH_MAX) is in the report;
// one in a directory the agent made unreadable is not seen by an ordinary user, and the
// report says which directory it could not look into (before, the first was silently
// missing and the second only counted). Removal empties both.
func TestInventorySeesDeepAndSaysWhatItCouldNot(t *testing.T) {
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir()), Env: []string{"ACPPROBE_TEST_DEPTH=200"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := s.Snapshot()
	runIn(t, s, "deep")
	files := sandbox.Diff(before, s.Snapshot())
	want := "home" + strings.Repeat("/level-of-a-deep-tree", 200) + "/bottom.txt"
	var deep, hidden bool
	for _, c := range files.Changes {
		deep = deep || c.Path == want && c.Kind == "file" && c.Size == 3
		hidden = hidden || c.Path == "home/hidden/inside.txt"
	}
	if !deep {
		t.Errorf("the file 200 levels deep is not reported: %+v", files.Changes)
	}
	if os.Getuid() == 0 {
		if !hidden {
			t.Errorf("root lists an unreadable directory, yet its file is not reported: %+v", files.Changes)
		}
	} else if files.Unreadable != 1 || len(files.Unseen) != 1 || files.Unseen[0].Path != "home/hidden" || files.Unseen[0].Reason != "permission denied" {
		t.Errorf("unreadable %d, unseen %+v, want home/hidden named", files.Unreadable, files.Unseen)
	}
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if _, err := os.Lstat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("the sandbox is still there: %v", err)
	}
}
