package matrix_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transcript"
	"github.com/acpprobe/acpprobe/transport"
)

// patience bounds every wait of these tests; the agents themselves answer in milliseconds.
const patience = 30 * time.Second

// gate runs reference agents in-process that, once started, wait for the test to release them
// before they read anything, and counts the agents running at once.
type gate struct {
	started chan start // one per agent start
	mu      sync.Mutex
	running int
	max     int
	release map[string]chan struct{}
}

type start struct {
	id      string
	running int // agents running when it started, itself included
}

func newGate(ids ...string) *gate {
	g := &gate{started: make(chan start, len(ids)), release: map[string]chan struct{}{}}
	for _, id := range ids {
		g.release[id] = make(chan struct{})
	}
	return g
}

// target is the agent id of persona, held by the gate; its budgets leave the test, not a
// timeout, in charge.
func (g *gate) target(t *testing.T, id string, cfg acptest.Config) matrix.Target {
	serve := func(ctx context.Context, in io.Reader, out, errw io.Writer) error {
		g.mu.Lock()
		g.running++
		g.max = max(g.max, g.running)
		n := g.running
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.running--
			g.mu.Unlock()
		}()
		g.started <- start{id, n}
		select {
		case <-g.release[id]:
		case <-ctx.Done():
			return ctx.Err()
		}
		return acptest.Serve(ctx, in, out, errw, cfg)
	}
	return target(t, id, transport.Pipe{Name: id, Serve: serve})
}

func target(t *testing.T, id string, l transport.Launcher) matrix.Target {
	return matrix.Target{ID: id, Source: "test", Launch: id, Options: probe.Options{
		Launcher: l, Cwd: t.TempDir(), Timeout: patience, StartupTimeout: patience,
		RequestTimeout: 5 * time.Second, Grace: 100 * time.Millisecond,
	}}
}

// run runs the matrix on its own goroutine; the channel yields it when done.
func run(ctx context.Context, targets []matrix.Target, o matrix.Options) <-chan *matrix.Matrix {
	done := make(chan *matrix.Matrix, 1)
	go func() { done <- matrix.Run(ctx, targets, o) }()
	return done
}

func wait[T any](t *testing.T, c <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(patience)
	defer timer.Stop()
	select {
	case v := <-c:
		return v
	case <-timer.C:
		t.Fatalf("no %s within %s", what, patience)
	}
	panic("unreachable")
}

// TestRowsInTargetOrder: the agents finish in the reverse of their order, and the rows are
// still in the targets' order, each with its own agent's result.
func TestRowsInTargetOrder(t *testing.T) {
	personas := []string{"claude", "codex", "gemini", "codebuddy"}
	g := newGate(personas...)
	var targets []matrix.Target
	for _, p := range personas {
		targets = append(targets, g.target(t, p, acptest.Config{Persona: p}))
	}
	finished := make(chan int, len(targets))
	done := run(t.Context(), targets, matrix.Options{Parallel: len(targets), Progress: func(e matrix.Event) {
		if e.Done {
			finished <- e.Index
		}
	}})
	for range targets {
		wait(t, g.started, "agent start")
	}
	for i := len(personas) - 1; i >= 0; i-- {
		close(g.release[personas[i]])
		if got := wait(t, finished, "finished agent"); got != i {
			t.Fatalf("agent %d finished, want %d (released alone)", got, i)
		}
	}
	m := wait(t, done, "matrix")
	if len(m.Rows) != len(personas) {
		t.Fatalf("%d rows, want %d", len(m.Rows), len(personas))
	}
	for i, p := range personas {
		row := m.Rows[i]
		if row.ID != p || row.Result == nil || row.Result.AgentInfo == nil || row.Result.AgentInfo.Name != "acptest-"+p {
			t.Errorf("row %d = %s (problem %q), want %s with agentInfo acptest-%s", i, row.ID, row.Problem, p, p)
		}
	}
}

// TestParallelBound: never more agents at once than Parallel (DefaultParallel() when 0), and
// the bound is reached.
func TestParallelBound(t *testing.T) {
	for _, asked := range []int{2, 0} {
		t.Run(fmt.Sprint("parallel=", asked), func(t *testing.T) { parallelBound(t, asked) })
	}
}

func parallelBound(t *testing.T, asked int) {
	parallel := asked
	if asked == 0 {
		parallel = matrix.DefaultParallel()
	}
	if parallel < 2 || parallel > 16 {
		t.Fatalf("DefaultParallel() = %d, want 2 to 16", parallel)
	}
	var ids []string
	for i := range parallel + 2 {
		ids = append(ids, fmt.Sprint("agent-", i))
	}
	g := newGate(ids...)
	var targets []matrix.Target
	for _, id := range ids {
		targets = append(targets, g.target(t, id, acptest.Config{Persona: "minimal"}))
	}
	done := run(t.Context(), targets, matrix.Options{Parallel: asked})
	// Release the oldest running agent only when every slot is taken (or every agent has
	// started): an agent that starts beyond the bound starts while the others are held.
	var held []string
	started := 0
	for released := 0; released < len(ids); {
		if len(held) == parallel || (started == len(ids) && len(held) > 0) {
			close(g.release[held[0]])
			held = held[1:]
			released++
			continue
		}
		s := wait(t, g.started, "agent start")
		started++
		held = append(held, s.id)
		if s.running > parallel {
			t.Errorf("agent %s started with %d agents running, want at most %d", s.id, s.running, parallel)
		}
	}
	m := wait(t, done, "matrix")
	g.mu.Lock()
	most := g.max
	g.mu.Unlock()
	if most != parallel {
		t.Errorf("at most %d agents ran at once, want %d", most, parallel)
	}
	for _, row := range m.Rows {
		if row.Result == nil || row.Result.Error != nil {
			t.Errorf("row %s: problem %q, error %v", row.ID, row.Problem, resultError(row))
		}
	}
}

// TestFailuresStopNothing: an agent that cannot run here, one that crashes, one that hangs,
// one with options the probe cannot use: each row says why, and the others are probed.
func TestFailuresStopNothing(t *testing.T) {
	hang := target(t, "hangs", acptest.Launcher(acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: "initialize"}}))
	hang.Options.StartupTimeout = 300 * time.Millisecond
	unusable := target(t, "unusable", acptest.Launcher(acptest.Config{Persona: "claude"}))
	unusable.Options.AuthPolicy = "maybe"
	targets := []matrix.Target{
		target(t, "claude", acptest.Launcher(acptest.Config{Persona: "claude"})),
		{ID: "kimi", Source: "registry", Problem: "kimi not found on PATH"},
		target(t, "crashes", acptest.Launcher(acptest.Config{Persona: "claude", Faults: acptest.Faults{ExitBefore: "initialize"}})),
		unusable,
		hang,
		target(t, "gemini", acptest.Launcher(acptest.Config{Persona: "gemini"})),
	}
	m := matrix.Run(t.Context(), targets, matrix.Options{Parallel: 2, Check: &acpprobe.Check{}})
	errCode := func(i int) report.ErrorCode {
		if e := resultError(m.Rows[i]); e != nil {
			return e.Code
		}
		return ""
	}
	for _, i := range []int{0, 5} {
		if r := m.Rows[i].Result; r == nil || r.Error != nil || r.AgentInfo == nil {
			t.Errorf("row %s: problem %q, error %v; want a clean probe", m.Rows[i].ID, m.Rows[i].Problem, resultError(m.Rows[i]))
		}
	}
	if row := m.Rows[1]; row.Problem != "kimi not found on PATH" || row.Result != nil {
		t.Errorf("row kimi: problem %q, result %t; want the target's problem and no result", row.Problem, row.Result != nil)
	}
	if got := errCode(2); got != report.ErrAgentCrashed {
		t.Errorf("row crashes: error %q, want %q", got, report.ErrAgentCrashed)
	}
	if row := m.Rows[3]; !strings.Contains(row.Problem, `unknown auth policy "maybe"`) || row.Result != nil {
		t.Errorf("row unusable: problem %q, result %t; want acpprobe.Run's error and no result", row.Problem, row.Result != nil)
	}
	if got := errCode(4); got != report.ErrInitializeTimeout {
		t.Errorf("row hangs: error %q, want %q", got, report.ErrInitializeTimeout)
	}
}

// TestInterrupted: cancelling the context stops the running agent (its result says
// interrupted) and starts no other: their rows say so.
func TestInterrupted(t *testing.T) {
	ids := []string{"first", "second", "third", "fourth"}
	g := newGate(ids...)
	var targets []matrix.Target
	for _, id := range ids {
		targets = append(targets, g.target(t, id, acptest.Config{Persona: "claude"}))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := run(ctx, targets, matrix.Options{Parallel: 1})
	if s := wait(t, g.started, "agent start"); s.id != "first" {
		t.Fatalf("%s started first", s.id)
	}
	cancel()
	m := wait(t, done, "matrix")
	if r := m.Rows[0].Result; r == nil || r.Error == nil || r.Error.Code != report.ErrInterrupted {
		t.Errorf("row first: problem %q, error %v; want an interrupted probe", m.Rows[0].Problem, resultError(m.Rows[0]))
	}
	for _, row := range m.Rows[1:] {
		if row.Problem != "interrupted before it started" || row.Result != nil {
			t.Errorf("row %s: problem %q, error %v; want interrupted before it started", row.ID, row.Problem, resultError(row))
		}
	}
	if n := len(g.started); n != 0 {
		t.Errorf("%d more agents started after the interrupt", n)
	}
}

// TestFileNamesNeverCollide: ids that a safe file name would merge, or that would overwrite
// the matrix's own file, get distinct names (issue 11, F14).
func TestFileNamesNeverCollide(t *testing.T) {
	long := strings.Repeat("x", 300) // an id longer than a file name may be (255 bytes)
	ids := []string{"a/b", "a_b", "a b", "A_b", "matrix", "Matrix", "", ".", "..", "agent", "claude-acp", long, long + "y"}
	seen := map[string]string{}
	for _, id := range ids {
		name := matrix.FileName(id)
		if other, ok := seen[strings.ToLower(name)]; ok {
			t.Errorf("%q and %q share the file name %q", id, other, name)
		}
		seen[strings.ToLower(name)] = id
		if strings.EqualFold(name, "matrix") || strings.ContainsAny(name, "/ ") || name == "." || name == ".." || len(name+".ndjson") > 255 {
			t.Errorf("FileName(%q) = %q", id, name)
		}
	}
	if matrix.FileName("claude-acp") != "claude-acp" {
		t.Error("a safe id changed")
	}
}

// TestOutDir: each agent's result and transcript land in OutDir under a name made safe from
// its id; the transcript analyses back to the row's result.
func TestOutDir(t *testing.T) {
	dir := t.TempDir()
	targets := []matrix.Target{
		target(t, "claude", acptest.Launcher(acptest.Config{Persona: "claude"})),
		target(t, "vendor/gemini", acptest.Launcher(acptest.Config{Persona: "gemini"})),
	}
	m := matrix.Run(t.Context(), targets, matrix.Options{OutDir: dir})
	for i, name := range []string{"claude", "vendor_gemini-a6f1aedb"} {
		row := m.Rows[i]
		if row.Result == nil {
			t.Fatalf("row %s: no result (problem %q)", row.ID, row.Problem)
		}
		if want := filepath.Join(dir, name+".ndjson"); row.Transcript != want {
			t.Errorf("row %s: transcript %q, want %q", row.ID, row.Transcript, want)
		}
		b, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, ext := range []string{".json", ".ndjson"} {
			if st, err := os.Stat(filepath.Join(dir, name+ext)); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("%s%s: mode %v (%v), want 0600: a record is its owner's only", name, ext, st.Mode().Perm(), err)
			}
		}
		var saved report.Result
		if err := json.Unmarshal(b, &saved); err != nil {
			t.Fatalf("%s.json: %v", name, err)
		}
		if saved.AgentInfo == nil || saved.AgentInfo.Name != row.Result.AgentInfo.Name || len(saved.Findings) != len(row.Result.Findings) {
			t.Errorf("%s.json holds %+v, want the row's result", name, saved.AgentInfo)
		}
		f, err := os.Open(row.Transcript)
		if err != nil {
			t.Fatal(err)
		}
		h, frames, err := transcript.Read(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", row.Transcript, err)
		}
		if h.Tool != "matrix" {
			t.Errorf("%s: tool %q, want matrix", row.Transcript, h.Tool)
		}
		r, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.AgentInfo == nil || r.AgentInfo.Name != row.Result.AgentInfo.Name || len(r.Findings) != len(row.Result.Findings) {
			t.Errorf("%s analyses to %+v with %d findings, want the row's %d", row.Transcript, r.AgentInfo, len(r.Findings), len(row.Result.Findings))
		}
	}
}

// TestOutDirErrors: a transcript that cannot be created stops that agent before it is
// launched, and a result file that cannot be written is the row's problem, not silence.
func TestOutDirErrors(t *testing.T) {
	g := newGate("claude")
	m := matrix.Run(t.Context(), []matrix.Target{g.target(t, "claude", acptest.Config{Persona: "claude"})},
		matrix.Options{OutDir: filepath.Join(t.TempDir(), "missing")})
	if row := m.Rows[0]; !strings.HasPrefix(row.Problem, "transcript: ") || row.Result != nil {
		t.Errorf("problem %q, result %t; want the transcript's error and no result", row.Problem, row.Result != nil)
	}
	if n := len(g.started); n != 0 {
		t.Errorf("the agent was launched without its transcript")
	}

	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "claude.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	m = matrix.Run(t.Context(), []matrix.Target{target(t, "claude", acptest.Launcher(acptest.Config{Persona: "claude"}))},
		matrix.Options{OutDir: dir})
	if row := m.Rows[0]; !strings.HasPrefix(row.Problem, "result: ") || !strings.Contains(row.Problem, "claude.json") {
		t.Errorf("problem %q; want the result file's error", row.Problem)
	}
}

// resultError is the error of a row's result, if it has one.
func resultError(row matrix.Row) *report.Error {
	if row.Result == nil {
		return nil
	}
	return row.Result.Error
}

// rawAgent answers initialize with meta as its _meta, session/new with a session, and every
// other request with "method not found", until its stdin ends.
func rawAgent(meta string) transport.Pipe {
	return transport.Pipe{Name: "raw", Serve: func(ctx context.Context, in io.Reader, out, _ io.Writer) error {
		sc := bufio.NewScanner(in)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.ID == nil {
				continue
			}
			var answer string
			switch m.Method {
			case "initialize":
				answer = `"result":{"protocolVersion":1,"agentCapabilities":{},"agentInfo":{"name":"raw","version":"1"},"_meta":` + meta + `}`
			case "session/new":
				answer = `"result":{"sessionId":"s"}`
			default:
				answer = `"error":{"code":-32601,"message":"Method not found"}`
			}
			if _, err := fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", m.ID, answer); err != nil {
				return err
			}
		}
		return nil
	}}
}

// TestOutDirFilesLinear (issue 12): the result file of an agent that nests a value 9000 deep
// stays proportional to the value (it was written with json.MarshalIndent, which writes about
// d²/2 spaces for a value nested d deep: 162 MB for these 54 KB).
func TestOutDirFilesLinear(t *testing.T) {
	const depth = 9000
	deep := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	dir := t.TempDir()
	m := matrix.Run(t.Context(), []matrix.Target{target(t, "deep", rawAgent(deep))}, matrix.Options{OutDir: dir})
	row := m.Rows[0]
	if row.Result == nil || !strings.Contains(string(row.Result.Raw.Initialize), deep) {
		t.Fatalf("no result carrying the value (problem %q)", row.Problem)
	}
	st, err := os.Stat(filepath.Join(dir, "deep.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a %d-byte value nested %d deep: a %d-byte result file", len(deep), depth, st.Size())
	if st.Size() > 4*int64(len(deep))+64<<10 {
		t.Errorf("a %d-byte value nested %d deep gave a %d-byte result file", len(deep), depth, st.Size())
	}
}
