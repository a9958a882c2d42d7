package main

import (
	"encoding/json"
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

// The targets of issue 12 (speed a user feels), the handshake's as issue 26 tightened them
// (to hold with margin on every 2-core VM, not on one).
const (
	// acpprobe probe --no-methods against the kill-at-once floor, on the same agent.
	targetOverheadMs = 8
	targetCPUMs      = 16
	targetRSSMiB     = 20
	// Default acpprobe probe on a real agent: at most 1.15× the kill-at-once floor, or the
	// floor + 40 ms, whichever is larger.
	targetFullRatio = 1.15
	targetFullMs    = 40
	// probe --no-methods with a long-used HOME against an empty one (issue 26, item 3): what
	// the inventory of the real HOME adds.
	targetBigHomeMs = 3
	// acpprobe check against the fair-teardown floor (both wait for the agent to leave): its
	// active checks are a few more exchanges, and the analysis judges more frames.
	targetCheckRatio = 1.15
	targetCheckMs    = 60
	targetCheckCPUMs = 30
	targetCheckRSS   = 20
	// A matrix of N ≤ 2×cores agents against its slowest single agent.
	targetMatrixRatio = 1.25
)

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
	Agents      int     `json:"agents,omitempty"`       // agent processes the client started (shims that reported)
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
	// Base is the floor the variant is compared with (floor-kill or floor; none for a floor).
	Base   string `json:"base,omitempty"`
	N      int    `json:"n"`
	Failed int    `json:"failed"`
	Note   string `json:"note,omitempty"`
	Wall   Stat   `json:"wallMs"`
	// RatioToBase is the median wall time over the base floor's; OverheadMs the median minus
	// the floor's median; PairedOverheadMs the median of the per-round differences.
	RatioToBase      float64 `json:"ratioToBase"`
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
	Matrix   *MatrixReport     `json:"matrix,omitempty"`
	Turns    []*TurnRun        `json:"turns,omitempty"`
	Targets  []Target          `json:"targets"`
	Notes    []string          `json:"notes"`
}

func summarise(sums []*Summary) {
	byName := map[string]*Summary{}
	for _, s := range sums {
		byName[s.Variant] = s
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
	for _, s := range sums {
		floor := byName[s.Base]
		if s.Base == "" {
			floor = s
		}
		if s.N == 0 || floor == nil || floor.N == 0 {
			continue
		}
		s.RatioToBase = s.Wall.Median / floor.Wall.Median
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
	for _, s := range results {
		if s.N == 0 {
			continue
		}
		variant, who := s.Variant, s.Agent
		if rest, ok := strings.CutPrefix(variant, "candidate:"); ok {
			name, v, _ := strings.Cut(rest, ":")
			variant, who = v, s.Agent+" ("+name+")"
		}
		switch variant {
		case "probe":
			out = append(out,
				Target{who, "probe --no-methods: wall over the kill-at-once floor", "≤ 8 ms", s.OverheadMs, "ms", s.OverheadMs <= targetOverheadMs},
				Target{who, "probe --no-methods: client CPU", "≤ 16 ms", s.ClientCPU.Median, "ms", s.ClientCPU.Median <= targetCPUMs},
				Target{who, "probe --no-methods: client peak RSS", "≤ 20 MiB", s.ClientRSSKB.Median / 1024, "MiB", s.ClientRSSKB.Median/1024 <= targetRSSMiB})
		case "probe-bighome":
			// The same build's probe, in the same rounds, with the throwaway HOME.
			i := slices.IndexFunc(results, func(p *Summary) bool {
				return p.Agent == s.Agent && p.Variant == strings.TrimSuffix(s.Variant, "-bighome") && p.N > 0
			})
			if i >= 0 {
				d := s.Wall.Median - results[i].Wall.Median
				out = append(out, Target{who, "probe --no-methods: wall with a long-used HOME over an empty one", "≤ 3 ms", d, "ms", d <= targetBigHomeMs})
			}
		case "probe-full":
			floor := s.Wall.Median - s.OverheadMs
			limit := math.Max(targetFullRatio*floor, floor+targetFullMs)
			out = append(out, Target{who, "probe: wall (kill-at-once floor " + strconv.FormatFloat(floor, 'f', 0, 64) + " ms)",
				fmt.Sprintf("≤ %.0f ms (max of 1.15×, +40 ms)", limit), s.Wall.Median, "ms", s.Wall.Median <= limit})
		case "check":
			// check starts a second agent process for its fork probe when the agent advertises
			// session/fork (and a third with --deep): its bar is a floor per agent process.
			floor := s.Wall.Median - s.OverheadMs
			n := agentsPerRun(s)
			limit := math.Max(targetCheckRatio*n*floor, n*floor+targetCheckMs)
			out = append(out,
				Target{who, fmt.Sprintf("check: wall (fair-teardown floor %.0f ms × %.0f agent processes)", floor, n),
					fmt.Sprintf("≤ %.0f ms (max of 1.15×, +60 ms)", limit), s.Wall.Median, "ms", s.Wall.Median <= limit},
				Target{who, "check: client CPU", "≤ 30 ms", s.ClientCPU.Median, "ms", s.ClientCPU.Median <= targetCheckCPUMs},
				Target{who, "check: client peak RSS", "≤ 20 MiB", s.ClientRSSKB.Median / 1024, "MiB", s.ClientRSSKB.Median/1024 <= targetCheckRSS})
		}
	}
	return out
}

// agentsPerRun is the median number of agent processes a run of s started (1 when unknown).
func agentsPerRun(s *Summary) float64 {
	var n []float64
	for _, r := range s.Runs {
		if r.OK && r.Agents > 0 {
			n = append(n, float64(r.Agents))
		}
	}
	if len(n) == 0 {
		return 1
	}
	return stat(n).Median
}

func printTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "acpprobe handshake benchmark — %s, %s cores, %s; %s\n", rep.Machine["cpu"], rep.Machine["cores"], rep.Machine["kernel"], rep.Started.Format(time.RFC3339))
	fmt.Fprintf(w, "acpprobe %s · go %s · node %s · @agentclientprotocol/sdk %s · client CPU/RSS measured apart from the agent: %v\n",
		rep.Versions["acpprobe"], rep.Versions["go"], rep.Versions["node"], rep.Versions["@agentclientprotocol/sdk"], rep.Settings["shim"])
	fmt.Fprintf(w, "load average (1 min) during the run: %s\n\n", rep.Machine["loadavgDuring"])
	if len(rep.Results) > 0 { // none with -variants '' (the turn benchmark alone)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "agent\tvariant\tn\twall p50 ms\tp90\tvs\t× floor\t+ms p50\town ms p50\t+own ms\tclient CPU ms\tclient RSS MiB\tagent CPU ms\tagent RSS MiB\t")
		for _, s := range rep.Results {
			fail := ""
			if s.Failed > 0 {
				fail = fmt.Sprintf(" (%d failed)", s.Failed)
			}
			masked := ""
			if s.RSSMasked > 0 {
				masked = "≤"
			}
			base := map[string]string{"floor": "fair", "floor-kill": "kill", "": "—"}[s.Base]
			fmt.Fprintf(tw, "%s\t%s\t%d%s\t%.1f\t%.1f\t%s\t%.2f\t%+.1f\t%.1f\t%+.1f\t%.1f\t%s%.1f\t%.1f\t%.1f\t\n", s.Agent, s.Label, s.N, fail,
				s.Wall.Median, s.Wall.P90, base, s.RatioToBase, s.OverheadMs, s.Outside.Median, s.OutsideOverheadMs, s.ClientCPU.Median, masked,
				s.ClientRSSKB.Median/1024, s.AgentCPU.Median, s.AgentRSSKB.Median/1024)
		}
		tw.Flush()
		fmt.Fprintln(w, "\nvs: the floor a variant is compared with — kill: the raw client stopping the agent at once")
		fmt.Fprintln(w, "(as real clients and acpprobe probe do); fair: the raw client waiting up to 2 s for the agent to")
		fmt.Fprintln(w, "leave by itself (as acpprobe check does). × floor, +ms: median wall time over / minus that floor's.")
		fmt.Fprintln(w, "own ms: wall time minus the agent's life (the client's start-up before the agent runs and its work")
		fmt.Fprintln(w, "after the agent ended), free of the agent's own variance; +own ms: minus the floor's. client CPU/RSS:")
		fmt.Fprintln(w, "the client process and what it reaped (user+sys, ru_maxrss; ≤: not above the shim's, an upper bound):")
		fmt.Fprintln(w, "acpprobe is a subreaper, so an agent's child it kills after the agent has gone (claude-agent-acp's CLI)")
		fmt.Fprintln(w, "counts there, not as acpprobe's own work; agent: the agent and the children it reaped itself.")
		fmt.Fprintln(w, "\nwhat each variant got back (first successful run):")
		width := 0
		for _, s := range rep.Results {
			width = max(width, len(s.Label))
		}
		for _, s := range rep.Results {
			fmt.Fprintf(w, "  %-17s %-*s  %s\n", s.Agent, width, s.Label, s.Note)
		}
	}
	if rep.Matrix != nil {
		printMatrix(w, rep.Matrix)
	}
	if len(rep.Turns) > 0 {
		printTurns(w, rep.Turns)
	}
	fmt.Fprintln(w, "\ntargets:")
	for _, t := range rep.Targets {
		mark := "MET "
		if !t.Met {
			mark = "MISS"
		}
		prec := 1
		if t.Unit == "×" {
			prec = 3
		}
		fmt.Fprintf(w, "  %s %-24s %-56s %8.*f %-3s (target %s)\n", mark, t.Agent, t.What, prec, t.Measured, t.Unit, t.Target)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// loadSampler keeps the 1-minute load average sampled during the run.
type loadSampler struct{ samples []float64 }

func (l *loadSampler) sample() {
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f, err := strconv.ParseFloat(strings.Fields(string(b))[0], 64); err == nil {
			l.samples = append(l.samples, f)
		}
	}
}

func (l *loadSampler) String() string {
	if len(l.samples) == 0 {
		return "unknown"
	}
	s := stat(l.samples)
	sum := 0.0
	for _, x := range l.samples {
		sum += x
	}
	return fmt.Sprintf("mean %.2f, median %.2f, %.2f–%.2f over %d samples", sum/float64(len(l.samples)), s.Median, s.Min, s.Max, len(l.samples))
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
