// Package matrix probes many agents at once and gathers their results into one document: the
// capability matrix that acpprobe matrix renders as a terminal table, Markdown, JSON or HTML,
// and that acpprobe diff compares with an older one.
package matrix

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/clientprofile"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/jsonout"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transcript"
)

// Schema names the version of the Matrix document.
const Schema = "acpprobe.matrix/v1"

// Matrix is the result of probing several agents.
type Matrix struct {
	Schema      string `json:"schema"`
	Version     string `json:"acpprobeVersion"`
	GeneratedAt string `json:"generatedAt"`
	Rows        []Row  `json:"agents"`
	// Surfaces are, for each agent probed as several client profiles (matrix
	// --client-profiles), what differs between the profiles' runs, in the agents' order.
	Surfaces []Surface `json:"surfaces,omitempty"`
}

// Surface is the surface by client of one agent of the matrix: the rows of its profiles, and
// every item of its answers that not every profile was shown (clientprofile.Surface).
type Surface struct {
	Agent       string              `json:"agent"`
	Profiles    []string            `json:"profiles"`
	Differences []report.Difference `json:"differences"`
}

// Row is one agent of the matrix: its probe result, or why it could not be probed at all.
type Row struct {
	ID     string `json:"id"`
	Source string `json:"source"` // registry, builtin, config, command, reference
	// Launch is the command line that was run.
	Launch string `json:"launch"`
	// Problem says why the agent was not launched (it cannot run here, or the matrix was
	// interrupted first), or why its record could not be kept (its transcript or result file
	// in OutDir could not be written); Result is then nil.
	Problem string `json:"problem,omitempty"`
	// Profile is the client profile the agent was probed as, when the matrix runs several
	// (its ID is then the agent's id, "@" and the profile).
	Profile    string         `json:"profile,omitempty"`
	Result     *report.Result `json:"result,omitempty"`
	Transcript string         `json:"transcript,omitempty"`
}

// Target is one agent to probe.
type Target struct {
	ID      string
	Source  string
	Launch  string
	Options probe.Options // Log is set by Run
	// Problem, when set, means the agent cannot be launched here; it is reported, not run.
	Problem string
	// Agent and Profile, when Profile is set, are the agent's own id and the client profile
	// it is probed as (Options carries the profile's clientCapabilities and clientInfo): the
	// rows of one Agent are compared in Matrix.Surfaces.
	Agent, Profile string
	// Client, when set, is the client profile of the run, whose section the result gets
	// (report.Result.Client, from the recorded initialize).
	Client *clientprofile.Profile
}

// Event reports the progress of one agent.
type Event struct {
	Index   int
	ID      string
	Done    bool
	Row     *Row // when Done
	Elapsed time.Duration
}

// Options configure a matrix run.
type Options struct {
	// Parallel bounds the agents probed at once (DefaultParallel() when 0).
	Parallel int
	// Check, when set, runs the active checks of acpprobe check on every agent.
	Check *acpprobe.Check
	// OutDir, when set, receives <id>.json (the result) and <id>.ndjson (the transcript).
	OutDir string
	// Redactor filters every record (nil: no redaction).
	Redactor *transcript.Redactor
	// Catalogue classifies vendor extensions (extensions.Default() when nil).
	Catalogue *extensions.Catalogue
	// Progress, when set, is called as agents start and finish (from several goroutines).
	Progress func(Event)
	// Run runs one target and makes its report (acpprobe.Run when nil); matrix --turns runs
	// the prompt turns instead.
	Run func(ctx context.Context, t Target, o acpprobe.Options) (*report.Result, error)
	// Isolate, when set, runs every agent in a sandbox of its own made from these options
	// (acpprobe matrix does by default). With KeepDir, each agent's sandbox is kept in a
	// directory of its own under it, named like its files (FileName).
	Isolate *sandbox.Options
	// AuthAB runs the auth oracle on every agent (see acpprobe.Options.AuthAB).
	AuthAB bool
}

// DefaultParallel is the number of agents probed at once by default: twice the CPUs this
// process may use (GOMAXPROCS, which follows the CPU affinity and a cgroup's CPU limit), at
// least 2 and at most 16. An agent's probe is partly waiting (on its answers, on its exit), so
// on 2 cores 4 agents take about as long as 2 at a time, and far less than 1 (bench/driver
// -matrix-parallel, BENCHMARKS.md); the upper bound keeps the memory of that many agents (a
// Node.js agent holds 100-300 MiB) within reach of a large machine.
func DefaultParallel() int {
	return min(max(2*runtime.GOMAXPROCS(0), 2), 16)
}

// Run probes the targets concurrently, at most Parallel at once and started in the targets'
// order, and returns the matrix, rows in the targets' order. One agent's failure never stops
// the others: its row says why. Cancelling ctx stops the running probes (their results say
// interrupted) and starts no other: their rows say "interrupted before it started".
func Run(ctx context.Context, targets []Target, o Options) *Matrix {
	if o.Parallel <= 0 {
		o.Parallel = DefaultParallel()
	}
	m := &Matrix{Schema: Schema, Version: probe.Version, GeneratedAt: time.Now().UTC().Format(time.RFC3339), Rows: make([]Row, len(targets))}
	var (
		mu   sync.Mutex
		next int // the first target no worker has taken
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(targets) || ctx.Err() != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	var wg sync.WaitGroup
	for range min(o.Parallel, len(targets)) {
		wg.Go(func() {
			for i, ok := take(); ok; i, ok = take() {
				t := targets[i]
				start := time.Now()
				if o.Progress != nil {
					o.Progress(Event{Index: i, ID: t.ID})
				}
				m.Rows[i] = probeOne(ctx, t, o)
				if o.Progress != nil {
					o.Progress(Event{Index: i, ID: t.ID, Done: true, Row: &m.Rows[i], Elapsed: time.Since(start)})
				}
			}
		})
	}
	wg.Wait()
	for i := next; i < len(targets); i++ {
		t := targets[i]
		m.Rows[i] = Row{ID: t.ID, Source: t.Source, Launch: t.Launch, Profile: t.Profile, Problem: "interrupted before it started"}
	}
	m.Surfaces = surfaces(targets, m.Rows)
	return m
}

// surfaces compares the rows of each agent probed as several client profiles (its targets
// share Agent), in the order of the agents' first rows. A row without a result (the agent
// could not run, or the matrix was interrupted) is compared as a run that was shown nothing.
func surfaces(targets []Target, rows []Row) []Surface {
	var order []string
	runs := map[string][]report.ProfileRun{}
	for i, t := range targets {
		if t.Profile == "" {
			continue
		}
		if runs[t.Agent] == nil {
			order = append(order, t.Agent)
		}
		r := rows[i].Result
		if r == nil {
			r = &report.Result{}
		}
		runs[t.Agent] = append(runs[t.Agent], report.ProfileRun{Profile: t.Profile, Result: r})
	}
	var out []Surface
	for _, agent := range order {
		if len(runs[agent]) < 2 {
			continue
		}
		s := Surface{Agent: agent, Differences: clientprofile.Surface(runs[agent]).Differences}
		for _, run := range runs[agent] {
			s.Profiles = append(s.Profiles, run.Profile)
		}
		out = append(out, s)
	}
	return out
}

// probeOne probes one target, recording its session (into OutDir when set), and makes its row.
func probeOne(ctx context.Context, t Target, o Options) Row {
	row := Row{ID: t.ID, Source: t.Source, Launch: t.Launch, Profile: t.Profile}
	if t.Problem != "" {
		row.Problem = t.Problem
		return row
	}
	path := ""
	if o.OutDir != "" {
		path = filepath.Join(o.OutDir, FileName(t.ID)+".ndjson")
	}
	rec, err := transcript.Record(path, transcript.Header{Version: probe.Version, Tool: "matrix", Command: t.Launch,
		Argv: t.Options.Launcher.CommandLine(), Cwd: t.Options.Cwd}, o.Redactor)
	if err != nil {
		row.Problem = "transcript: " + err.Error()
		return row
	}
	row.Transcript = rec.Path
	opts := t.Options
	opts.Log = rec.Log
	ro := acpprobe.Options{Probe: opts, Check: o.Check, Analyze: acpprobe.AnalyzeOptions{Catalogue: o.Catalogue}, AuthAB: o.AuthAB}
	if o.Isolate != nil {
		so := *o.Isolate
		if so.KeepDir != "" {
			if err := os.MkdirAll(so.KeepDir, 0o700); err != nil {
				row.Problem = "--keep-sandbox: " + err.Error()
				_ = rec.Close()
				return row
			}
			so.KeepDir = filepath.Join(so.KeepDir, FileName(t.ID))
		}
		ro.Isolate = &so
	}
	run := o.Run
	if run == nil {
		run = func(ctx context.Context, _ Target, ao acpprobe.Options) (*report.Result, error) {
			return acpprobe.Run(ctx, ao)
		}
	}
	r, err := run(ctx, t, ro)
	if err != nil {
		row.Problem = err.Error()
	} else if t.Client != nil {
		r.Client = t.Client.Section(rec.Log.Frames())
	}
	if err := rec.Close(); err != nil && row.Problem == "" {
		row.Problem = "transcript: " + err.Error()
	}
	if row.Problem == "" && o.OutDir != "" {
		if err := writeResult(filepath.Join(o.OutDir, FileName(t.ID)+".json"), r); err != nil {
			row.Problem = "result: " + err.Error()
		}
	}
	if row.Problem != "" {
		return row
	}
	row.Result = r
	return row
}

// writeResult writes a result to path as acpprobe probe --json prints it (jsonout: the size
// of the file stays proportional to the result however deep the agent nested its values).
func writeResult(path string, r *report.Result) error {
	b, err := jsonout.Indent(r)
	if err != nil {
		return err
	}
	f, err := transcript.CreatePrivate(path)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxFileStem is the longest part of an agent id a file name keeps (FileName).
const maxFileStem = 120

var unsafeName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]+`) })

// FileName is an agent id made safe as a file name, and unique: an id that had to change
// (a/b and a_b both become a_b), that has capitals (a case-insensitive file system would
// merge A and a) or that names the matrix's own file gets a short hash of the id appended, so
// that no two agents share a file and none overwrites matrix.json. A long id is cut to
// maxFileStem bytes before the hash: with the hash and ".ndjson" the name stays well under the
// 255 bytes a file name may have (a 300-byte id failed with "file name too long").
func FileName(id string) string {
	s := unsafeName().ReplaceAllString(id, "_")
	if s == "" || s == "." || s == ".." {
		s = "agent"
	}
	s = s[:min(len(s), maxFileStem)]
	if s != id || strings.ToLower(s) != s || strings.EqualFold(s, "matrix") {
		sum := sha256.Sum256([]byte(id))
		s += "-" + hex.EncodeToString(sum[:4])
	}
	return s
}
