// Command driver runs acpprobe's end-to-end benchmarks: the ACP handshake (spawn the agent,
// initialize, session/new, session/close when advertised, close stdin, wait for the exit,
// with acpprobe's teardown ladder) done by
//
//   - floor:      bench/rawclient, the smallest Go client that does it;
//   - sdk:        bench/sdkclient/client.mjs on @agentclientprotocol/sdk, the peer;
//   - probe:      acpprobe probe --no-methods --json, the same handshake;
//   - probe-full: acpprobe probe --json, with optional-method detection (reported apart);
//   - candidate:NAME: another acpprobe build (-candidate), as probe, to measure a change;
//
// against the reference agent (acpprobe agent --persona claude) and the real agents that
// scripts/install-e2e-agents.sh installed (skipped when missing). The variants run
// interleaved, round-robin, the order rotating every round, after a warm-up round.
//
// What is measured, per run: the wall time from starting the client to reaping it; the
// client's own CPU time (user+sys) and peak RSS; the agent's. A child's rusage (wait4) holds
// the children it reaped, so a client that reaps its agent would carry the agent's CPU and
// (for ru_maxrss, a maximum) hide its own peak under the agent's. On Linux the agent is
// therefore started through bench/agentshim, which starts it on inherited stdio, waits for it
// without reaping it (waitid WNOWAIT), reports its own usage and exits like the agent did;
// the driver is a child subreaper, so it inherits the agent's zombie and reaps it itself. The
// client's wait4 usage then holds the client and the shim only: client CPU = that minus the
// shim's self-reported CPU; client peak RSS = its ru_maxrss, exact unless it is not above the
// shim's own (flagged). Elsewhere (-shim=false) the client figures include the agent. The
// shim also reports the agent's life (from its start to the agent's end): wall time minus it
// is the client's own serial time (start-up, and what it does after the agent ended), which
// the agent's large run-to-run variance does not blur.
//
// It prints a table and writes JSON (and the table) to bench/results/.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// Targets from the benchmark issue (probe --no-methods against the floor).
const (
	targetOverheadMs = 10
	targetRatio      = 1.05
	targetCPUMs      = 20
	targetRSSMiB     = 20
)

type agentSpec struct {
	Name    string   `json:"name"`
	Argv    []string `json:"argv"`
	Real    bool     `json:"real"`
	Package string   `json:"package,omitempty"`
	Version string   `json:"version,omitempty"`
}

type variantSpec struct {
	Name  string
	Label string
	argv  func(agent []string) []string
}

// Run is one measured run of a variant.
type Run struct {
	Round       int     `json:"round"`
	WallMs      float64 `json:"wallMs"`
	ExitCode    int     `json:"exitCode"`
	OK          bool    `json:"ok"`
	Note        string  `json:"note,omitempty"`         // what the handshake answered, or why it failed
	ClientCPUMs float64 `json:"clientCpuMs"`            // user+sys of the client alone (shim subtracted)
	ClientUser  float64 `json:"clientUserMs"`           //
	ClientSys   float64 `json:"clientSysMs"`            //
	ClientRSSKB int64   `json:"clientMaxRssKB"`         // ru_maxrss of the client (see RSSMasked)
	RSSMasked   bool    `json:"rssMasked,omitempty"`    // the client's ru_maxrss was not above the shim's: an upper bound
	ShimCPUMs   float64 `json:"shimCpuMs,omitempty"`    //
	ShimRSSKB   int64   `json:"shimMaxRssKB,omitempty"` //
	AgentCPUMs  float64 `json:"agentCpuMs"`             // user+sys of the agent and what it reaped; -1 when unknown
	AgentRSSKB  int64   `json:"agentMaxRssKB"`          //
	AgentLifeMs float64 `json:"agentLifeMs"`            // from the shim's start to the agent's end; 0 when unknown
	OutsideMs   float64 `json:"outsideMs"`              // wall minus the agent's life: the client's own serial time
	Separated   bool    `json:"separated"`              // client and agent usage were measured apart (shim)
}

// Stat summarises one measure over the runs.
type Stat struct {
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Summary is one variant against one agent.
type Summary struct {
	Agent   string `json:"agent"`
	Variant string `json:"variant"`
	Label   string `json:"label"`
	N       int    `json:"n"`
	Failed  int    `json:"failed"`
	Note    string `json:"note,omitempty"`
	Wall    Stat   `json:"wallMs"`
	// RatioToFloor is the median wall time over the floor's; OverheadMs the median minus
	// the floor's median; PairedOverheadMs the median of the per-round differences.
	RatioToFloor     float64 `json:"ratioToFloor"`
	OverheadMs       float64 `json:"overheadMs"`
	PairedOverheadMs float64 `json:"pairedOverheadMs"`
	// Outside is the wall time minus the agent's life (the client's start-up before the
	// agent runs and its work after the agent ended), free of the agent's own variance;
	// OutsideOverheadMs is its median minus the floor's.
	Outside           Stat    `json:"outsideMs"`
	OutsideOverheadMs float64 `json:"outsideOverheadMs"`
	ClientCPU         Stat    `json:"clientCpuMs"`
	ClientRSSKB       Stat    `json:"clientMaxRssKB"`
	RSSMasked         int     `json:"rssMaskedRuns,omitempty"`
	AgentCPU          Stat    `json:"agentCpuMs"`
	AgentRSSKB        Stat    `json:"agentMaxRssKB"`
	Runs              []Run   `json:"runs"`
}

// Target is one target of the issue, checked.
type Target struct {
	Agent    string  `json:"agent"`
	What     string  `json:"what"`
	Target   string  `json:"target"`
	Measured float64 `json:"measured"`
	Unit     string  `json:"unit"`
	Met      bool    `json:"met"`
}

// Report is the JSON document written to bench/results/.
type Report struct {
	Schema   string            `json:"schema"`
	Started  time.Time         `json:"started"`
	Duration float64           `json:"durationSeconds"`
	Machine  map[string]string `json:"machine"`
	Versions map[string]string `json:"versions"`
	Settings map[string]any    `json:"settings"`
	Agents   []agentSpec       `json:"agents"`
	Results  []*Summary        `json:"results"`
	Targets  []Target          `json:"targets"`
	Notes    []string          `json:"notes"`
}

func main() {
	root := flag.String("root", "", "the repository root (default: found from the working directory)")
	bin := flag.String("bin", "", "directory holding acpprobe, rawclient and agentshim (default ROOT/bench/bin)")
	node := flag.String("node", "node", "node executable for the SDK client")
	rounds := flag.Int("rounds", 30, "measured rounds against the reference agent")
	realRounds := flag.Int("real-rounds", 4, "measured rounds against each real agent")
	warmup := flag.Int("warmup", 1, "unmeasured rounds before the measured ones, per agent")
	agentsFlag := flag.String("agents", "reference,claude-agent-acp,codex-acp,gemini", "agents to run (comma-separated); real agents not installed are skipped")
	variantsFlag := flag.String("variants", "floor,sdk,probe,probe-full", "variants to run (comma-separated); floor is always run")
	out := flag.String("out", "", "results directory (default ROOT/bench/results)")
	useShim := flag.Bool("shim", runtime.GOOS == "linux", "measure client and agent apart through bench/agentshim (Linux only)")
	timeout := flag.Duration("timeout", 90*time.Second, "kill a run that takes longer than this")
	candidates := flag.String("candidate", "", "other acpprobe builds, NAME=PATH[,NAME=PATH…] (or one PATH), each run as one more variant (probe --no-methods) to measure a change against the current build in the same run")
	flag.Parse()

	if *root == "" {
		*root = findRoot()
	}
	if *bin == "" {
		*bin = filepath.Join(*root, "bench", "bin")
	}
	if *out == "" {
		*out = filepath.Join(*root, "bench", "results")
	}
	if *useShim {
		if err := becomeSubreaper(); err != nil {
			fatalf("cannot become a child subreaper (%v); run with -shim=false", err)
		}
	}

	acpprobe := filepath.Join(*bin, "acpprobe")
	sdkClient := filepath.Join(*root, "bench", "sdkclient", "client.mjs")
	all := []variantSpec{
		{"floor", "raw client (floor)", func(a []string) []string { return append([]string{filepath.Join(*bin, "rawclient"), "--"}, a...) }},
		{"sdk", "TS SDK 2.4.0 client", func(a []string) []string { return append([]string{*node, sdkClient, "--"}, a...) }},
		{"probe", "acpprobe probe --no-methods", func(a []string) []string {
			return append([]string{acpprobe, "probe", "--no-methods", "--json", "--"}, a...)
		}},
		{"probe-full", "acpprobe probe (methods)", func(a []string) []string { return append([]string{acpprobe, "probe", "--json", "--"}, a...) }},
	}
	want := map[string]bool{"floor": true}
	for i, c := range strings.Split(*candidates, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		name, path, ok := strings.Cut(c, "=")
		if !ok {
			name, path = fmt.Sprint("candidate", i+1), c
		}
		v := variantSpec{"candidate:" + name, name + " probe --no-methods", func(a []string) []string {
			return append([]string{path, "probe", "--no-methods", "--json", "--"}, a...)
		}}
		all = append(all, v)
		want[v.Name] = true
	}
	for _, v := range strings.Split(*variantsFlag, ",") {
		want[strings.TrimSpace(v)] = true
	}
	var variants []variantSpec
	for _, v := range all {
		if want[v.Name] {
			variants = append(variants, v)
		}
	}

	agentsDir := filepath.Join(*root, "e2e", ".agents", "node_modules")
	known := []agentSpec{
		{Name: "reference", Argv: []string{acpprobe, "agent", "--persona", "claude"}},
		{Name: "claude-agent-acp", Argv: []string{filepath.Join(agentsDir, ".bin", "claude-agent-acp")}, Real: true, Package: "@zed-industries/claude-agent-acp"},
		{Name: "codex-acp", Argv: []string{filepath.Join(agentsDir, ".bin", "codex-acp")}, Real: true, Package: "@zed-industries/codex-acp"},
		{Name: "gemini", Argv: []string{filepath.Join(agentsDir, ".bin", "gemini"), "--acp"}, Real: true, Package: "@google/gemini-cli"},
	}
	var agents []agentSpec
	var notes []string
	for _, name := range strings.Split(*agentsFlag, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(known, func(a agentSpec) bool { return a.Name == name })
		if i < 0 {
			fatalf("unknown agent %q", name)
		}
		a := known[i]
		if a.Real {
			if st, err := os.Stat(a.Argv[0]); err != nil || st.Mode()&0o111 == 0 {
				msg := fmt.Sprintf("%s: not installed (scripts/install-e2e-agents.sh), skipped", a.Name)
				fmt.Fprintln(os.Stderr, "driver: "+msg)
				notes = append(notes, msg)
				continue
			}
			a.Version = packageVersion(filepath.Join(agentsDir, a.Package, "package.json"))
		}
		agents = append(agents, a)
	}

	work, err := os.MkdirTemp("", "acpprobe-bench-")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(work)

	rep := &Report{
		Schema:   "acpprobe.bench/v1",
		Started:  time.Now().UTC(),
		Machine:  machine(),
		Versions: versions(*root, acpprobe, *node),
		Settings: map[string]any{"rounds": *rounds, "realRounds": *realRounds, "warmup": *warmup, "shim": *useShim,
			"teardownGrace": "2s (all clients)", "order": "round-robin, rotated every round"},
		Agents: agents,
		Notes:  notes,
	}
	st, _ := os.Stderr.Stat()
	tty := st != nil && st.Mode()&os.ModeCharDevice != 0
	for _, a := range agents {
		n := *rounds
		if a.Real {
			n = *realRounds
		}
		box, env := sandbox(work, a.Name)
		fmt.Fprintf(os.Stderr, "driver: %s: %d warm-up + %d rounds of %d variants\n", a.Name, *warmup, n, len(variants))
		sums := make([]*Summary, len(variants))
		for i, v := range variants {
			sums[i] = &Summary{Agent: a.Name, Variant: v.Name, Label: v.Label}
		}
		for r := -*warmup; r < n; r++ {
			for k := range variants {
				i := (k + max(r, 0)) % len(variants) // rotate the order every round
				v := variants[i]
				argv := v.argv(a.Argv)
				run := measure(argv, box, env, work, *bin, *useShim, *timeout, v.Name)
				run.Round = r
				if r < 0 {
					if !run.OK {
						fmt.Fprintf(os.Stderr, "driver: %s/%s warm-up failed: %s\n", a.Name, v.Name, run.Note)
					}
					continue
				}
				sums[i].Runs = append(sums[i].Runs, run)
			}
			if r >= 0 && tty {
				fmt.Fprintf(os.Stderr, "\rdriver: %s: round %d/%d", a.Name, r+1, n)
			}
		}
		if tty {
			fmt.Fprintln(os.Stderr)
		}
		summarise(sums)
		rep.Results = append(rep.Results, sums...)
	}
	rep.Targets = targets(rep.Results)
	rep.Duration = time.Since(rep.Started).Seconds()

	var table bytes.Buffer
	printTable(&table, rep)
	os.Stdout.Write(table.Bytes())

	if err := os.MkdirAll(*out, 0o755); err != nil {
		fatalf("%v", err)
	}
	stamp := rep.Started.Format("20060102-150405")
	js, _ := json.MarshalIndent(rep, "", "  ")
	for _, name := range []string{"bench-" + stamp, "latest"} {
		_ = os.WriteFile(filepath.Join(*out, name+".json"), append(js, '\n'), 0o644)
		_ = os.WriteFile(filepath.Join(*out, name+".txt"), table.Bytes(), 0o644)
	}
	fmt.Printf("\nresults: %s (and latest.json / latest.txt)\n", filepath.Join(*out, "bench-"+stamp+".json"))
}

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
		agentPID, shimUser, shimSys, shimRSS, life, ok := readShimReport(report)
		if agentPID > 0 {
			if ru, ok := reap(agentPID, 10*time.Second); ok {
				run.AgentCPUMs = tvMs(ru.Utime) + tvMs(ru.Stime)
				run.AgentRSSKB = maxrssKB(ru.Maxrss)
			}
		}
		if ok {
			run.Separated = true
			run.ShimCPUMs, run.ShimRSSKB = shimUser+shimSys, shimRSS
			run.ClientUser = math.Max(0, run.ClientUser-shimUser)
			run.ClientSys = math.Max(0, run.ClientSys-shimSys)
			run.ClientCPUMs = run.ClientUser + run.ClientSys
			run.RSSMasked = run.ClientRSSKB <= shimRSS
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
	case "floor", "sdk":
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
		switch {
		case res.Error == nil:
			return code == 0 || code == 1, fmt.Sprintf("exit %d, %s", code, steps)
		case res.Error.AgentError != nil:
			return code == 3 || code == 4, fmt.Sprintf("exit %d, %s answered %d; %s", code, res.Error.Stage, res.Error.AgentError.Code, steps)
		}
		return false, fmt.Sprintf("exit %d: %s at %s", code, res.Error.Code, res.Error.Stage)
	}
}

// readShimReport parses bench/agentshim's report: "agent PID" then "shim UTIME_US STIME_US
// MAXRSS_KB LIFE_US". ok is false when the shim did not get to write its usage (killed).
func readShimReport(path string) (agentPID int, user, sys float64, rssKB int64, lifeMs float64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, 0, 0, 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 2 && f[0] == "agent":
			agentPID, _ = strconv.Atoi(f[1])
		case len(f) == 5 && f[0] == "shim":
			u, _ := strconv.ParseFloat(f[1], 64)
			s, _ := strconv.ParseFloat(f[2], 64)
			rssKB, _ = strconv.ParseInt(f[3], 10, 64)
			l, _ := strconv.ParseFloat(f[4], 64)
			user, sys, lifeMs, ok = u/1000, s/1000, l/1000, true
		}
	}
	return agentPID, user, sys, rssKB, lifeMs, ok
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

func summarise(sums []*Summary) {
	var floor *Summary
	for _, s := range sums {
		if s.Variant == "floor" {
			floor = s
		}
	}
	for _, s := range sums {
		var wall, outside, cpu, rss, acpu, arss []float64
		for _, r := range s.Runs {
			if !r.OK {
				s.Failed++
				if s.Note == "" || !strings.HasPrefix(s.Note, "FAILED") {
					s.Note = "FAILED: " + r.Note
				}
				continue
			}
			if s.Note == "" {
				s.Note = r.Note
			}
			wall = append(wall, r.WallMs)
			if r.AgentLifeMs > 0 {
				outside = append(outside, r.OutsideMs)
			}
			cpu = append(cpu, r.ClientCPUMs)
			rss = append(rss, float64(r.ClientRSSKB))
			if r.RSSMasked {
				s.RSSMasked++
			}
			if r.AgentCPUMs >= 0 {
				acpu = append(acpu, r.AgentCPUMs)
				arss = append(arss, float64(r.AgentRSSKB))
			}
		}
		s.N = len(wall)
		s.Wall, s.Outside, s.ClientCPU, s.ClientRSSKB = stat(wall), stat(outside), stat(cpu), stat(rss)
		s.AgentCPU, s.AgentRSSKB = stat(acpu), stat(arss)
	}
	if floor == nil || floor.N == 0 {
		return
	}
	for _, s := range sums {
		if s.N == 0 {
			continue
		}
		s.RatioToFloor = s.Wall.Median / floor.Wall.Median
		s.OverheadMs = s.Wall.Median - floor.Wall.Median
		s.OutsideOverheadMs = s.Outside.Median - floor.Outside.Median
		var diffs []float64
		for i, r := range s.Runs {
			if i < len(floor.Runs) && r.OK && floor.Runs[i].OK {
				diffs = append(diffs, r.WallMs-floor.Runs[i].WallMs)
			}
		}
		s.PairedOverheadMs = stat(diffs).Median
	}
}

func targets(results []*Summary) []Target {
	var out []Target
	who := func(s *Summary) string {
		if name, ok := strings.CutPrefix(s.Variant, "candidate:"); ok {
			return s.Agent + " (" + name + ")"
		}
		return s.Agent
	}
	for _, s := range results {
		if (s.Variant != "probe" && !strings.HasPrefix(s.Variant, "candidate:")) || s.N == 0 {
			continue
		}
		a := who(s)
		out = append(out,
			Target{a, "overhead over the floor (median)", "≤ 10 ms", s.OverheadMs, "ms", s.OverheadMs <= targetOverheadMs},
			Target{a, "ratio to the floor (median)", "≤ 1.05×", s.RatioToFloor, "×", s.RatioToFloor <= targetRatio},
			Target{a, "own time over the floor's (median)", "≤ 10 ms", s.OutsideOverheadMs, "ms", s.OutsideOverheadMs <= targetOverheadMs},
			Target{a, "client CPU (median)", "≤ 20 ms", s.ClientCPU.Median, "ms", s.ClientCPU.Median <= targetCPUMs},
			Target{a, "client peak RSS (median)", "≤ 20 MiB", s.ClientRSSKB.Median / 1024, "MiB", s.ClientRSSKB.Median/1024 <= targetRSSMiB},
		)
	}
	return out
}

func printTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "acpprobe handshake benchmark — %s, %s cores, %s; %s\n", rep.Machine["cpu"], rep.Machine["cores"], rep.Machine["kernel"], rep.Started.Format(time.RFC3339))
	fmt.Fprintf(w, "acpprobe %s · go %s · node %s · @agentclientprotocol/sdk %s · client CPU/RSS measured apart from the agent: %v\n\n",
		rep.Versions["acpprobe"], rep.Versions["go"], rep.Versions["node"], rep.Versions["@agentclientprotocol/sdk"], rep.Settings["shim"])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\tvariant\tn\twall p50 ms\tp90\t× floor\t+ms p50\town ms p50\t+own ms\tclient CPU ms\tclient RSS MiB\tagent CPU ms\tagent RSS MiB\t")
	for _, s := range rep.Results {
		fail := ""
		if s.Failed > 0 {
			fail = fmt.Sprintf(" (%d failed)", s.Failed)
		}
		masked := ""
		if s.RSSMasked > 0 {
			masked = "≤"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d%s\t%.1f\t%.1f\t%.2f\t%+.1f\t%.1f\t%+.1f\t%.1f\t%s%.1f\t%.1f\t%.1f\t\n", s.Agent, s.Label, s.N, fail,
			s.Wall.Median, s.Wall.P90, s.RatioToFloor, s.OverheadMs, s.Outside.Median, s.OutsideOverheadMs, s.ClientCPU.Median, masked,
			s.ClientRSSKB.Median/1024, s.AgentCPU.Median, s.AgentRSSKB.Median/1024)
	}
	tw.Flush()
	fmt.Fprintln(w, "\n× floor, +ms: median wall time over / minus the floor's. own ms: wall time minus the agent's life")
	fmt.Fprintln(w, "(the client's start-up before the agent runs and its work after the agent ended), free of the")
	fmt.Fprintln(w, "agent's own variance; +own ms: minus the floor's. client CPU/RSS: the client process alone")
	fmt.Fprintln(w, "(user+sys, ru_maxrss; ≤: not above the shim's, an upper bound); agent: the agent and its children.")
	fmt.Fprintln(w, "\nwhat each variant got back (first successful run):")
	width := 0
	for _, s := range rep.Results {
		width = max(width, len(s.Label))
	}
	for _, s := range rep.Results {
		fmt.Fprintf(w, "  %-17s %-*s  %s\n", s.Agent, width, s.Label, s.Note)
	}
	fmt.Fprintln(w, "\ntargets (acpprobe probe --no-methods, and any candidate build, vs the floor):")
	for _, t := range rep.Targets {
		mark := "MET "
		if !t.Met {
			mark = "MISS"
		}
		prec := 2
		if t.Unit == "×" {
			prec = 3
		}
		fmt.Fprintf(w, "  %s %-29s %-36s %8.*f %-3s (target %s)\n", mark, t.Agent, t.What, prec, t.Measured, t.Unit, t.Target)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// sandbox makes the agent's world: a fresh HOME (and the config homes the agents know of)
// and a working directory, with the variables that could give an agent model access or point
// it at a real account cleared (as e2e does).
func sandbox(work, name string) (cwd string, env []string) {
	home := filepath.Join(work, name, "home")
	cwd = filepath.Join(work, name, "cwd")
	for _, d := range []string{home, cwd, filepath.Join(home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			fatalf("%v", err)
		}
	}
	set := map[string]string{
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

func machine() map[string]string {
	m := map[string]string{"os": runtime.GOOS, "arch": runtime.GOARCH, "cores": strconv.Itoa(runtime.NumCPU())}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m["cpu"] = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m["kernel"] = runtime.GOOS + " " + strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		m["loadavgAtStart"] = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		m["memory"] = strings.Join(strings.Fields(line)[1:], " ")
	}
	return m
}

func versions(root, acpprobe, node string) map[string]string {
	v := map[string]string{"go": strings.TrimPrefix(runtime.Version(), "go")}
	if out, err := exec.Command(acpprobe, "version").Output(); err == nil {
		v["acpprobe"] = strings.TrimPrefix(strings.TrimSpace(string(out)), "acpprobe ")
	}
	if out, err := exec.Command(node, "--version").Output(); err == nil {
		v["node"] = strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	}
	if out, err := exec.Command("git", "-C", root, "describe", "--always", "--dirty").Output(); err == nil {
		v["commit"] = strings.TrimSpace(string(out))
	}
	v["@agentclientprotocol/sdk"] = packageVersion(filepath.Join(root, "bench", "node_modules", "@agentclientprotocol", "sdk", "package.json"))
	return v
}

func packageVersion(path string) string {
	var p struct{ Version string }
	b, err := os.ReadFile(path)
	if err != nil || json.Unmarshal(b, &p) != nil {
		return "?"
	}
	return p.Version
}

func findRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

func stat(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Stat{Median: quantile(s, 0.5), P90: quantile(s, 0.9), Min: s[0], Max: s[len(s)-1]}
}

// quantile interpolates linearly between the closest ranks of sorted s.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func tvMs(tv syscall.Timeval) float64 { return float64(tv.Nano()) / 1e6 }

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "driver: "+format+"\n", args...)
	os.Exit(2)
}
