package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// The matrix benchmark: acpprobe matrix over all the agents (each in its own sandbox HOME,
// given through a config file), against the same matrix of each agent alone and each agent's
// default probe, interleaved round-robin. A matrix runs acpprobe check's exchanges on each
// agent, so its fair comparison is the matrix of one; the default probe shows what a user who
// probes the agents one by one waits. Wall time and the CPU of the whole tree (the matrix and
// the agents it reaps) are measured.

// MatrixRun is one variant of the matrix benchmark.
type MatrixRun struct {
	Name   string   `json:"name"`
	Label  string   `json:"label"`
	Agents []string `json:"agents"`
	N      int      `json:"n"`
	Failed int      `json:"failed"`
	Note   string   `json:"note,omitempty"`
	Wall   Stat     `json:"wallMs"`
	CPU    Stat     `json:"treeCpuMs"` // the matrix (or probe) and every agent it reaped
	walls  []float64
	cpus   []float64
}

// MatrixReport is the matrix benchmark: its variants, and the whole matrix against its
// slowest agent alone.
type MatrixReport struct {
	Agents   []string     `json:"agents"`
	Cores    int          `json:"cores"`
	Runs     []*MatrixRun `json:"runs"`
	Slowest  string       `json:"slowestAlone"`
	Ratio    float64      `json:"ratioToSlowestAlone"`
	Slowest1 string       `json:"slowestProbe"`
	Ratio1   float64      `json:"ratioToSlowestProbe"`
	Targets  []Target     `json:"targets"`
}

func runMatrix(acpprobe string, agents []agentSpec, work string, rounds int, parallels []int, timeout time.Duration, load *loadSampler) *MatrixReport {
	dir := filepath.Join(work, "matrix")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	type entry struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env,omitempty"`
	}
	// matrix runs each agent in a sandbox of its own by default (a throwaway HOME, no
	// credentials): its config names the agents alone. probe runs the agent in the environment
	// it is given: its config gives each agent a throwaway HOME of its own, as the handshakes do.
	matrixCfg := map[string]map[string]entry{"agents": {}}
	probeCfg := map[string]map[string]entry{"agents": {}}
	var names []string
	for _, a := range agents {
		_, set := sandboxVars(work, "matrix-"+a.Name)
		matrixCfg["agents"][a.Name] = entry{a.Argv[0], a.Argv[1:], nil}
		probeCfg["agents"][a.Name] = entry{a.Argv[0], a.Argv[1:], set}
		names = append(names, a.Name)
	}
	cfgPath, probeCfgPath := filepath.Join(dir, "agents.json"), filepath.Join(dir, "probe-agents.json")
	for path, cfg := range map[string]any{cfgPath: matrixCfg, probeCfgPath: probeCfg} {
		b, _ := json.MarshalIndent(cfg, "", "  ")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			fatalf("%v", err)
		}
	}
	cwd, env := sandbox(work, "matrix")
	rep := &MatrixReport{Agents: names, Cores: runtime.NumCPU()}
	matrixArgs := func(extra ...string) []string {
		return append([]string{acpprobe, "matrix", "--config", cfgPath, "--format", "json"}, extra...)
	}
	rep.Runs = append(rep.Runs, &MatrixRun{Name: "all", Label: fmt.Sprintf("matrix of %d (default --parallel)", len(names)), Agents: names})
	for _, p := range parallels {
		rep.Runs = append(rep.Runs, &MatrixRun{Name: fmt.Sprintf("all-p%d", p), Label: fmt.Sprintf("matrix of %d, --parallel %d", len(names), p), Agents: names})
	}
	for _, n := range names {
		rep.Runs = append(rep.Runs, &MatrixRun{Name: "one:" + n, Label: "matrix of " + n + " alone", Agents: []string{n}},
			&MatrixRun{Name: "probe:" + n, Label: "probe of " + n + " alone", Agents: []string{n}})
	}
	argvOf := func(r *MatrixRun) []string {
		switch {
		case r.Name == "all":
			return matrixArgs()
		case strings.HasPrefix(r.Name, "all-p"):
			return matrixArgs("--parallel", strings.TrimPrefix(r.Name, "all-p"))
		case strings.HasPrefix(r.Name, "one:"):
			return matrixArgs(r.Agents[0])
		}
		return []string{acpprobe, "probe", "--json", "--config", probeCfgPath, r.Agents[0]}
	}
	fmt.Fprintf(os.Stderr, "driver: matrix: 1 warm-up + %d rounds of %d variants\n", rounds, len(rep.Runs))
	for r := -1; r < rounds; r++ {
		load.sample()
		for k := range rep.Runs {
			run := rep.Runs[(k+max(r, 0))%len(rep.Runs)]
			wall, cpu, ok, note := measureTree(argvOf(run), cwd, env, timeout, len(run.Agents), strings.HasPrefix(run.Name, "probe:"))
			if r < 0 {
				continue
			}
			if !ok {
				run.Failed++
				run.Note = "FAILED: " + note
				continue
			}
			if run.Note == "" {
				run.Note = note
			}
			run.walls, run.cpus = append(run.walls, wall), append(run.cpus, cpu)
		}
	}
	for _, run := range rep.Runs {
		run.N, run.Wall, run.CPU = len(run.walls), stat(run.walls), stat(run.cpus)
	}
	var all *MatrixRun
	var slowest, slowestProbe float64
	for _, run := range rep.Runs {
		switch {
		case run.Name == "all":
			all = run
		case strings.HasPrefix(run.Name, "one:") && run.Wall.Median > slowest:
			slowest, rep.Slowest = run.Wall.Median, run.Agents[0]
		case strings.HasPrefix(run.Name, "probe:") && run.Wall.Median > slowestProbe:
			slowestProbe, rep.Slowest1 = run.Wall.Median, run.Agents[0]
		}
	}
	if all != nil && all.N > 0 && slowest > 0 {
		rep.Ratio = all.Wall.Median / slowest
		rep.Ratio1 = all.Wall.Median / slowestProbe
		if len(names) <= 2*rep.Cores {
			rep.Targets = append(rep.Targets, Target{fmt.Sprintf("matrix of %d", len(names)),
				fmt.Sprintf("wall over its slowest agent alone (%s, %.0f ms)", rep.Slowest, slowest), "≤ 1.25×", rep.Ratio, "×", rep.Ratio <= targetMatrixRatio})
		}
	}
	return rep
}

// measureTree runs argv and returns its wall time and the CPU of the whole tree (wait4 holds
// the children it reaped). ok says whether every agent was probed (a result each; an
// authentication error counts: the agent answered).
func measureTree(argv []string, dir string, env []string, timeout time.Duration, agents int, single bool) (wall, cpu float64, ok bool, note string) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, false, err.Error()
	}
	killer := time.AfterFunc(timeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	_ = cmd.Wait()
	wall = ms(time.Since(start))
	killer.Stop()
	reapOrphans()
	if ru, isRU := cmd.ProcessState.SysUsage().(*syscall.Rusage); isRU {
		cpu = tvMs(ru.Utime) + tvMs(ru.Stime)
	}
	type result struct {
		Error *struct {
			Code, Stage string
			AgentError  json.RawMessage
		}
	}
	var rows []struct {
		ID      string
		Problem string
		Result  *result
	}
	if single {
		var r result
		if json.Unmarshal(stdout.Bytes(), &r) != nil {
			return wall, cpu, false, "no JSON result: " + lastLine(stderr.String())
		}
		rows = append(rows, struct {
			ID      string
			Problem string
			Result  *result
		}{Result: &r})
	} else {
		var m struct {
			Agents []struct {
				ID      string
				Problem string
				Result  *result
			}
		}
		if json.Unmarshal(stdout.Bytes(), &m) != nil {
			return wall, cpu, false, "no JSON matrix: " + lastLine(stderr.String())
		}
		rows = m.Agents
	}
	if len(rows) != agents {
		return wall, cpu, false, fmt.Sprintf("%d rows, want %d", len(rows), agents)
	}
	var parts []string
	for _, r := range rows {
		switch {
		case r.Result == nil:
			return wall, cpu, false, r.ID + ": " + r.Problem
		case r.Result.Error == nil:
			parts = append(parts, r.ID+" ok")
		case r.Result.Error.Code == "auth_required" || r.Result.Error.AgentError != nil: // the agent answered
			parts = append(parts, r.ID+" "+r.Result.Error.Code+" at "+r.Result.Error.Stage)
		default:
			return wall, cpu, false, fmt.Sprintf("%s: %s at %s", r.ID, r.Result.Error.Code, r.Result.Error.Stage)
		}
	}
	return wall, cpu, true, "exit " + fmt.Sprint(cmd.ProcessState.ExitCode()) + ": " + strings.Join(parts, ", ")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func printMatrix(w io.Writer, m *MatrixReport) {
	fmt.Fprintf(w, "\nmatrix of %d agents (%s) on %d cores; tree CPU: the matrix or probe and every agent it reaped\n\n", len(m.Agents), strings.Join(m.Agents, ", "), m.Cores)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "variant\tn\twall p50 ms\tp90\ttree CPU ms\t")
	for _, r := range m.Runs {
		fail := ""
		if r.Failed > 0 {
			fail = fmt.Sprintf(" (%d failed)", r.Failed)
		}
		fmt.Fprintf(tw, "%s\t%d%s\t%.1f\t%.1f\t%.1f\t\n", r.Label, r.N, fail, r.Wall.Median, r.Wall.P90, r.CPU.Median)
	}
	tw.Flush()
	if m.Ratio > 0 {
		fmt.Fprintf(w, "\nthe whole matrix takes %.2f× its slowest agent alone (%s) and %.2f× the slowest default probe (%s)\n", m.Ratio, m.Slowest, m.Ratio1, m.Slowest1)
	}
	for _, r := range m.Runs {
		fmt.Fprintf(w, "  %-40s %s\n", r.Label, r.Note)
	}
}
