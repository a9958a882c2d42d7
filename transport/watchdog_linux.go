package transport

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The watchdog is this executable run again with argv exactly [watchdogName] and
// watchdogEnv=<run>:<since> in its environment (see the package doc).
const (
	watchdogName = "acpprobe-watchdog"
	watchdogEnv  = "ACPPROBE_WATCHDOG"
	// watchdogBound bounds the watchdog's killing once the host has gone.
	watchdogBound = 5 * time.Second
)

func init() {
	if len(os.Args) == 1 && os.Args[0] == watchdogName {
		if arg, ok := os.LookupEnv(watchdogEnv); ok {
			os.Exit(watch(arg))
		}
	}
}

var watchdog struct {
	mu      sync.Mutex
	running bool
	err     error    // why it could not start; sticky, so a broken setup is not retried per launch
	hostEnd *os.File // write end of the pipe the watchdog waits on; open while the host lives
}

// StartWatchdog starts the watchdog of this host process unless it runs already, and
// returns once it is armed (it will act on the host's end from now on), or why it could not
// start. Command.Launch calls it before it starts the agent, so the first launch waits for
// the watchdog's exec (about half a millisecond) unless it was started earlier: a program
// that will launch agents calls it on a goroutine of its own as soon as it knows (acpprobe's
// CLI does, before it parses its flags), so that the exec and the watchdog's start-up overlap
// the program's own preparations instead of the agent's start.
func StartWatchdog() error {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	if watchdog.running || watchdog.err != nil {
		return watchdog.err
	}
	cmd, w, err := spawnWatchdog()
	if err != nil {
		watchdog.err = err
		return err
	}
	watchdog.running, watchdog.hostEnd = true, w
	go func() {
		_ = cmd.Wait() // the watchdog never ends before the host unless killed: start another
		watchdog.mu.Lock()
		watchdog.running = false
		watchdog.hostEnd.Close()
		watchdog.mu.Unlock()
	}()
	return nil
}

// spawnWatchdog starts a watchdog; it acts when w is closed.
func spawnWatchdog() (cmd *exec.Cmd, w *os.File, err error) {
	r, w, err := os.Pipe() // O_CLOEXEC: no agent inherits an end
	if err != nil {
		return nil, nil, err
	}
	var sc scanner
	self, _ := sc.stat(os.Getpid())
	// Not the markers the host may carry (when it is itself an agent's descendant, as a tap
	// under a probe): the watchdog ends with its host by design, and is not a process of the
	// outer agent for the outer host's sweep to report.
	env := []string{watchdogEnv + "=" + runToken() + ":" + strconv.FormatUint(self.start, 10),
		"GORACE=atexit_sleep_ms=0"}
	cmd = &exec.Cmd{
		Path: "/proc/self/exe", // the running image, even if its file was replaced or removed
		Args: []string{watchdogName},
		Env:  env,
		Dir:  "/",
		// Stdout and stderr are /dev/null: the watchdog must not hold the host's pipes (an
		// editor waiting for a tap's output to end, go test for a test binary's).
		Stdin: r,
		// Its own session: no terminal signal and no signal to the host's group reaches it,
		// and when the host is itself an agent (a tap under a probe) the watchdog is not in
		// that agent's session, so the outer host's sweep does not list it while it finishes.
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start() // returns once the exec has succeeded: the watchdog holds r from here
	r.Close()
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	return cmd, w, nil
}

// watch is the watchdog's life: it waits for the host's end (EOF on stdin), then kills
// every process of the host's run.
func watch(arg string) int {
	run, since, ok := strings.Cut(arg, ":")
	floor, err := strconv.ParseUint(since, 10, 64)
	if !ok || err != nil || len(run) != 16 || strings.Trim(run, "0123456789abcdef") != "" {
		return 2
	}
	// Exec'd as /proc/self/exe, the kernel names it "exe": give ps and top a better name.
	_ = os.WriteFile("/proc/self/comm", []byte(watchdogName), 0)
	buf := make([]byte, 512)
	for {
		if _, err := os.Stdin.Read(buf); err != nil {
			break
		}
	}
	k := killer{match: runMatcher(run, floor)}
	defer k.close()
	if n, _ := k.find(); n == 0 {
		return 0
	}
	_ = k.killAll()
	if !k.waitGone(context.Background(), time.Now().Add(watchdogBound), nil) {
		return 1
	}
	return 0
}
