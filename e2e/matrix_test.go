package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// matrixIDs are the agents of TestMatrixRealAgents, in the order given: the real agents by
// their names in an agents config file, then two reference personas.
var matrixIDs = append(append([]string{}, pinnedNames...), "acptest-claude", "acptest-codex")

// matrixTitles are the column titles of every format.
var matrixTitles = []string{"Agent", "Version", "Protocol", "Auth", "Prompt content", "MCP", "Session caps",
	"load", "resume", "list", "close", "fork", "delete", "Modes", "Models", "Config options", "Reasoning",
	"Findings M/C/A/I", "Startup ms", "Side effects", "Auth A/B", "Status"}

// notKnown is the cell of what an agent never said: the modes, models, config options and
// reasoning levels of one whose session/new did not succeed (render.NotKnown).
const notKnown = "?"

// matrixRow is what the suite expects of one agent of the matrix.
type matrixRow struct {
	version, auth, prompt, mcp, sessions string
	methods                              string // load resume list close fork delete, as "yes no …"
	modes, config                        string
	findings                             []string // "TIER id pointer", sorted
	status                               string   // the Status cell (in full)
	htmlStatus                           string   // the row class of the HTML page
	// optional are findings the row may have or not (id → why), as in wantFindings.
	optional map[string]string
}

// TestMatrixRealAgents runs `acpprobe matrix --config cfg.json --parallel 4 --out DIR --format
// json claude codex gemini acptest-claude acptest-codex` once (claude-agent-acp in the
// sandbox's default: IS_SANDBOX empty) and checks the matrix it prints: the rows in order, each
// agent's status, protocol, auth methods, method support and findings; the files of --out
// (<id>.json, <id>.ndjson, matrix.json) and `acpprobe analyze` of a transcript there; the
// progress lines on stderr; that the agents ran concurrently (at most 4 at once, and the wall
// time well below the sum of the probes' times). The text, Markdown and HTML renderings of the
// same matrix (render.MatrixText, MatrixMarkdown, MatrixHTML: what --format text, md and html
// print) are checked cell by cell.
func TestMatrixRealAgents(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	acpprobe := buildCLI(t)
	box := newSandbox(t)
	cfg := writeAgentsConfig(t, t.TempDir(), realConfigAgents(t, false))
	out := filepath.Join(t.TempDir(), "out")

	start := time.Now()
	code, stdout, stderr := runCLI(t, box, "matrix", append([]string{"--config", cfg, "--parallel", "4", "--out", out,
		"--format", "json"}, matrixIDs...)...)
	wall := time.Since(start)
	t.Logf("acpprobe matrix: exit %d in %v", code, wall.Round(time.Millisecond))
	check(t, "exit code", code, 0)

	var m matrix.Matrix
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("stdout is not a matrix: %v\n%s", err, stdout)
	}
	check(t, "schema", m.Schema, matrix.Schema)
	check(t, "acpprobeVersion", m.Version, probe.Version)
	if _, err := time.Parse(time.RFC3339, m.GeneratedAt); err != nil {
		t.Errorf("generatedAt %q: %v", m.GeneratedAt, err)
	}
	var ids []string
	for _, r := range m.Rows {
		ids = append(ids, r.ID)
	}
	check(t, "rows", ids, matrixIDs)
	if len(m.Rows) != len(matrixIDs) {
		t.FailNow()
	}

	// The matrix isolates each agent (env+home), which drops IS_SANDBOX: claude-agent-acp's
	// session works as root, without bypassPermissions; otherwise it offers that mode too.
	claudeModes := "default, acceptEdits, plan, auto"
	if os.Geteuid() != 0 {
		claudeModes += ", bypassPermissions"
	}
	const codexAuth = "auth_required: session/new requires authentication: -32000 Authentication required"
	// The findings: check's active steps ran, without --prompt-shapes or --deep (so neither
	// capability.prompt-content nor the deep connection), and the fork probe for the agents
	// with session/fork.
	want := map[string]matrixRow{
		"claude": {
			version: "@agentclientprotocol/claude-agent-acp 0.101.0", auth: "authenticated", prompt: "image, resource",
			mcp: "stdio, http, sse", sessions: "load, list, resume, close, fork, delete, dirs", methods: "yes yes yes yes yes yes",
			modes: claudeModes, config: "mode, model, effort, fast, ultracode", status: "ok", htmlStatus: "ok",
			findings: []string{"INFO schema.unstable /result/agentCapabilities/providers",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/systemPrompt"},
			optional: map[string]string{"protocol.leftover-processes": claudeSessionWhy},
		},
		"codex": {
			version: "@agentclientprotocol/codex-acp 2.6.0", auth: "auth_required", prompt: "image, resource", mcp: "stdio, http",
			sessions: "load, list, resume, close, fork, delete, dirs", methods: "yes yes yes yes yes yes", modes: notKnown, config: notKnown,
			status: codexAuth, htmlStatus: "auth",
			findings: []string{"INFO capability.legacy-method",
				"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp", "INFO schema.unstable /result/agentCapabilities/providers",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/systemPrompt",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/title",
				"MANDATORY schema.non-spec-key /result/agentCapabilities/sessionCapabilities/subagents"},
			optional: map[string]string{"protocol.stdin-exit": codexStdinWhy},
		},
		"gemini": {
			version: "gemini-cli 0.61.0", auth: "auth_required", prompt: "image, audio, resource", mcp: "stdio, http, sse",
			sessions: "load", methods: "yes no no no no no", modes: notKnown, config: notKnown, htmlStatus: "auth",
			status:   "auth_required: session/new requires authentication: -32000 Gemini API key is missing or not configured.",
			findings: []string{"ADVISORY protocol.invalid-params /error/code", "INFO capability.legacy-method"},
		},
		"qwen": {
			version: "qwen-code 0.24.4", auth: "auth_required", prompt: "image, audio, resource", mcp: "stdio, http, sse",
			sessions: "load, list, resume", methods: "yes yes yes no no no", modes: notKnown, config: notKnown, htmlStatus: "auth",
			status: "auth_required: session/new requires authentication: -32000 Authentication required: Use Qwen Code CLI to authenticate first. " +
				`{"authMethods":[{"id":"openai","name":"Use OpenAI API key","description":"Requires setting the ` + "`OPENAI_API_KEY`" +
				` environment variable","_meta":{"type":"terminal","args":["--auth-type=openai"]}}]}`,
			findings: []string{"ADVISORY protocol.invalid-params /error/code", "INFO capability.legacy-method"},
			optional: map[string]string{"protocol.leftover-processes": qwenLeftoverWhy},
		},
		"opencode": {
			version: "OpenCode 1.18.33", auth: "authenticated", prompt: "image, resource", mcp: "stdio, http, sse",
			sessions: "load, list, resume, close, fork", methods: "yes yes yes yes yes no", modes: "-", config: "model, mode",
			status: "ok", htmlStatus: "ok",
			findings: []string{"INFO capability.legacy-method", "INFO capability.unadvertised-method",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork"},
		},
		"codebuddy": {
			version: "", auth: "auth_required", prompt: "image, resource", mcp: "stdio, http, sse",
			sessions: "load", methods: "yes yes no no no no", modes: notKnown, config: notKnown, htmlStatus: "auth",
			status: `auth_required: session/new requires authentication: -32000 Authentication required {"category":"auth"}`,
			findings: []string{"ADVISORY protocol.agent-info /result/agentInfo", "ADVISORY protocol.stdin-exit",
				"INFO capability.legacy-method", "INFO capability.unadvertised-method",
				"MANDATORY schema.non-spec-key /result/agentCapabilities/delegateToolsSupport"},
		},
		"acptest-claude": {
			version: "acptest-claude 0.1.0", auth: "authenticated", prompt: "image, resource", mcp: "stdio, http, sse",
			sessions: "load, list, resume, close, fork", methods: "yes yes yes yes yes no",
			modes: "default, acceptEdits, plan, bypassPermissions", config: "mode, model", status: "ok", htmlStatus: "ok",
			findings: []string{"INFO capability.legacy-method", "INFO schema.legacy-field /result/models",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork"},
		},
		"acptest-codex": {
			version: "acptest-codex 0.1.0", auth: "auth_required", prompt: "image, resource", mcp: "stdio, http",
			sessions: "load, list, resume, close", methods: "yes yes yes yes no no", modes: notKnown, config: notKnown,
			status: codexAuth, htmlStatus: "auth",
			findings: []string{"INFO schema.legacy-field /result/authMethods/1/type", "INFO schema.legacy-field /result/authMethods/2/type",
				"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp"},
		},
	}
	launch := map[string]string{
		"acptest-claude": acpprobe + " agent --persona claude", "acptest-codex": acpprobe + " agent --persona codex",
	}
	for _, name := range pinnedNames {
		launch[name] = strings.Join(agentArgv(t, name), " ")
	}

	// The JSON: every row's source, launch and result.
	var generic struct {
		Agents []map[string]any `json:"agents"`
	}
	if err := json.Unmarshal([]byte(stdout), &generic); err != nil {
		t.Fatal(err)
	}
	// The optional findings each row had (the findings count shows them).
	seenOptional := map[string][]string{}
	for i, row := range m.Rows {
		id := row.ID
		t.Run(id, func(t *testing.T) {
			r, w := row.Result, want[id]
			if row.Problem != "" || r == nil {
				t.Fatalf("row %s: problem %q, result %v", id, row.Problem, r != nil)
			}
			wantSource := "config"
			if strings.HasPrefix(id, "acptest-") {
				wantSource = "reference"
			}
			if row.Source != wantSource {
				t.Errorf("row %s: source %q, want %q", id, row.Source, wantSource)
			}
			check(t, "launch", row.Launch, launch[id])
			check(t, "transcript", row.Transcript, filepath.Join(out, id+".ndjson"))
			check(t, "agent.id", r.Agent.ID, new(id))
			// The matrix isolates each agent: it ran in a sandbox workspace of its own, gone now.
			if !sandboxWorkspace.MatchString(r.Agent.Cwd) {
				t.Errorf("agent.cwd %q, want a sandbox's workspace", r.Agent.Cwd)
			} else if _, err := os.Stat(r.Agent.Cwd); !os.IsNotExist(err) {
				t.Errorf("the sandbox workspace %s is still there (%v)", r.Agent.Cwd, err)
			}
			check(t, "protocolVersion", r.ProtocolVersion, new(1))
			if got := agentVersion(r); got != w.version {
				t.Errorf("agentInfo %s, want %q", show(r.AgentInfo), w.version)
			}
			check(t, "auth.status", string(r.Auth.Status), w.auth)
			check(t, "status", render.Status(row), w.status)
			if r.Error != nil {
				check(t, "error.stage", r.Error.Stage, record.StageSessionNew)
			}
			var findings []string
			for _, f := range r.Findings {
				if why, ok := w.optional[f.ID]; ok {
					t.Logf("allowed finding %s (%s)", f.ID, why)
					seenOptional[id] = append(seenOptional[id], string(f.Tier)+" "+f.ID)
					continue
				}
				findings = append(findings, strings.TrimSpace(string(f.Tier)+" "+f.ID+" "+f.Pointer))
			}
			slices.Sort(findings)
			if !slices.Equal(findings, w.findings) && r.Exit != nil {
				// How the agent left says whether protocol.stdin-exit could be raised.
				t.Logf("exit: %s", show(r.Exit))
			}
			check(t, "findings", findings, w.findings)
			// Whichever way the agent went, the finding says it: raised exactly when the
			// agent was still running after the wait and had to be signalled.
			stdinExit := slices.ContainsFunc(r.Findings, func(f report.Finding) bool { return f.ID == "protocol.stdin-exit" })
			if signalled := r.Exit != nil && r.Exit.By.Signalled(); stdinExit != signalled {
				t.Errorf("protocol.stdin-exit raised %v, but the agent's exit was %s", stdinExit, show(r.Exit))
			}

			if h, ok := pinnedHandshakes[id]; ok {
				probed{res: r}.wantHandshake(t, h)
			}
			if r.Agent.PID <= 0 {
				t.Errorf("agent.pid %d", r.Agent.PID)
			} else if !strings.HasPrefix(id, "acptest-") {
				checkGone(t, box, *r)
			}

			// --out: the result (the row's, exactly) and a transcript that validates.
			checkJSONFile(t, filepath.Join(out, id+".json"), generic.Agents[i]["result"])
			// The header is written before the sandbox exists: its cwd is empty, the spawn
			// event has the workspace.
			lines, _ := readTranscriptFile(t, filepath.Join(out, id+".ndjson"), "matrix", r.Agent.Argv, "")
			var spawn record.SpawnInfo
			if l := lines[1]; l.Kind != "spawn" || json.Unmarshal(l.Data, &spawn) != nil || spawn.Cwd != r.Agent.Cwd {
				t.Errorf("the transcript's first event %s %s, want the spawn in %s", l.Kind, l.Data, r.Agent.Cwd)
			}
		})
	}

	// --out holds exactly the files of the agents and matrix.json, which is stdout.
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var names, wantNames []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, id := range matrixIDs {
		wantNames = append(wantNames, id+".json", id+".ndjson")
	}
	wantNames = append(wantNames, "matrix.json")
	slices.Sort(wantNames)
	check(t, "--out files", names, wantNames)
	var doc any
	_ = json.Unmarshal([]byte(stdout), &doc)
	checkJSONFile(t, filepath.Join(out, "matrix.json"), doc)

	// analyze reads the matrix's transcript of codex into the matrix's codex result (a matrix
	// transcript is not judged unless asked: exit 4, auth required).
	anCode, anOut, anErr := execCLI(t, box, "analyze", "--json", filepath.Join(out, "codex.ndjson"))
	check(t, "analyze codex.ndjson: exit code", anCode, 4)
	if env := errorEnvelope(t, anErr); env.Code != string(report.ErrAuthRequired) || env.ExitCode != 4 {
		t.Errorf("analyze codex.ndjson: envelope %+v, want auth_required with exitCode 4", env)
	}
	var an map[string]any
	if err := json.Unmarshal([]byte(anOut), &an); err != nil {
		t.Fatalf("analyze codex.ndjson: %v\n%s", err, anOut)
	}
	check(t, "analyze codex.ndjson: the matrix's codex result", an, generic.Agents[1]["result"])

	// Progress: one line per agent on stderr, and nothing else. A long line is wrapped at the
	// width of a terminal, its continuation indented: unwrapped, it is one line again.
	stderr = regexp.MustCompile(`\n {4,}`).ReplaceAllString(stderr, " ")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	check(t, "stderr lines", len(lines), len(matrixIDs))
	for _, id := range matrixIDs {
		re := regexp.MustCompile(`(?m)^acpprobe matrix:  ` + regexp.QuoteMeta(id) + ` +` + regexp.QuoteMeta(want[id].status) + ` \(\d+\.\ds\)$`)
		if !re.MatchString(stderr) {
			t.Errorf("stderr has no progress line %s:\n%s", re, stderr)
		}
	}

	// Concurrency: at most --parallel probes at once, more than one at some point, and the
	// wall time well below the sum of the probes' own times.
	sum, most := 0.0, 0
	type span struct{ from, to time.Time }
	var spans []span
	for _, r := range m.Rows {
		if r.Result == nil {
			continue
		}
		sum += r.Result.Timings.TotalMs
		from, err := time.Parse(time.RFC3339Nano, r.Result.Agent.ProbedAt)
		if err != nil {
			t.Errorf("%s: probedAt %q: %v", r.ID, r.Result.Agent.ProbedAt, err)
			continue
		}
		// Shrunk by 5 ms: probedAt and totalMs are taken a moment apart from the semaphore.
		spans = append(spans, span{from, from.Add(time.Duration(r.Result.Timings.TotalMs*float64(time.Millisecond)) - 5*time.Millisecond)})
	}
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if !o.from.After(s.from) && o.to.After(s.from) {
				n++
			}
		}
		most = max(most, n)
	}
	t.Logf("matrix: wall %v, sum of the agents' totalMs %.0f ms (ratio %.2f), at most %d probes at once",
		wall.Round(time.Millisecond), sum, wall.Seconds()*1000/sum, most)
	if most < 2 || most > 4 {
		t.Errorf("at most %d probes ran at once, want 2 to 4 (--parallel 4)", most)
	}
	if wall.Seconds()*1000 >= 0.8*sum {
		t.Errorf("matrix wall time %v is not below 0.8 × the sum of the agents' totalMs (%.0f ms): not parallel", wall, sum)
	}

	for id, seen := range seenOptional {
		// They show in the findings count.
		w := want[id]
		w.findings = append(slices.Clone(w.findings), seen...)
		want[id] = w
	}
	checkMatrixFormats(t, &m, stdout, want)

	if entries, err := os.ReadDir(box.cwd); err != nil || len(entries) > 0 {
		t.Errorf("the agents wrote into their working directory %s: %v %v", box.cwd, entries, err)
	}
	if left := survivors(box.home); len(left) > 0 {
		t.Errorf("processes of the sandbox survived:\n%s", strings.Join(left, "\n"))
	}
}

// checkMatrixFormats renders the matrix in the other formats and checks them cell by cell.
// The JSON must survive the round trip byte for byte, so these renderings are what `acpprobe
// matrix --format text|md|html` prints for the same matrix.
func checkMatrixFormats(t *testing.T, m *matrix.Matrix, stdout string, want map[string]matrixRow) {
	t.Helper()
	var js bytes.Buffer
	if err := render.JSON(&js, m); err != nil {
		t.Fatal(err)
	}
	if js.String() != stdout {
		t.Errorf("the matrix does not survive a JSON round trip:\n%s", firstDifference(stdout, js.String()))
	}

	// The cells of each row, in column order.
	cells := map[string][]string{}
	for _, r := range m.Rows {
		w := want[r.ID]
		x := r.Result
		if x == nil {
			continue
		}
		// The models a client can set (the model option's values), else the declared ones.
		var models []string
		for _, mo := range x.Models {
			models = append(models, mo.ID)
		}
		if x.ModelConfig != nil {
			models = x.ModelConfig.Values
		}
		modelCell, reasoning := "-", "-"
		if len(models) > 0 {
			modelCell = strings.Join(models, ", ")
		}
		if x.Reasoning != nil {
			reasoning = strings.Join(x.Reasoning.Values, ", ")
		}
		if w.auth == string(report.AuthRequired) {
			// No session: what it would offer is not known, which is not "none".
			modelCell, reasoning = notKnown, notKnown
		}
		if r.ID == "claude" && !strings.HasPrefix(modelCell, "default") {
			t.Errorf("claude: models %q, want the default model first", modelCell)
		}
		n := map[report.Tier]int{}
		for _, f := range w.findings {
			n[report.Tier(strings.Fields(f)[0])]++
		}
		version := w.version
		if version == "" {
			version = "-" // no agentInfo
		}
		row := []string{r.ID, version, "1", w.auth, w.prompt, w.mcp, w.sessions}
		row = append(row, strings.Fields(w.methods)...)
		row = append(row, w.modes, modelCell, w.config, reasoning,
			fmt.Sprintf("%d/%d/%d/%d", n[report.TierMandatory], n[report.TierCapability], n[report.TierAdvisory], n[report.TierInfo]),
			fmt.Sprintf("%.0f", x.Timings.SpawnToInitializeMs), effectsCell(t, x), "-", w.status)
		cells[r.ID] = row
	}

	t.Run("md", func(t *testing.T) {
		var b bytes.Buffer
		if err := render.MatrixMarkdown(&b, m); err != nil {
			t.Fatal(err)
		}
		text := b.String()
		if !strings.HasPrefix(text, "# ACP capability matrix\n\nGenerated "+m.GeneratedAt+" by acpprobe "+m.Version+".\n\n") {
			t.Errorf("markdown does not start with the title and the generation line:\n%.300s", text)
		}
		var table []string
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "|") {
				table = append(table, line)
			}
		}
		if len(table) != 2+len(m.Rows) {
			t.Fatalf("markdown table has %d lines, want header, rule and %d rows:\n%s", len(table), len(m.Rows), text)
		}
		check(t, "header", table[0], "| "+strings.Join(matrixTitles, " | ")+" |")
		check(t, "rule", table[1], "|---|---|---:|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---:|---|---|---|")
		// The cells come from the agents, so they are escaped: of the characters Markdown
		// escapes, these cells only hold those of the error data qwen-code's status quotes
		// (brackets, backticks, and the underscore that starts "_meta"); internal/render's
		// tests cover the rest.
		mdCell := strings.NewReplacer("[", `\[`, "]", `\]`, "`", "\\`", `"_`, `"\_`)
		for i, r := range m.Rows {
			got := strings.Split(strings.TrimSuffix(strings.TrimPrefix(table[2+i], "| "), " |"), " | ")
			var wantCells []string
			for _, c := range cells[r.ID] {
				wantCells = append(wantCells, mdCell.Replace(c))
			}
			check(t, "row "+r.ID, got, wantCells)
		}
	})

	t.Run("text", func(t *testing.T) {
		var b bytes.Buffer
		if err := render.MatrixText(&b, m); err != nil {
			t.Fatal(err)
		}
		table, _, _ := strings.Cut(b.String(), "\n\nNot ok\n") // under the table: why a row is not ok
		lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
		if len(lines) != 1+len(m.Rows) {
			t.Fatalf("text table has %d lines, want a header and %d rows:\n%s", len(lines), len(m.Rows), b.String())
		}
		sep := regexp.MustCompile(` {2,}`)
		check(t, "header", sep.Split(lines[0], -1), matrixTitles)
		for i, r := range m.Rows {
			var wantCells []string
			for _, c := range cells[r.ID] {
				if rs := []rune(c); len(rs) > 40 { // the text table cuts long cells
					c = string(rs[:39]) + "…"
				}
				wantCells = append(wantCells, c)
			}
			check(t, "row "+r.ID, sep.Split(lines[1+i], -1), wantCells)
		}
	})

	t.Run("html", func(t *testing.T) {
		var b bytes.Buffer
		if err := render.MatrixHTML(&b, m); err != nil {
			t.Fatal(err)
		}
		page := b.String()
		if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "</html>") {
			t.Errorf("not a whole HTML page: %.200s", page)
		}
		tbody := regexp.MustCompile(`<tbody class="agent st-([a-z]+)" data-id="([^"]*)" data-index="(\d+)" data-status="([a-z]+)">`)
		var got, wantBodies []string
		for _, g := range tbody.FindAllStringSubmatch(page, -1) {
			got = append(got, g[2]+" "+g[3]+" "+g[1]+" "+g[4])
		}
		for i, r := range m.Rows {
			s := want[r.ID].htmlStatus
			wantBodies = append(wantBodies, fmt.Sprintf("%s %d %s %s", r.ID, i, s, s))
		}
		check(t, "agent tbodies (id index class status)", got, wantBodies)
		if ext := regexp.MustCompile(`(?i)\b(src|href|action)\s*=\s*["']?\s*(https?:|//|file:)`).FindAllString(page, -1); len(ext) > 0 {
			t.Errorf("the page loads external resources: %q", ext)
		}
		if n := strings.Count(page, "<script"); n == 0 || strings.Contains(page, "<script src") {
			t.Errorf("the page has %d inline scripts or an external one", n)
		}
		for _, s := range []string{"chat-gpt", "selfhosted", "oauth-personal", "Gemini API key is missing or not configured.",
			"@agentclientprotocol/claude-agent-acp", "schema.non-spec-key", "ultracode", "opencode/big-pickle"} {
			if !strings.Contains(page, s) {
				t.Errorf("the page does not show %q", s)
			}
		}
	})
}

// pinnedHandshakes are the pinned agents' handshakes, by config name, as their own tests
// assert them.
var pinnedHandshakes = map[string]handshake{
	"claude": claudeHandshake, "codex": codexHandshake, "gemini": geminiHandshake,
	"qwen": qwenHandshake, "opencode": opencodeHandshake, "codebuddy": codebuddyHandshake,
}

// agentVersion is the Version cell's content: agentInfo's name and version ("" without
// agentInfo).
func agentVersion(r *report.Result) string {
	if r.AgentInfo == nil {
		return ""
	}
	return r.AgentInfo.Name + " " + r.AgentInfo.Version
}

// sandboxWorkspace is the working directory an isolated agent gets.
var sandboxWorkspace = regexp.MustCompile(`/acpprobe-sandbox-[0-9a-f]+/workspace$`)

// effectsCell is the Side effects cell of an isolated agent: the level, the files it created,
// changed or deleted in its sandbox, and the processes that outlived the teardown.
func effectsCell(t *testing.T, x *report.Result) string {
	t.Helper()
	se := x.SideEffects
	if se == nil || se.Files == nil {
		t.Errorf("no side effects, or no file inventory, in an isolated run: %+v", se)
		return ""
	}
	if se.Isolation.Level != "env+home" {
		t.Errorf("isolation level %q, want env+home (the matrix's default)", se.Isolation.Level)
	}
	cell := fmt.Sprintf("%s, %d files", se.Isolation.Level, se.Files.Created+se.Files.Changed+se.Files.Deleted)
	if n := len(se.Processes.AfterTeardown); n > 0 {
		cell += fmt.Sprintf(", %d survived", n)
	}
	return cell
}

// checkJSONFile asserts that a file holds the JSON value want (decoded, key order ignored).
func checkJSONFile(t *testing.T, path string, want any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%v", err)
		return
	}
	var got any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Errorf("%s is not JSON: %v", path, err)
		return
	}
	if !reflect.DeepEqual(got, want) {
		var diffs []string
		jsonDiff("", want, got, &diffs)
		t.Errorf("%s differs from stdout's (stdout | file):\n%s", path, strings.Join(diffs, "\n"))
	}
}
