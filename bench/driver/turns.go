package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// The turn benchmark: a full acpprobe turn (the default scenarios) of each real agent, timed
// from start to exit, and split by its own transcript into the agent's starts (spawn to
// initialize answered, summed over every agent process the turn started), the agent's turns
// (session/prompt sent to answered, summed) and acpprobe's own time (the rest: the sandbox and
// the emulator, session/new and the other calls, the listening after each turn, teardowns,
// the analysis). The agents run round-robin, the order rotating every round, after the
// warm-up rounds (-warmup); the target is issue 26's: wall ≤ 1.25 × (starts + turns).

// targetTurnRatio bounds a full turn against what its agent costs (its starts and turns).
const targetTurnRatio = 1.25

// afterWindow is how long acpprobe turn listens after each turn's answer (turn.afterWindow).
const afterWindow = 500.0

// TurnRun is one agent's full turns in one variant.
type TurnRun struct {
	Agent string `json:"agent"`
	// Args are the variant's arguments to acpprobe turn (none: the defaults).
	Args   []string `json:"args"`
	N      int      `json:"n"`
	Failed int      `json:"failed"`
	Note   string   `json:"note,omitempty"`
	Wall   Stat     `json:"wallMs"`
	Starts Stat     `json:"startsMs"`
	Turns  Stat     `json:"turnsMs"`
	Own    Stat     `json:"ownMs"`
	// Of Own: the agent's other calls and teardowns, acpprobe's listening (turnSplit), and
	// the rest.
	Calls     Stat `json:"callsMs"`
	Teardowns Stat `json:"teardownsMs"`
	Listens   Stat `json:"listensMs"`
	Rest      Stat `json:"restMs"`
	// Processes and Prompts are the agent processes a turn started and the session/prompt
	// calls it answered (the last run's): acpprobe listens afterWindow (0.5 s) after each turn.
	Processes int `json:"processes"`
	Prompts   int `json:"prompts"`
	// Ratio is the median wall over the median of starts + turns (the target's); AgentRatio
	// the median wall over the median of everything the agent spent answering (starts,
	// turns, calls, teardowns).
	Ratio      float64        `json:"ratio"`
	AgentRatio float64        `json:"agentRatio"`
	Runs       []turnSplitRun `json:"runs"`
}

// turnSplitRun is one full turn, measured.
type turnSplitRun struct {
	Round  int     `json:"round"`
	WallMs float64 `json:"wallMs"`
	turnSplit
}

// turnSplit is what a turn's transcript says its agent cost.
type turnSplit struct {
	StartsMs  float64 `json:"startsMs"`
	TurnsMs   float64 `json:"turnsMs"`
	Processes int     `json:"processes"`
	Prompts   int     `json:"prompts"`
	// CallsMs is the time some other request was waiting for the agent's answer
	// (session/new, authenticate, the sessions scenario's loads…; concurrent ones, as the
	// method detection sends them, count once), TeardownsMs each process's stop (the
	// teardown ladder's start to its exit): the agent's cost too, counted in acpprobe's own
	// time by the split the target is about.
	CallsMs     float64 `json:"callsMs"`
	TeardownsMs float64 `json:"teardownsMs"`
	// ListensMs is acpprobe turn listening for late updates after a turn, load or resume was
	// answered: the quiet from the answer to the client's next message or step, at most
	// afterWindow each.
	ListensMs float64 `json:"listensMs"`
	// Unanswered counts the requests the agent never answered (in no sum).
	Unanswered int `json:"unanswered,omitempty"`
}

// splitTranscript reads an acpprobe transcript (NDJSON: a header line, then one frame a line
// with its time t in ms) and sums the agent's starts, turns, other calls and teardowns, and
// acpprobe's listening. A connection begins at its spawn event; a request is paired with the
// answer of the same id on the same connection.
func splitTranscript(r io.Reader) (turnSplit, error) {
	var s turnSplit
	type pending struct {
		method string
		t      float64
	}
	// spawnT is the connection's spawn, ladderT its teardown ladder's start, listenT the
	// answer a listen follows, callsT since when calls are open (-1: none of them).
	var spawnT, ladderT, listenT, callsT float64 = 0, -1, -1, -1
	calls := 0
	open := map[string]pending{}
	endListen := func(t float64) {
		if listenT >= 0 {
			s.ListensMs += min(t-listenT, afterWindow)
			listenT = -1
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	header := true
	for sc.Scan() {
		if header {
			header = false
			continue
		}
		var f struct {
			T    float64         `json:"t"`
			Dir  string          `json:"dir"`
			Kind string          `json:"kind"`
			Raw  json.RawMessage `json:"raw"`
			Data struct {
				Step string `json:"step"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return s, fmt.Errorf("transcript: %w", err)
		}
		if f.Dir == "event" {
			switch f.Kind {
			case "spawn":
				endListen(f.T)
				s.Unanswered += len(open)
				open, calls, callsT = map[string]pending{}, 0, -1
				spawnT, ladderT = f.T, -1
				s.Processes++
			case "step":
				endListen(f.T)
			case "teardown":
				endListen(f.T)
				if f.Data.Step == "ladder" {
					ladderT = f.T
				}
			case "exit":
				if ladderT >= 0 {
					s.TeardownsMs += f.T - ladderT
					ladderT = -1
				}
			}
			continue
		}
		var raw string // a frame's line is a JSON string holding the message
		if json.Unmarshal(f.Raw, &raw) != nil {
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(raw), &m) != nil {
			continue
		}
		if f.Dir == "client" && m.Method != "" {
			endListen(f.T)
		}
		if len(m.ID) == 0 {
			continue
		}
		id := string(m.ID)
		switch {
		case f.Dir == "client" && m.Method != "":
			open[id] = pending{m.Method, f.T}
			if m.Method != "initialize" && m.Method != "session/prompt" {
				if calls == 0 {
					callsT = f.T
				}
				calls++
			}
		case f.Dir == "agent" && m.Method == "":
			p, ok := open[id]
			if !ok {
				continue
			}
			delete(open, id)
			switch p.method {
			case "initialize":
				s.StartsMs += f.T - spawnT
			case "session/prompt":
				s.TurnsMs += f.T - p.t
				s.Prompts++
			default:
				if calls--; calls == 0 {
					s.CallsMs += f.T - callsT
				}
			}
			if p.method == "session/prompt" || p.method == "session/load" || p.method == "session/resume" {
				listenT = f.T
			}
		}
	}
	s.Unanswered += len(open)
	return s, sc.Err()
}

// runTurns times rounds full turns of each real agent in each variant (arguments added to
// acpprobe turn), interleaved.
func runTurns(acpprobe string, agents []agentSpec, work string, warmup, rounds int, variants [][]string, timeout time.Duration, load *loadSampler) []*TurnRun {
	dir := filepath.Join(work, "turns")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	type entry struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	cfg := map[string]map[string]entry{"agents": {}}
	var runs []*TurnRun
	for _, a := range agents {
		if a.Real { // turn runs each in its own sandbox: the config names the agent alone
			cfg["agents"][a.Name] = entry{a.Argv[0], a.Argv[1:]}
			for _, v := range variants {
				runs = append(runs, &TurnRun{Agent: a.Name, Args: v})
			}
		}
	}
	cfgPath := filepath.Join(dir, "agents.json")
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		fatalf("%v", err)
	}
	cwd, env := sandbox(work, "turns")
	fmt.Fprintf(os.Stderr, "driver: turns: %d warm-up + %d rounds of %d agents × %d variants\n", warmup, rounds, len(runs)/max(len(variants), 1), len(variants))
	for r := -warmup; r < rounds; r++ {
		load.sample()
		for k := range runs {
			run := runs[(k+max(r, 0))%len(runs)]
			tr := filepath.Join(dir, "transcript.ndjson")
			argv := append([]string{acpprobe, "turn", "--json", "--config", cfgPath, "--transcript", tr}, run.Args...)
			wall, split, err := measureTurn(append(argv, run.Agent), tr, cwd, env, timeout)
			if r < 0 {
				continue
			}
			if err != nil {
				run.Failed++
				run.Note = "FAILED: " + err.Error()
				continue
			}
			run.Runs = append(run.Runs, turnSplitRun{Round: r, WallMs: wall, turnSplit: split})
		}
	}
	for _, run := range runs {
		var wall, starts, turns, own, calls, teardowns, listens, rest, agent []float64
		for _, x := range run.Runs {
			wall, starts, turns = append(wall, x.WallMs), append(starts, x.StartsMs), append(turns, x.TurnsMs)
			o := x.WallMs - x.StartsMs - x.TurnsMs
			own, calls, teardowns, listens = append(own, o), append(calls, x.CallsMs), append(teardowns, x.TeardownsMs), append(listens, x.ListensMs)
			rest = append(rest, o-x.CallsMs-x.TeardownsMs-x.ListensMs)
			agent = append(agent, x.StartsMs+x.TurnsMs+x.CallsMs+x.TeardownsMs)
			run.Processes, run.Prompts = x.Processes, x.Prompts
			if x.Unanswered > 0 {
				run.Note = fmt.Sprintf("round %d: %d requests unanswered", x.Round, x.Unanswered)
			}
		}
		run.N, run.Wall, run.Starts, run.Turns, run.Own = len(wall), stat(wall), stat(starts), stat(turns), stat(own)
		run.Calls, run.Teardowns, run.Listens, run.Rest = stat(calls), stat(teardowns), stat(listens), stat(rest)
		if cost := run.Starts.Median + run.Turns.Median; cost > 0 {
			run.Ratio = run.Wall.Median / cost
			run.AgentRatio = run.Wall.Median / stat(agent).Median
		}
	}
	return runs
}

// measureTurn runs one full turn and splits its transcript. Any exit code counts (a turn
// exits 1 on a mandatory finding) as long as it printed its JSON result.
func measureTurn(argv []string, transcript, dir string, env []string, timeout time.Duration) (float64, turnSplit, error) {
	_ = os.Remove(transcript)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, turnSplit{}, err
	}
	killer := time.AfterFunc(timeout, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	_ = cmd.Wait()
	wall := ms(time.Since(start))
	killer.Stop()
	reapOrphans()
	var res struct{ Turns json.RawMessage }
	if json.Unmarshal(stdout.Bytes(), &res) != nil || len(res.Turns) == 0 {
		return wall, turnSplit{}, fmt.Errorf("no JSON result with turns: %s", lastLine(stderr.String()))
	}
	f, err := os.Open(transcript)
	if err != nil {
		return wall, turnSplit{}, err
	}
	defer f.Close()
	split, err := splitTranscript(f)
	return wall, split, err
}

func printTurns(w io.Writer, runs []*TurnRun) {
	fmt.Fprintf(w, "\nfull turns: wall, and split by the transcript into the agent's starts and turns and acpprobe's own time (p50 ms);\n")
	fmt.Fprintf(w, "of own: the agent's other calls and teardowns, the listening after each turn, load and resume (≤ %.0f ms each), the rest\n\n", afterWindow)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\tvariant\tn\twall p50\tp90\tstarts\tturns\town\tcalls\tteardowns\tlistens\trest\tprocesses\tprompts\twall/(starts+turns)\twall/agent\t")
	for _, r := range runs {
		fail := ""
		if r.Failed > 0 {
			fail = fmt.Sprintf(" (%d failed)", r.Failed)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d%s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%d\t%d\t%.2f\t%.2f\t\n", r.Agent, turnVariantLabel(r.Args), r.N, fail, r.Wall.Median, r.Wall.P90,
			r.Starts.Median, r.Turns.Median, r.Own.Median, r.Calls.Median, r.Teardowns.Median, r.Listens.Median, r.Rest.Median,
			r.Processes, r.Prompts, r.Ratio, r.AgentRatio)
	}
	tw.Flush()
	for _, r := range runs {
		if r.Note != "" {
			fmt.Fprintf(w, "  %-20s %-16s %s\n", r.Agent, turnVariantLabel(r.Args), r.Note)
		}
	}
}

// turnTargets checks each agent's full turn against targetTurnRatio.
func turnTargets(runs []*TurnRun) []Target {
	var out []Target
	for _, r := range runs {
		if r.N > 0 {
			out = append(out, Target{r.Agent, "full turn " + turnVariantLabel(r.Args) + ": wall over (agent starts + turns)", fmt.Sprintf("≤ %.2f×", targetTurnRatio),
				r.Ratio, "×", r.Ratio <= targetTurnRatio})
		}
	}
	return out
}

// turnVariantLabel names a variant by its arguments.
func turnVariantLabel(args []string) string {
	if len(args) == 0 {
		return "default"
	}
	return strings.Join(args, " ")
}
