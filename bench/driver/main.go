// Command driver runs acpprobe's end-to-end benchmarks: the ACP handshake (spawn the agent,
// initialize, session/new, session/close when advertised, close stdin, stop the agent) done by
//
//   - floor-kill: bench/rawclient --kill, the smallest Go client, stopping the agent at once
//     (SIGTERM to its group right after closing stdin) as real clients do: the floor a user
//     feels, and the one acpprobe probe is held to;
//   - floor:      bench/rawclient, waiting up to 2 s for the agent to leave by itself before
//     SIGTERM: the fair-teardown floor, the one acpprobe check (which waits) is held to;
//   - sdk-kill, sdk: bench/sdkclient/client.mjs on @agentclientprotocol/sdk, the peer, in the
//     same two ways;
//   - probe:      acpprobe probe --no-methods --json (the handshake alone);
//   - probe-full: acpprobe probe --json, the default probe (with method detection);
//   - probe-bighome: probe with a HOME shaped like a long-used machine's (50,000 files under
//     the agents' places, 300 top entries in HOME and ~/.config, built once): what the
//     inventory of the real HOME costs a probe;
//   - check:      acpprobe check --json (the active checks; waits for the agent to leave);
//   - candidate:NAME:VARIANT: another acpprobe build (-candidate) as one of the acpprobe
//     variants (-candidate-variants), to measure a change in the same run;
//
// against the reference agent (acpprobe agent --persona claude) and the real agents that
// scripts/install-e2e-agents.sh installed (skipped when missing). The variants run
// interleaved, round-robin, the order rotating every round, after a warm-up round. With
// -matrix-rounds, it then times acpprobe matrix over all the agents against each agent's
// matrix of one and default probe (see matrix.go); with -turn-rounds, a full acpprobe turn of
// each real agent, split by its transcript into the agent's starts and turns and acpprobe's
// own time (see turns.go).
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
// the agent's large run-to-run variance does not blur. The load average is sampled before
// every round.
//
// It prints a table and writes JSON (and the table) to bench/results/.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type agentSpec struct {
	Name    string   `json:"name"`
	Argv    []string `json:"argv"`
	Real    bool     `json:"real"`
	Package string   `json:"package,omitempty"`
	Version string   `json:"version,omitempty"`
	// Program, when set, is the file that must exist for the agent to count as installed (its
	// Argv[0] is an interpreter on PATH: node for CodeBuddy Code's CLI).
	Program string `json:"-"`
}

// variantSpec is one way of doing the handshake. Base names the floor it is compared with.
type variantSpec struct {
	Name  string
	Label string
	Base  string
	argv  func(agent []string) []string
}

// bigHome tells whether the variant runs with the long-used HOME (and the variables pointing
// into it): probe-bighome, of this build or of a candidate.
func (v variantSpec) bigHome() bool { return strings.HasSuffix(v.Name, "probe-bighome") }

func main() {
	root := flag.String("root", "", "the repository root (default: found from the working directory)")
	bin := flag.String("bin", "", "directory holding acpprobe, rawclient and agentshim (default ROOT/bench/bin)")
	node := flag.String("node", "node", "node executable for the SDK client")
	rounds := flag.Int("rounds", 30, "measured rounds against the reference agent")
	realRounds := flag.Int("real-rounds", 6, "measured rounds against each real agent")
	warmup := flag.Int("warmup", 1, "unmeasured rounds before the measured ones, per agent")
	agentsFlag := flag.String("agents", "reference,claude-agent-acp,codex-acp,gemini,qwen,opencode,codebuddy", "agents to run (comma-separated); real agents not installed are skipped")
	variantsFlag := flag.String("variants", "floor,floor-kill,sdk,sdk-kill,probe,probe-full,check", "variants to run (comma-separated; empty: no handshakes); the floors they are compared with always run")
	out := flag.String("out", "", "results directory (default ROOT/bench/results)")
	useShim := flag.Bool("shim", runtime.GOOS == "linux", "measure client and agent apart through bench/agentshim (Linux only)")
	timeout := flag.Duration("timeout", 90*time.Second, "kill a run that takes longer than this")
	candidates := flag.String("candidate", "", "other acpprobe builds, NAME=PATH[,NAME=PATH…] (or one PATH), each run as the acpprobe variants of -candidate-variants, to measure a change against the current build in the same run")
	candidateVariants := flag.String("candidate-variants", "probe", "the acpprobe variants each candidate build runs (probe, probe-full, check)")
	matrixRounds := flag.Int("matrix-rounds", 0, "after the handshakes, rounds of acpprobe matrix over all the agents against each agent alone (0: none)")
	matrixParallel := flag.String("matrix-parallel", "", "--parallel values to time the whole matrix with, besides the default (comma-separated)")
	turnRounds := flag.Int("turn-rounds", 0, "after the handshakes, rounds of a full acpprobe turn of each real agent, split into its starts, turns and acpprobe's own time (0: none)")
	turnVariants := flag.String("turn-variants", "", "the acpprobe turn arguments of each turn variant, variants separated by ';' (an empty one: the defaults), e.g. ';--scenario completion'")
	turnKill := flag.Duration("turn-kill", 10*time.Minute, "kill a full turn that takes longer than this")
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
	rawClient := filepath.Join(*bin, "rawclient")
	// acpprobeVariant is one of the acpprobe variants, run by the build at path.
	acpprobeVariant := func(name, path, who string) (variantSpec, bool) {
		switch name {
		case "probe":
			return variantSpec{"probe", who + " probe --no-methods", "floor-kill", func(a []string) []string {
				return append([]string{path, "probe", "--no-methods", "--json", "--"}, a...)
			}}, true
		case "probe-bighome":
			return variantSpec{"probe-bighome", who + " probe --no-methods, long-used HOME", "floor-kill", func(a []string) []string {
				return append([]string{path, "probe", "--no-methods", "--json", "--"}, a...)
			}}, true
		case "probe-full":
			return variantSpec{"probe-full", who + " probe", "floor-kill", func(a []string) []string {
				return append([]string{path, "probe", "--json", "--"}, a...)
			}}, true
		case "check":
			return variantSpec{"check", who + " check", "floor", func(a []string) []string {
				return append([]string{path, "check", "--json", "--"}, a...)
			}}, true
		}
		return variantSpec{}, false
	}
	all := []variantSpec{
		{"floor", "raw client, fair teardown (floor)", "", func(a []string) []string { return append([]string{rawClient, "--"}, a...) }},
		{"floor-kill", "raw client, kill at once (floor)", "", func(a []string) []string { return append([]string{rawClient, "--kill", "--"}, a...) }},
		{"sdk", "TS SDK client, fair teardown", "floor", func(a []string) []string { return append([]string{*node, sdkClient, "--"}, a...) }},
		{"sdk-kill", "TS SDK client, kill at once", "floor-kill", func(a []string) []string {
			return append([]string{*node, sdkClient, "--kill", "--"}, a...)
		}},
	}
	for _, name := range []string{"probe", "probe-bighome", "probe-full", "check"} {
		v, _ := acpprobeVariant(name, acpprobe, "acpprobe")
		all = append(all, v)
	}
	want := map[string]bool{}
	for _, v := range strings.Split(*variantsFlag, ",") {
		want[strings.TrimSpace(v)] = true
	}
	for i, c := range strings.Split(*candidates, ",") {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		name, path, ok := strings.Cut(c, "=")
		if !ok {
			name, path = fmt.Sprint("candidate", i+1), c
		}
		for _, cv := range strings.Split(*candidateVariants, ",") {
			v, ok := acpprobeVariant(strings.TrimSpace(cv), path, name)
			if !ok {
				fatalf("-candidate-variants: unknown acpprobe variant %q", cv)
			}
			v.Name = "candidate:" + name + ":" + v.Name
			all = append(all, v)
			want[v.Name] = true
		}
	}
	for _, v := range all { // the floors the chosen variants are compared with
		if want[v.Name] && v.Base != "" {
			want[v.Base] = true
		}
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
		{Name: "claude-agent-acp", Argv: []string{filepath.Join(agentsDir, ".bin", "claude-agent-acp")}, Real: true, Package: "@agentclientprotocol/claude-agent-acp"},
		{Name: "codex-acp", Argv: []string{filepath.Join(agentsDir, ".bin", "codex-acp")}, Real: true, Package: "@agentclientprotocol/codex-acp"},
		{Name: "gemini", Argv: []string{filepath.Join(agentsDir, ".bin", "gemini"), "--acp"}, Real: true, Package: "@google/gemini-cli"},
		{Name: "qwen", Argv: []string{filepath.Join(agentsDir, ".bin", "qwen"), "--acp"}, Real: true, Package: "@qwen-code/qwen-code"},
		{Name: "opencode", Argv: []string{filepath.Join(agentsDir, ".bin", "opencode"), "acp"}, Real: true, Package: "opencode-ai"},
		// CodeBuddy Code has no bin of its own in the SDK that bundles it: node runs its CLI.
		{Name: "codebuddy", Argv: []string{"node", filepath.Join(agentsDir, "@tencent-ai", "agent-sdk", "cli", "bin", "codebuddy"), "--acp"}, Real: true,
			Package: filepath.Join("@tencent-ai", "agent-sdk", "cli"), Program: filepath.Join(agentsDir, "@tencent-ai", "agent-sdk", "cli", "bin", "codebuddy")},
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
			program := a.Argv[0]
			if a.Program != "" {
				program = a.Program
			}
			if st, err := os.Stat(program); err != nil || st.Mode()&0o111 == 0 && a.Program == "" {
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
		Schema:   "acpprobe.bench/v2",
		Started:  time.Now().UTC(),
		Machine:  machine(),
		Versions: versions(*root, acpprobe, *node),
		Settings: map[string]any{"rounds": *rounds, "realRounds": *realRounds, "warmup": *warmup, "shim": *useShim,
			"teardown": "floor, sdk: 2 s for the agent to leave, SIGTERM, 2 s, SIGKILL; floor-kill, sdk-kill and acpprobe probe: SIGTERM at once, 2 s, SIGKILL; acpprobe check: its own ladder (waits --grace)",
			"order":    "round-robin, rotated every round"},
		Agents: agents,
		Notes:  notes,
	}
	var bigBox string
	var bigEnv []string
	if slices.ContainsFunc(variants, variantSpec.bigHome) {
		bigBox, bigEnv = sandbox(work, "bighome")
		longUsedHome(filepath.Join(work, "bighome", "home"))
	}
	var load loadSampler
	st, _ := os.Stderr.Stat()
	tty := st != nil && st.Mode()&os.ModeCharDevice != 0
	for _, a := range agents {
		if len(variants) == 0 {
			break
		}
		n := *rounds
		if a.Real {
			n = *realRounds
		}
		box, env := sandbox(work, a.Name)
		fmt.Fprintf(os.Stderr, "driver: %s: %d warm-up + %d rounds of %d variants\n", a.Name, *warmup, n, len(variants))
		sums := make([]*Summary, len(variants))
		for i, v := range variants {
			sums[i] = &Summary{Agent: a.Name, Variant: v.Name, Label: v.Label, Base: v.Base}
		}
		for r := -*warmup; r < n; r++ {
			load.sample()
			for k := range variants {
				i := (k + max(r, 0)) % len(variants) // rotate the order every round
				v := variants[i]
				vbox, venv := box, env
				if v.bigHome() {
					vbox, venv = bigBox, bigEnv
				}
				run := measure(v.argv(a.Argv), vbox, venv, work, *bin, *useShim, *timeout, v.Name)
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
	if *matrixRounds > 0 && len(agents) > 0 {
		var par []int
		for _, p := range strings.Split(*matrixParallel, ",") {
			var n int
			if _, err := fmt.Sscan(strings.TrimSpace(p), &n); err == nil && n > 0 {
				par = append(par, n)
			}
		}
		rep.Matrix = runMatrix(acpprobe, agents, work, *matrixRounds, par, *timeout, &load)
		rep.Targets = append(rep.Targets, rep.Matrix.Targets...)
	}
	if *turnRounds > 0 {
		var variants [][]string
		for _, v := range strings.Split(*turnVariants, ";") {
			variants = append(variants, strings.Fields(v))
		}
		rep.Turns = runTurns(acpprobe, agents, work, *warmup, *turnRounds, variants, *turnKill, &load)
		rep.Targets = append(rep.Targets, turnTargets(rep.Turns)...)
	}
	rep.Machine["loadavgDuring"] = load.String()
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

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "driver: "+format+"\n", args...)
	os.Exit(2)
}
