package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// measure runs argv once in dir with env and returns what it cost.
func measure(argv []string, dir string, env []string, work, bin string, useShim bool, timeout time.Duration, variant string) Run {
	report := filepath.Join(work, "shim-report")
	_ = os.Remove(report)
	if useShim {
		// Insert the shim in front of the agent: the agent argv follows the client's "--".
		i := slices.Index(argv, "--")
		argv = slices.Concat(argv[:i+1], []string{filepath.Join(bin, "agentshim"), report, "--"}, argv[i+1:])
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	run := Run{AgentCPUMs: -1}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		run.Note = err.Error()
		return run
	}
	killer := time.AfterFunc(timeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err := cmd.Wait()
	run.WallMs = ms(time.Since(start))
	killer.Stop()

	st := cmd.ProcessState
	run.ExitCode = st.ExitCode()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		run.ClientUser, run.ClientSys = tvMs(ru.Utime), tvMs(ru.Stime)
		run.ClientCPUMs = run.ClientUser + run.ClientSys
		run.ClientRSSKB = maxrssKB(ru.Maxrss)
	}
	if useShim {
		// One shim per agent process the client started (check may start two or three, one
		// after the other): their usage is all the client's to shed, the agents' is summed
		// (peak RSS: the largest), and their lives add up.
		shims := readShimReport(report)
		run.Agents = len(shims)
		separated := len(shims) > 0
		var user, sys, life float64
		for _, sh := range shims {
			if sh.agentPID > 0 {
				if ru, ok := reap(sh.agentPID, 10*time.Second); ok {
					run.AgentCPUMs = max(run.AgentCPUMs, 0) + tvMs(ru.Utime) + tvMs(ru.Stime) // -1 until one is reaped
					run.AgentRSSKB = max(run.AgentRSSKB, maxrssKB(ru.Maxrss))
				}
			}
			separated = separated && sh.ok
			user, sys, life = user+sh.user, sys+sh.sys, life+sh.lifeMs
			run.ShimRSSKB = max(run.ShimRSSKB, sh.rssKB)
		}
		if separated {
			run.Separated = true
			run.ShimCPUMs = user + sys
			run.ClientUser = math.Max(0, run.ClientUser-user)
			run.ClientSys = math.Max(0, run.ClientSys-sys)
			run.ClientCPUMs = run.ClientUser + run.ClientSys
			run.RSSMasked = run.ClientRSSKB <= run.ShimRSSKB
			run.AgentLifeMs = life
			run.OutsideMs = run.WallMs - life
		}
		reapOrphans()
	}
	run.OK, run.Note = judge(variant, err, run.ExitCode, stdout.Bytes(), stderr.Bytes())
	return run
}

// judge says whether the handshake completed: both requests answered (an error answer,
// such as a real agent's authentication error, counts).
func judge(variant string, err error, code int, stdout, stderr []byte) (bool, string) {
	lastLine := func(b []byte) string {
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		return lines[len(lines)-1]
	}
	switch variant {
	case "floor", "floor-kill", "sdk", "sdk-kill":
		if code != 0 {
			return false, fmt.Sprintf("exit %d (%v): %s", code, err, lastLine(stderr))
		}
		return true, strings.TrimSpace(string(stdout))
	default:
		// acpprobe: 0 ok, 3 could not be probed (e.g. session/new answered -32603), 4 auth.
		var res struct {
			Error *struct {
				Code       string
				Stage      string
				AgentError *struct{ Code int }
			}
			Timings struct{ InitializeMs, SessionNewMs, MethodsMs, TeardownMs float64 }
			Exit    *struct {
				By                string
				AfterStdinCloseMs *float64
			}
		}
		if jerr := json.Unmarshal(stdout, &res); jerr != nil {
			return false, fmt.Sprintf("exit %d, no JSON result: %s", code, lastLine(stderr))
		}
		t := res.Timings
		steps := fmt.Sprintf("initialize %.1fms; session/new %.1fms", t.InitializeMs, t.SessionNewMs)
		if t.MethodsMs > 0 {
			steps += fmt.Sprintf("; methods %.1fms", t.MethodsMs)
		}
		steps += fmt.Sprintf("; teardown %.1fms", t.TeardownMs)
		if res.Exit != nil {
			steps += " (exit: " + res.Exit.By
			if res.Exit.AfterStdinCloseMs != nil {
				steps += fmt.Sprintf(" %.1fms", *res.Exit.AfterStdinCloseMs)
			}
			steps += ")"
		}
		// The exit code says how the probe went (1: findings at --fail-on; 3, 4: the agent's
		// error answer): the handshake completed when the agent answered both requests.
		switch {
		case res.Error == nil:
			return code == 0 || code == 1, fmt.Sprintf("exit %d, %s", code, steps)
		case res.Error.AgentError != nil:
			return code == 1 || code == 3 || code == 4, fmt.Sprintf("exit %d, %s answered %d; %s", code, res.Error.Stage, res.Error.AgentError.Code, steps)
		}
		return false, fmt.Sprintf("exit %d: %s at %s", code, res.Error.Code, res.Error.Stage)
	}
}

// shimRun is what one bench/agentshim reported: its agent's pid, its own usage and the
// agent's life. ok is false when the shim did not get to write its usage (killed).
type shimRun struct {
	agentPID  int
	user, sys float64
	rssKB     int64
	lifeMs    float64
	ok        bool
}

// readShimReport parses bench/agentshim's report: per agent process, "agent PID" and then
// "shim PID UTIME_US STIME_US MAXRSS_KB LIFE_US" (the shims of agents running at once may
// interleave their lines: the pid pairs them).
func readShimReport(path string) []shimRun {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var runs []shimRun
	byPID := map[int]int{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "agent":
			pid, _ := strconv.Atoi(f[1])
			byPID[pid] = len(runs)
			runs = append(runs, shimRun{agentPID: pid})
		case len(f) == 6 && f[0] == "shim":
			pid, _ := strconv.Atoi(f[1])
			i, known := byPID[pid]
			if !known {
				continue
			}
			u, _ := strconv.ParseFloat(f[2], 64)
			s, _ := strconv.ParseFloat(f[3], 64)
			rss, _ := strconv.ParseInt(f[4], 10, 64)
			l, _ := strconv.ParseFloat(f[5], 64)
			runs[i] = shimRun{agentPID: pid, user: u / 1000, sys: s / 1000, rssKB: rss, lifeMs: l / 1000, ok: true}
		}
	}
	return runs
}

// reap waits for pid, an orphaned agent the driver inherited as a subreaper, and returns its
// usage. The zombie is re-parented once the shim has exited; a still-running agent is killed
// after d.
func reap(pid int, d time.Duration) (*syscall.Rusage, bool) {
	deadline := time.Now().Add(d)
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, &ru)
		if got == pid {
			return &ru, true
		}
		if err != nil && !errors.Is(err, syscall.ECHILD) && !errors.Is(err, syscall.EINTR) {
			return nil, false
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			if time.Now().After(deadline.Add(2 * time.Second)) {
				return nil, false
			}
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// reapOrphans collects any other zombie the driver inherited (an agent's own children).
func reapOrphans() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}

// sandbox makes the agent's world: a fresh HOME (and the config homes the agents know of)
// and a working directory, with the variables that could give an agent model access or point
// it at a real account cleared (as e2e does).
func sandbox(work, name string) (cwd string, env []string) {
	cwd, set := sandboxVars(work, name)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := set[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return cwd, env
}

// sandboxVars makes the directories of the agent's world and returns the variables that
// point the agent at them or that are cleared.
func sandboxVars(work, name string) (cwd string, set map[string]string) {
	home := filepath.Join(work, name, "home")
	cwd = filepath.Join(work, name, "cwd")
	for _, d := range []string{home, cwd, filepath.Join(home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fatalf("%v", err)
		}
	}
	set = map[string]string{
		"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "XDG_DATA_HOME": filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME": filepath.Join(home, ".local", "state"), "XDG_CACHE_HOME": filepath.Join(home, ".cache"),
		"CODEX_HOME": filepath.Join(home, ".codex"), "CLAUDE_CONFIG_DIR": filepath.Join(home, ".claude"), "GEMINI_CLI_HOME": home,
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
		"GOOGLE_APPLICATION_CREDENTIALS", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK",
		"CLAUDE_CODE_USE_VERTEX", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_PROJECT", "IS_SANDBOX",
		"CLAUDE_CODE_BUBBLEWRAP"} {
		set[k] = ""
	}
	return cwd, set
}

// longUsedHome fills home as a long-used machine's is (sandbox/realhome_test.go's
// longUsedHome): 50,000 files spread over the places agents keep their state, most under
// ~/.claude/projects, in 100-file directories, and 300 top entries of HOME and of ~/.config
// that are no agent's.
func longUsedHome(home string) {
	places := []string{".claude/projects", ".claude/projects", ".claude/projects", ".codex/sessions", ".gemini/tmp", ".qwen/tmp", ".local/share/opencode/storage"}
	made := map[string]bool{}
	for i := range 50_000 {
		dir := filepath.Join(home, places[i%len(places)], fmt.Sprintf("p%03d", i/100%500))
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				fatalf("%v", err)
			}
			made[dir] = true
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%05d.jsonl", i)), []byte("{}\n"), 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	for i := range 300 {
		for _, d := range []string{"", ".config"} {
			if err := os.MkdirAll(filepath.Join(home, d, fmt.Sprintf(".tool-%03d", i)), 0o755); err != nil {
				fatalf("%v", err)
			}
		}
	}
}
