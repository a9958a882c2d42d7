package acpprobe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
)

// agentEnv makes this test binary run as the reference agent.
const agentEnv = "ACPPROBE_ROOT_TEST_AGENT"

func TestMain(m *testing.M) {
	sandbox.Init() // the namespace helper of the net level is this binary, re-executed
	if os.Getenv(killedProbeEnv) != "" && os.Getenv(agentEnv) == "" {
		os.Exit(killedProbe()) // not its agent, which inherits the variable
	}
	if os.Getenv(agentEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := acptest.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// agentCommand launches this test binary as the reference agent with cfg.
func agentCommand(t testing.TB, cfg acptest.Config) transport.Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A -race binary sleeps a second at exit unless told not to.
	return transport.Command{Argv: append([]string{exe}, cfg.Args()...), Env: []string{agentEnv + "=1", "GORACE=atexit_sleep_ms=0"}}
}

// fakeUser is a user's world for a test: a HOME, a TMPDIR, and the environment naming them.
type fakeUser struct {
	home, tmp string
	environ   []string
}

func newFakeUser(t *testing.T, extra ...string) fakeUser {
	u := fakeUser{home: t.TempDir(), tmp: t.TempDir()}
	u.environ = append([]string{"HOME=" + u.home, "TMPDIR=" + u.tmp, "XDG_CONFIG_HOME=" + filepath.Join(u.home, ".config"),
		"PATH=" + os.Getenv("PATH")}, extra...)
	return u
}

// entries lists what lies under dir (relative paths), or fails.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// carrying lists the live processes whose environment holds entry, polling briefly so that
// processes just killed are gone. Linux only (nil elsewhere).
func carrying(entry string) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if left := carriers(entry); len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// carriers lists the live processes whose environment holds entry now.
func carriers(entry string) []string {
	want := []byte(entry)
	var left []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil || d.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", d.Name(), "environ"))
		if err == nil && slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return bytes.Equal(kv, want) }) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
			left = append(left, d.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return left
}

func runProbe(t *testing.T, o acpprobe.Options) (*report.Result, *jsonrpc.Log) {
	t.Helper()
	if o.Probe.Log == nil {
		o.Probe.Log = jsonrpc.NewLog()
	}
	o.Probe.Timeout, o.Probe.Grace = 60*time.Second, time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := acpprobe.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	return r, o.Probe.Log
}

func findingIDs(r *report.Result) []string {
	var ids []string
	for _, f := range r.Findings {
		ids = append(ids, f.ID)
	}
	return ids
}

// TestIsolateContainsSideEffects runs the side-effects fault under check --isolate (and
// --isolate=net where it works): every effect shows in the report — its files with their
// sizes, the login it opened (redacted, before any authenticate: a finding), the setsid
// daemon and the child its session/load leaked (found at each step of the teardown, killed:
// leftover-processes) — nothing lands in the user's HOME or TMPDIR, nothing survives, and
// the sandbox is gone.
func TestIsolateContainsSideEffects(t *testing.T) {
	levels := []bool{false}
	if sandbox.Available().Net {
		levels = append(levels, true)
	}
	for _, netLevel := range levels {
		name := map[bool]string{false: "env+home", true: "net"}[netLevel]
		t.Run(name, func(t *testing.T) {
			u := newFakeUser(t)
			parent := t.TempDir()
			// Only where the network is cut may the agent use it: its lookup and connection
			// then reach the sink, and nothing else.
			cfg := acptest.Config{Persona: "claude", Stress: acptest.Stress{SideEffects: true, NetEffects: netLevel}}
			r, log := runProbe(t, acpprobe.Options{Probe: probe.Options{Launcher: agentCommand(t, cfg)}, Check: &acpprobe.Check{Deep: true},
				Isolate: &sandbox.Options{Parent: parent, Environ: u.environ, Net: netLevel, NetSink: netLevel}})
			se := r.SideEffects
			if se == nil {
				t.Fatal("no sideEffects in the result")
			}
			if string(se.Isolation.Level) != name {
				t.Errorf("isolation level %q, want %q", se.Isolation.Level, name)
			}
			// Its files, by sandbox label, with their sizes.
			want := map[string]bool{"home/.acptest/state.json": true, "home/.config/acptest/config.json": true, "tmp/acptest-side-effect.tmp": true}
			for _, c := range se.Files.Changes {
				if want[c.Path] && c.Change == "created" && c.Kind == "file" && c.Size == 44 {
					delete(want, c.Path)
				}
			}
			if len(want) > 0 {
				t.Errorf("files %+v miss %v", se.Files.Changes, want)
			}
			// The login it opened, redacted, before any authenticate: a finding.
			b := se.Browser
			if !b.Shimmed || len(b.Launches) != 1 || b.BeforeAuthenticate != 1 || b.Launches[0].Program != "xdg-open" ||
				b.Launches[0].URL != "https://login.acptest.invalid/oauth/authorize?…" || !b.Launches[0].BeforeAuthenticate {
				t.Errorf("browser %+v, want the one xdg-open of the login, redacted", b)
			}
			if !slices.Contains(findingIDs(r), "side-effects.browser-launch") || !slices.Contains(findingIDs(r), "protocol.leftover-processes") {
				t.Errorf("findings %v, want side-effects.browser-launch and protocol.leftover-processes", findingIDs(r))
			}
			doc, _ := json.Marshal(r)
			if bytes.Contains(doc, []byte("s3cr3t")) {
				t.Error("the login URL's secret-looking query reached the report")
			}
			// A child per session/load, and the daemon: alive after the stdin wait, killed
			// after the ladder, the daemon seen outside the group.
			loads := 0
			for _, ex := range record.New(log.Frames()).Calls(jsonrpc.DirClient) {
				if ex.Method() == acp.MethodSessionLoad {
					loads++
				}
			}
			p := se.Processes
			inGroup, outside := 0, 0
			for _, s := range p.AfterTeardown {
				if s.Command != "sleep" || !s.Killed {
					t.Errorf("survivor %+v", s)
				}
				if s.LeftGroup {
					outside++
				} else {
					inGroup++
				}
			}
			if loads == 0 || inGroup != loads || outside != 1 {
				t.Errorf("%d session/load requests; survivors %d in the group, %d outside; want one per load and the daemon", loads, inGroup, outside)
			}
			if p.AfterStdinEOF == nil || !p.AfterStdinEOF.AgentExited || len(p.AfterStdinEOF.Processes) != loads+1 {
				t.Errorf("after stdin EOF %+v, want the agent gone and its %d processes there", p.AfterStdinEOF, loads+1)
			}
			if len(p.Escaped) != 1 || p.Escaped[0].Command != "sleep" {
				t.Errorf("escaped %+v, want the setsid daemon", p.Escaped)
			}
			n := se.Network
			if netLevel {
				want := []record.Connect{{Host: "192.0.2.9", Port: 443, Count: 1}}
				if !n.Observed || !slices.Equal(n.Lookups, []string{acptest.NetEffectsHost}) || !slices.Equal(n.Connects, want) {
					t.Errorf("network %+v, want the lookup of %s and the connection to %s observed", n, acptest.NetEffectsHost, acptest.NetEffectsAddr)
				}
			} else if n.Observed || !strings.HasPrefix(n.Note, "not observed") {
				t.Errorf("network %+v, want not observed", n)
			}
			// check's extra connections ran in the sandbox too (at the net level, in namespaces
			// of their own): the deep probe was answered, the fork probe too.
			conns := record.Split(log.Frames())
			for _, purpose := range []record.Purpose{record.PurposeDeep, record.PurposeForkProbe} {
				x := record.New(conns.Of(purpose))
				if ex := x.First(acp.MethodInitialize); ex == nil || ex.Answer == nil {
					t.Errorf("the %s connection got no initialize answer", purpose)
				}
			}
			for _, f := range r.Findings {
				if f.ID == "protocol.version-negotiation" {
					t.Errorf("finding %s: %s", f.ID, f.Message)
				}
			}
			// Nothing landed outside, nothing survives, the sandbox is gone.
			if got := append(entries(t, u.home), entries(t, u.tmp)...); len(got) > 0 {
				t.Errorf("the user's HOME and TMPDIR got %v", got)
			}
			home := filepath.Join(filepath.Dir(r.Agent.Cwd), "home")
			if left := carrying("HOME=" + home); len(left) > 0 {
				t.Errorf("processes of the sandbox survived: %v", left)
			}
			if got := entries(t, parent); len(got) > 0 {
				t.Errorf("the sandbox was left behind: %v", got)
			}
		})
	}
}

// An isolated agent that writes past its sandbox, by absolute path, into the places agents
// keep their state in the user's real HOME: the report lists the write (before, --isolate
// compared the sandbox only, and the report said nothing of it).
func TestIsolateSeesWritesToTheRealHome(t *testing.T) {
	u := newFakeUser(t)
	agent := agentCommand(t, acptest.Config{Persona: "claude"})
	// The agent learns the real HOME (given on purpose here; a hostile one guesses it).
	agent.Argv = append([]string{"/bin/sh", "-c", `mkdir -p "$REAL_HOME/.claude" && echo planted > "$REAL_HOME/.claude/planted" && exec "$0" "$@"`}, agent.Argv...)
	agent.Env = append(agent.Env, "REAL_HOME="+u.home)
	r, _ := runProbe(t, acpprobe.Options{Probe: probe.Options{Launcher: agent},
		Isolate: &sandbox.Options{Parent: t.TempDir(), Environ: u.environ}})
	se := r.SideEffects
	if se == nil || se.Files == nil || se.Isolation.Level != record.LevelEnvHome {
		t.Fatalf("sideEffects %+v, want env+home with files", se)
	}
	found := false
	for _, c := range se.Files.Changes {
		found = found || c.Path == "~/.claude/planted" && c.Change == "created" && c.Kind == "file" && c.Size == 8
	}
	if !found || !slices.Contains(se.Files.Watched, "~/.claude") || !slices.Contains(se.Files.Watched, "home") {
		t.Errorf("files %+v, want the write to ~/.claude/planted beside the sandbox's", se.Files)
	}
}

// killedProbeEnv runs this test binary as a probe that will be SIGKILLed: "isolate" (its
// sandbox under $ACPPROBE_ROOT_TEST_PARENT) or "none" (the shims' directory in $TMPDIR).
const killedProbeEnv = "ACPPROBE_ROOT_TEST_KILLED_PROBE"

// killedProbe probes an agent that hangs at session/new, until it is killed.
func killedProbe() int {
	exe, _ := os.Executable()
	cmd := transport.Command{Argv: append([]string{exe}, acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: acp.MethodSessionNew}}.Args()...),
		Env: []string{agentEnv + "=1", "GORACE=atexit_sleep_ms=0"}}
	o := acpprobe.Options{Probe: probe.Options{Launcher: cmd, Timeout: time.Minute}}
	if os.Getenv(killedProbeEnv) == "isolate" {
		o.Isolate = &sandbox.Options{Parent: os.Getenv("ACPPROBE_ROOT_TEST_PARENT")}
	}
	_, _ = acpprobe.Run(context.Background(), o)
	return 0
}

// kill -9 of acpprobe during a run leaves neither its sandbox nor its shims' directory: the
// watchdog removes them (before, both were left behind).
func TestKilledProbeLeavesNoDirectories(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the watchdog is Linux's")
	}
	for _, level := range []string{"isolate", "none"} {
		t.Run(level, func(t *testing.T) {
			dir := t.TempDir()
			exe, _ := os.Executable()
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), killedProbeEnv+"="+level, "ACPPROBE_ROOT_TEST_PARENT="+dir, "TMPDIR="+dir, "GORACE=atexit_sleep_ms=0")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Wait()
			defer cmd.Process.Kill()
			// The probe's directory is there, and its agent hangs (no event says so).
			deadline := time.Now().Add(30 * time.Second)
			top := func() []os.DirEntry { e, _ := os.ReadDir(dir); return e } // the watchdog removes beneath as it is read
			for len(top()) == 0 || !hasChild(cmd.Process.Pid, "--hang-on") {
				if time.Now().After(deadline) {
					t.Fatalf("the probe made nothing in %s", dir)
				}
				time.Sleep(5 * time.Millisecond)
			}
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			for left := top(); len(left) > 0; left = top() {
				if time.Now().After(deadline) {
					t.Fatalf("the SIGKILLed probe left %s", left[0].Name())
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// hasChild reports whether a child of pid (of any of its threads) has arg in its command line.
func hasChild(pid int, arg string) bool {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		for _, child := range strings.Fields(string(b)) {
			if cmdline, _ := os.ReadFile("/proc/" + child + "/cmdline"); bytes.Contains(cmdline, []byte(arg)) {
				return true
			}
		}
	}
	return false
}

// TestUnisolatedSideEffects runs the side-effects fault with the user's HOME, as probe does
// by default: the files in the places agents keep their state there are reported, and those
// in places no table lists (a new entry of HOME, one of ~/.local/state), the login is
// intercepted by the shims, the processes are killed.
func TestUnisolatedSideEffects(t *testing.T) {
	u := newFakeUser(t)
	cmd := agentCommand(t, acptest.Config{Persona: "claude", Stress: acptest.Stress{SideEffects: true}})
	cmd.Environ = u.environ
	tmp := t.TempDir() // where Run makes the shims' directory
	t.Setenv("TMPDIR", tmp)
	r, _ := runProbe(t, acpprobe.Options{Probe: probe.Options{Launcher: cmd, Cwd: t.TempDir()}})
	if left := entries(t, tmp); len(left) > 0 {
		t.Errorf("Run returned with %v left in TMPDIR: the shims' directory must be gone", left)
	}
	se := r.SideEffects
	if se == nil || se.Isolation.Level != record.LevelNone || se.Files == nil {
		t.Fatalf("sideEffects %+v, want level none with files", se)
	}
	var got []string
	for _, c := range se.Files.Changes {
		got = append(got, c.Change+" "+c.Path)
	}
	if want := []string{"created ~/.acptest-unlisted/cache.db", "created ~/.acptest/state.json", "created ~/.config/acptest/config.json",
		"created ~/.local/state/acptest-unlisted/run.log"}; !slices.Equal(got, want) {
		t.Errorf("files %v, want %v", got, want)
	}
	if len(se.Browser.Launches) != 1 || !se.Browser.Shimmed {
		t.Errorf("browser %+v, want the login intercepted", se.Browser)
	}
	if se.Network.Observed || !strings.HasPrefix(se.Network.Note, "not observed") {
		t.Errorf("network %+v, want not observed", se.Network)
	}
	if left := carrying("HOME=" + u.home); len(left) > 0 {
		t.Errorf("processes survived: %v", left)
	}
}

// TestAuthAB classifies the reference agent's authentication from the user's identity and an
// empty one, isolated, with every signal of both; the credential's value reaches nothing.
func TestAuthAB(t *testing.T) {
	const secret = "acptest-secret-value-0123456789"
	cases := []struct {
		name     string
		cfg      acptest.Config
		userEnv  []string
		isolate  bool // the main run is isolated: the user's identity is the second run
		want     report.AuthClass
		evidence []string
	}{
		{"no auth needed", acptest.Config{Persona: "claude"}, nil, false, report.AuthClassNoAuthNeeded,
			[]string{"isolated (env+home): session/new succeeded"}},
		{"auth required", acptest.Config{Persona: "codex"}, nil, false, report.AuthClassRequired,
			[]string{"user (none): session/new answered an authentication error: -32000 Authentication required"}},
		{"authenticated", acptest.Config{Persona: "gemini", Faults: acptest.Faults{RequireAuthEnv: "ACPTEST_API_KEY"}},
			[]string{"ACPTEST_API_KEY=" + secret}, false, report.AuthClassAuthenticated,
			[]string{"user (none): session/new succeeded", `user (none): asked for its login state, it answered "authenticated"`,
				"user (none): credential variables present (names only): ACPTEST_API_KEY",
				`isolated (env+home): asked for its login state, it answered "unauthenticated"`, "isolated (env+home): auth status updates unauthenticated"}},
		{"authenticated, isolated first", acptest.Config{Persona: "gemini", Faults: acptest.Faults{RequireAuthEnv: "ACPTEST_API_KEY"}},
			[]string{"ACPTEST_API_KEY=" + secret}, true, report.AuthClassAuthenticated,
			[]string{"user (none): session/new succeeded", "isolated (env+home): no credential variable"}},
		{"hidden auth", acptest.Config{Persona: "claude", Faults: acptest.Faults{RequireAuthEnv: "ACPTEST_API_KEY"}}, nil, false, report.AuthClassHidden,
			[]string{"it refuses for lack of a login, yet advertises no authMethods"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			u := newFakeUser(t, tc.userEnv...)
			cmd := agentCommand(t, tc.cfg)
			cmd.Environ = u.environ // the user's identity: the user's environment
			o := acpprobe.Options{AuthAB: true, Probe: probe.Options{Launcher: cmd, Cwd: t.TempDir()}}
			if tc.isolate {
				o.Isolate = &sandbox.Options{Parent: t.TempDir(), Environ: u.environ}
				o.Probe.Cwd = ""
			}
			r, log := runProbe(t, o)
			ab := r.AuthAB
			if ab == nil {
				t.Fatal("no authAB in the result")
			}
			if ab.Status != tc.want {
				t.Errorf("status %s, want %s; evidence:\n%s", ab.Status, tc.want, strings.Join(ab.Evidence, "\n"))
			}
			for _, e := range tc.evidence {
				if !slices.Contains(ab.Evidence, e) {
					t.Errorf("evidence lacks %q:\n%s", e, strings.Join(ab.Evidence, "\n"))
				}
			}
			if len(ab.Identities) != 2 || ab.Identities[0].Identity != record.IdentityUser || ab.Identities[1].Identity != record.IdentityIsolated {
				t.Errorf("identities %+v, want the user's, then the isolated one", ab.Identities)
			}
			doc, _ := json.Marshal(r)
			leaked := bytes.Contains(doc, []byte(secret))
			for _, f := range log.Frames() {
				leaked = leaked || bytes.Contains(f.Raw, []byte(secret))
			}
			if leaked {
				t.Error("the credential's value reached the report or the record")
			}
			for _, ex := range record.New(log.Frames()).Calls(jsonrpc.DirClient) {
				if ex.Method() == acp.MethodAuthenticate || ex.Method() == acp.MethodLogout {
					t.Errorf("the probe called %s", ex.Method())
				}
			}
		})
	}
}

// TestFloodKeepsWhatTheRunDid (issue 24): an agent that floods past the record's budget
// (100,000 notifications through a 1 MiB record) and also writes into its HOME and leaves a
// setsid daemon. The flood is folded and said (coverage), and what the run did is all still
// reported: its files, its survivor, and no "truncated" error, since a live run that folded
// frames is not a transcript cut short.
func TestFloodKeepsWhatTheRunDid(t *testing.T) {
	u := newFakeUser(t)
	cfg := acptest.Config{Persona: "claude", Stress: acptest.Stress{SideEffects: true, Notifications: 100_000}}
	r, _ := runProbe(t, acpprobe.Options{Probe: probe.Options{Launcher: agentCommand(t, cfg), MaxRecord: 1 << 20},
		Isolate: &sandbox.Options{Parent: t.TempDir(), Environ: u.environ}})
	if c := r.Coverage; c == nil || c.FoldedFrames < 90_000 {
		t.Fatalf("coverage = %+v, want the flood folded", c)
	}
	if r.Error != nil {
		t.Errorf("error = %+v, want none: the run was whole, only its record folded", r.Error)
	}
	se := r.SideEffects
	if se == nil || se.Files == nil || !slices.ContainsFunc(se.Files.Changes, func(c record.FileChange) bool {
		return c.Path == "home/.acptest/state.json" && c.Change == "created"
	}) {
		t.Errorf("side effects %+v, want the file the agent created", se)
	}
	if r.Exit == nil || !slices.ContainsFunc(r.Exit.Survivors, func(s record.Survivor) bool { return s.LeftGroup && s.Killed }) {
		t.Errorf("exit %+v, want the setsid daemon killed and reported", r.Exit)
	}
}
