package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/sandbox"
)

// agentEnv makes the test binary act as an agent (a hostile one) instead of running tests.
const agentEnv = "ACPPROBE_SANDBOX_TEST_AGENT"

func TestMain(m *testing.M) {
	sandbox.Init()
	notDumpable()
	if mode := os.Getenv(agentEnv); mode != "" {
		if err := runAgent(mode); err != nil {
			fmt.Fprintln(os.Stderr, "test agent:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// oddArgs are the arguments the attack agent gives xdg-open: a URL, quotes, a newline, an
// empty argument, printf directives and shell syntax that must stay text.
var oddArgs = []string{"https://accounts.example.com/o/oauth2/auth?client_id=1&state=x y", `it's "quoted"`, "line1\nline2", "", "%s%n%d\\0", "$(touch pwned) `touch pwned2` ; touch pwned3"}

// concurrentLaunches is how many xdg-open calls the attack agent makes at once.
const concurrentLaunches = 20

// agentReport is what the test agent prints on stdout.
type agentReport struct {
	Env     []string          `json:"env"`
	Cwd     string            `json:"cwd"`
	Net     map[string]string `json:"net,omitempty"`
	Launch  string            `json:"launch,omitempty"` // how the first xdg-open ended
	Browser string            `json:"browser,omitempty"`
	CapEff  string            `json:"capEff,omitempty"` // effective capabilities (/proc/self/status)
}

// runAgent is the test agent. Modes:
//   - attack: writes into $HOME, $XDG_CONFIG_HOME, $TMPDIR and the workspace, links to
//     $ACPPROBE_TEST_OUTSIDE, makes a FIFO, read-only and unreadable directories and a tree of
//     $ACPPROBE_TEST_TREE files, opens URLs (xdg-open, concurrently, and $BROWSER), and prints
//     its environment;
//   - quiet: writes three small files (benchmarks);
//   - deep: writes a file $ACPPROBE_TEST_DEPTH directories below $HOME, and one in a
//     directory it then makes unreadable;
//   - hijack: replaces the sandbox's root and its shims' directory with links to
//     $ACPPROBE_TEST_OUTSIDE (a directory of the user's), after filling the root;
//   - mount (as root): bind-mounts $ACPPROBE_TEST_OUTSIDE into $HOME and makes a file of
//     $HOME immutable;
//   - attack-lite: writes out.txt in the working directory;
//   - net: connects to 127.0.0.1:$ACPPROBE_TEST_PORT (served by the test), to
//     127.0.0.1:$ACPPROBE_TEST_HOSTPORT (a listener of the test's own network namespace) and
//     to 192.0.2.1:80, and reports each outcome.
func runAgent(mode string) error {
	rep := agentReport{Env: os.Environ()}
	rep.Cwd, _ = os.Getwd()
	home, cfg, tmp := os.Getenv("HOME"), os.Getenv("XDG_CONFIG_HOME"), os.Getenv("TMPDIR")
	write := func(path string, size int) error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return os.WriteFile(path, make([]byte, size), 0o644)
	}
	switch mode {
	case "quiet":
		for i, p := range []string{filepath.Join(home, ".quietrc"), filepath.Join(cfg, "quiet", "state.json"), filepath.Join(tmp, "quiet.tmp")} {
			if err := write(p, 10*(i+1)); err != nil {
				return err
			}
		}
		return nil
	case "deep":
		n, _ := strconv.Atoi(os.Getenv("ACPPROBE_TEST_DEPTH"))
		if err := os.Chdir(home); err != nil {
			return err
		}
		for i := 0; i < n; i++ { // relative steps: the whole path is longer than PATH_MAX
			if err := os.Mkdir("level-of-a-deep-tree", 0o700); err != nil {
				return err
			}
			if err := os.Chdir("level-of-a-deep-tree"); err != nil {
				return err
			}
		}
		if err := write("bottom.txt", 3); err != nil {
			return err
		}
		if err := write(filepath.Join(home, "hidden", "inside.txt"), 4); err != nil {
			return err
		}
		if err := os.Chmod(filepath.Join(home, "hidden"), 0); err != nil {
			return err
		}
	case "hijack":
		outside := os.Getenv("ACPPROBE_TEST_OUTSIDE")
		root := filepath.Dir(home)
		if err := write(filepath.Join(home, "a", "b", "c.txt"), 1); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(root, "bin"), filepath.Join(root, "bin.moved")); err != nil {
			return err
		}
		if err := os.Symlink(outside, filepath.Join(root, "bin")); err != nil {
			return err
		}
		if err := os.Rename(root, root+".moved"); err != nil {
			return err
		}
		if err := os.Symlink(outside, root); err != nil {
			return err
		}
	case "mount":
		if err := mountAttack(home, os.Getenv("ACPPROBE_TEST_OUTSIDE"), &rep); err != nil {
			return err
		}
	case "attack-lite": // one file in the working directory
		if err := write("out.txt", 7); err != nil {
			return err
		}
	case "sink":
		// What the network sink sees: a lookup, a connection to a sink port of an outside
		// address, and one to a port it does not answer.
		rep.Net = map[string]string{}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, err := net.DefaultResolver.LookupHost(ctx, "acpprobe-sink-test.example"); err != nil {
			rep.Net["lookup"] = "error: " + err.Error()
		}
		for name, addr := range map[string]string{"443": "192.0.2.7:443", "8080": "192.0.2.7:8080"} {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				rep.Net[name] = "error: " + err.Error()
				continue
			}
			c.Close()
			rep.Net[name] = "connected"
		}
	case "net":
		rep.Net = map[string]string{}
		try := func(name, addr string) {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				rep.Net[name] = "error: " + err.Error()
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 64)
			n, _ := c.Read(buf)
			rep.Net[name] = "read: " + string(buf[:n])
		}
		try("served", "127.0.0.1:"+os.Getenv("ACPPROBE_TEST_PORT"))
		try("host", "127.0.0.1:"+os.Getenv("ACPPROBE_TEST_HOSTPORT"))
		try("outside", "192.0.2.1:80")
		if b, err := os.ReadFile("/proc/self/status"); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
					rep.CapEff = strings.TrimSpace(v)
				}
			}
		}
	case "attack":
		for _, f := range []struct {
			path string
			size int
		}{
			{filepath.Join(home, ".agentrc"), 5},
			{filepath.Join(cfg, "agent", "config.json"), 123},
			{filepath.Join(tmp, "scratch.bin"), 4096},
			{"out.txt", 7}, // the workspace is the working directory
			{filepath.Join(home, "ro", "inside.txt"), 1},
			{filepath.Join(home, "locked", "secret.txt"), 2},
		} {
			if err := write(f.path, f.size); err != nil {
				return err
			}
		}
		if err := os.Symlink(os.Getenv("ACPPROBE_TEST_OUTSIDE"), filepath.Join(home, "escape")); err != nil {
			return err
		}
		if err := syscall.Mkfifo(filepath.Join(tmp, "pipe"), 0o600); err != nil {
			return err
		}
		n, _ := strconv.Atoi(os.Getenv("ACPPROBE_TEST_TREE"))
		for i := 0; i < n; i++ {
			if err := write(filepath.Join(home, "tree", fmt.Sprintf("d%03d", i/100), fmt.Sprintf("f%03d", i%100)), 1); err != nil {
				return err
			}
		}
		for _, d := range []struct {
			name string
			mode os.FileMode
		}{{"ro", 0o500}, {"locked", 0}} {
			if err := os.Chmod(filepath.Join(home, d.name), d.mode); err != nil {
				return err
			}
		}
		err := exec.Command("xdg-open", oddArgs...).Run()
		rep.Launch = fmt.Sprint(err)
		var wg sync.WaitGroup
		for i := 0; i < concurrentLaunches; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = exec.Command("xdg-open", "https://example.com/"+strconv.Itoa(i)).Run()
			}()
		}
		wg.Wait()
		err = exec.Command(os.Getenv("BROWSER"), "https://example.com/browser").Run()
		rep.Browser = fmt.Sprint(err)
	default:
		return fmt.Errorf("unknown mode %q", mode)
	}
	return json.NewEncoder(os.Stdout).Encode(rep)
}
