//go:build linux

package sandbox_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// TestRealAgents runs the pinned real agents (claude-agent-acp, codex-acp, gemini --acp) for a
// plain ACP handshake (initialize, session/new) inside a sandbox, at each level available, and
// logs what each one wrote, its launches and the costs. Opt-in: ACPPROBE_E2E=1, with the
// agents from scripts/install-e2e-agents.sh (or ACPPROBE_AGENTS_BIN naming their bin
// directory). It asserts what the sandbox promises: nothing in the (fake) real HOME, nothing
// left running, the sandbox removed.
func TestRealAgents(t *testing.T) {
	if os.Getenv("ACPPROBE_E2E") != "1" {
		t.Skip("real agents: set ACPPROBE_E2E=1")
	}
	bin := os.Getenv("ACPPROBE_AGENTS_BIN")
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		bin = filepath.Join(filepath.Dir(filepath.Dir(file)), "e2e", ".agents", "node_modules", ".bin")
	}
	levels := []bool{false}
	if sandbox.Available().Net {
		levels = append(levels, true)
	}
	for _, agent := range [][]string{{"claude-agent-acp"}, {"codex-acp"}, {"gemini", "--acp"}} {
		for _, netLevel := range levels {
			name := agent[0] + "/env+home"
			if netLevel {
				name = agent[0] + "/net"
			}
			t.Run(name, func(t *testing.T) {
				argv := append([]string{filepath.Join(bin, agent[0])}, agent[1:]...)
				if _, err := os.Stat(argv[0]); err != nil {
					t.Fatalf("%v: run scripts/install-e2e-agents.sh", err)
				}
				realAgent(t, argv, netLevel, 90*time.Second, nil)
			})
		}
		t.Run(agent[0]+"/no-isolate", func(t *testing.T) {
			realAgentNoIsolate(t, append([]string{filepath.Join(bin, agent[0])}, agent[1:]...))
		})
	}
	// A logged-out gemini whose settings chose "Log in with Google" opens a browser login on
	// session/new when it believes a desktop is there: the shims must record it.
	t.Run("gemini/oauth-selected", func(t *testing.T) {
		launches := realAgent(t, []string{filepath.Join(bin, "gemini"), "--acp"}, false, 20*time.Second, func(s *sandbox.Sandbox) {
			settings := filepath.Join(s.Home(), ".gemini", "settings.json")
			if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(settings, []byte(`{"security":{"auth":{"selectedType":"oauth-personal"}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
		})
		if len(launches) != 1 || launches[0].Program != "xdg-open" || len(launches[0].Args) != 1 || !strings.HasPrefix(launches[0].Args[0], "https://accounts.google.com/") {
			t.Errorf("launches %+v, want one xdg-open of the Google login", launches)
		}
	})
}

// realAgent runs argv for a handshake in a fresh sandbox (prepared by setup, when given, which
// also turns the fake display on), waiting budget for each answer, and returns the launches
// recorded.
func realAgent(t *testing.T, argv []string, netLevel bool, budget time.Duration, setup func(*sandbox.Sandbox)) []sandbox.Launch {
	fakeHome := t.TempDir()
	host := []string{"HOME=" + fakeHome}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HOME=") {
			host = append(host, kv)
		}
	}
	t0 := time.Now()
	s, err := sandbox.New(sandbox.Options{Environ: host, Net: netLevel, FakeDisplay: setup != nil})
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	before := s.Snapshot()
	setupCost := time.Since(t0)
	defer func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if _, err := os.Lstat(s.Dir()); !os.IsNotExist(err) {
			t.Errorf("sandbox left behind: %v", err)
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.Prepare(cmd); err != nil {
		t.Fatal(err)
	}
	h := handshake(t, cmd, s.Workspace(), s.Home(), budget)

	t2 := time.Now()
	files := sandbox.Diff(before, s.Snapshot())
	launches, _, err := s.BrowserLaunches()
	if err != nil {
		t.Error(err)
	}
	inventory := time.Since(t2)
	t.Logf("level %s; initialize: %s", s.Level(), h.initialize)
	t.Logf("session/new: %s", h.newSession)
	t.Logf("costs: setup+first snapshot %v, handshake %v, final snapshot+diff+launches %v", setupCost, h.took, inventory)
	t.Logf("dropped credentials %v; launches %d; escaped the group and killed: %v", s.EnvReport().DroppedCredentials, len(launches), h.escaped)
	logFiles(t, files)
	if entries, _ := os.ReadDir(fakeHome); len(entries) != 0 {
		t.Errorf("the real HOME got %d entries", len(entries))
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("stderr (last 2 KiB): %s", tail(h.stderr, 2048))
	}
	return launches
}

// realAgentNoIsolate runs argv for a handshake with a (fake) real HOME and no sandbox, the
// browser shims alone in force, as probe and check run by default. The places env.json
// lists under a real HOME must hold everything the agent wrote there.
func realAgentNoIsolate(t *testing.T, argv []string) {
	home, work := t.TempDir(), t.TempDir()
	shims, err := sandbox.NewTempShims()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shims.Remove() })
	env := []string{"HOME=" + home}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k != "HOME" && k != "IS_SANDBOX" && !strings.HasPrefix(k, "XDG_") && !strings.HasSuffix(k, "_HOME") && k != "CLAUDE_CONFIG_DIR" {
			env = append(env, kv)
		}
	}
	env = shims.Env(env)
	paths := sandbox.HomePaths(home, env)
	t0 := time.Now()
	before := sandbox.SnapshotHome(home, paths, 0)
	first := time.Since(t0)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Dir = env, work
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	h := handshake(t, cmd, work, home, 90*time.Second)
	t1 := time.Now()
	files := sandbox.Diff(before, sandbox.SnapshotHome(home, paths, 0))
	t.Logf("initialize: %s; session/new: %s", cut(h.initialize, 40), h.newSession)
	t.Logf("costs: first snapshot %v, handshake %v, second snapshot+diff %v (%d places watched)", first, h.took, time.Since(t1), len(paths))
	logFiles(t, files)
	everything := sandbox.Diff(sandbox.SnapshotHome(home, nil, 0), sandbox.SnapshotHome(home, []string{home}, 0))
	watched := files.Watched
	for _, c := range everything.Changes {
		inside := false
		for _, w := range watched {
			if c.Path == w || strings.HasPrefix(c.Path, w+"/") {
				inside = true
			}
		}
		if !inside {
			t.Errorf("%s wrote %s, which no place of env.json covers", filepath.Base(argv[0]), c.Path)
		}
	}
}

// handshakeResult is what handshake saw.
type handshakeResult struct {
	initialize, newSession, stderr string
	took                           time.Duration
	escaped                        []string
}

// handshake starts cmd, sends initialize and session/new (cwd), ends the agent (stdin EOF, then
// SIGTERM and SIGKILL to its group) and kills what escaped the group, found by HOME=home in its
// environment.
func handshake(t *testing.T, cmd *exec.Cmd, cwd, home string, budget time.Duration) handshakeResult {
	var h handshakeResult
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t1 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan map[string]json.RawMessage, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				lines <- m
			}
		}
		close(lines)
	}()
	call := func(id int, method, params string) string {
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		timeout := time.After(budget)
		for {
			select {
			case m, ok := <-lines:
				if !ok {
					return "stdout closed"
				}
				if string(m["id"]) != strconv.Itoa(id) {
					continue
				}
				if e, ok := m["error"]; ok {
					return "error " + cut(string(e), 200)
				}
				return "result " + cut(string(m["result"]), 120)
			case <-timeout:
				return "no answer in " + budget.String()
			}
		}
	}
	h.initialize = call(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{}}`)
	h.newSession = "not sent"
	if strings.HasPrefix(h.initialize, "result") {
		dir, _ := json.Marshal(cwd)
		h.newSession = call(2, "session/new", `{"cwd":`+string(dir)+`,"mcpServers":[]}`)
	}
	h.took = time.Since(t1)
	stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(3 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the rest of the group
	// What still carries HOME after the group is gone escaped the group.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		left := sweep(home, cmd.Process.Pid)
		if len(left) == 0 {
			break
		}
		h.escaped = left
	}
	if left := sweep(home, cmd.Process.Pid); len(left) > 0 {
		t.Errorf("still running after the sweep: %v", left)
	}
	h.stderr = stderr.String()
	return h
}

// logFiles logs a file report, one change a line.
func logFiles(t *testing.T, files record.Files) {
	t.Logf("files: %d created, %d changed, %d deleted, %d entries walked", files.Created, files.Changed, files.Deleted, files.Walked)
	var total int64
	for _, c := range files.Changes {
		total += c.Size
		target := ""
		if c.Target != "" {
			target = " -> " + c.Target
		}
		t.Logf("  %-8s %-7s %9d %s%s", c.Change, c.Kind, c.Size, c.Path, target)
	}
	t.Logf("  total %d bytes", total)
}

// sweep kills every process whose environment holds the sandbox HOME and is not in process
// group pgid (which the caller killed already), and returns them.
func sweep(home string, pgid int) []string {
	want := []byte("HOME=" + home)
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
				stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
				group, sid := "?", "?"
				if i := bytes.LastIndexByte(stat, ')'); i > 0 {
					if f := strings.Fields(string(stat[i+1:])); len(f) > 3 {
						group, sid = f[2], f[3]
					}
				}
				if group == strconv.Itoa(pgid) {
					break // dying with its group
				}
				name := strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))
				found = append(found, fmt.Sprintf("pid %s (pgid %s, sid %s): %s", e.Name(), group, sid, cut(name, 100)))
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
	return found
}

// cut keeps the first n bytes of s; tail the last n.
func cut(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
