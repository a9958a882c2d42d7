package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// plantedVar is an environment variable whose name looks secret (*_API_KEY): its value must
// be redacted wherever it could appear. Every planted value starts with plantedMark.
const (
	plantedVar  = "ACPPROBE_E2E_PLANTED_API_KEY"
	plantedFlag = "OTHER_TOKEN" // passed with --env
	plantedMark = "planted-e2e"
)

// TestTranscriptCodexACP records, analyzes, replays and taps codex-acp (see roundTrip).
func TestTranscriptCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	roundTrip(t, nil, nil, agentArgv(t, "codex")...)
}

// TestTranscriptGeminiCLI records, analyzes, replays and taps `gemini --acp` (see roundTrip).
func TestTranscriptGeminiCLI(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	roundTrip(t, nil, nil, agentArgv(t, "gemini")...)
}

// TestTranscriptQwenCode records, analyzes, replays and taps `qwen --acp` (see roundTrip).
func TestTranscriptQwenCode(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	roundTrip(t, nil, map[string]string{"protocol.leftover-processes": qwenLeftoverWhy}, agentArgv(t, "qwen")...)
}

// TestTranscriptOpenCode records, analyzes, replays and taps `opencode acp` (see roundTrip).
func TestTranscriptOpenCode(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	roundTrip(t, nil, nil, agentArgv(t, "opencode")...)
}

// TestTranscriptCodeBuddy records, analyzes, replays and taps CodeBuddy Code (see roundTrip).
func TestTranscriptCodeBuddy(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	roundTrip(t, nil, nil, agentArgv(t, "codebuddy")...)
}

// TestTranscriptClaudeAgentACP records, analyzes, replays and taps claude-agent-acp in the
// three IS_SANDBOX cases of TestClaudeAgentACP (see roundTrip).
func TestTranscriptClaudeAgentACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	argv := agentArgv(t, "claude")
	for _, tc := range claudeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			why := claudeSessionWhy
			if tc.refused {
				why = claudeAuthStatusWhy
			}
			roundTrip(t, tc.env, map[string]string{"protocol.leftover-processes": why}, argv...)
		})
	}
}

// roundTrip proves record → analyze → replay → tap on a real agent, with the built binary, in
// one sandbox (extraEnv on top), run after run:
//
//  1. `check --json --prompt-shapes --transcript T` (with a planted secret in the environment
//     and in --env), then `analyze --json T`: the same stdout byte for byte, the same stderr
//     and exit code.
//  2. T validates line by line against transcript.schema.json, starts with the header, is
//     numbered 1…n, ends with "done", and its main connection's "started" pid is the
//     result's. After the main connection it holds the fork-probe connection exactly when the
//     agent supports session/fork. No planted secret in T, stdout or stderr.
//  3. `check --json --prompt-shapes -- acpprobe replay T`: the live result, structurally, with
//     the same exit code.
//  4. `check --json --prompt-shapes --env … -- acpprobe tap --transcript T2 --check --findings
//     F -- <agent>`: the live result, structurally, with the same exit code. The check runs
//     the tap once per connection (twice for an agent with session/fork: the fork probe is a
//     connection of its own), so the tap runs through a wrapper (tapWrapper) that gives each
//     run its own T2 and F, numbered; the first run's are the main connection's. The agent of
//     T2's "started" event is gone, with its whole group and every process of the sandbox.
//     T2 validates and ends the agent as the live probe did; `analyze T2` reads it and, when
//     T2 is in causal order (see answersBeforeRequests), gives the live result minus what
//     only the probe's own steps can know; F is NDJSON of exactly the findings of that
//     analysis that the tap reports. The fork probe's tap transcript holds initialize and the
//     fork. No planted secret anywhere.
//
// "Structurally" is internal/cli's sameresult rule (see structural) plus the normalizations
// below, each for a stated reason; optional lists the findings allowed to come and go (as in
// wantFindings).
func roundTrip(t *testing.T, extraEnv []string, optional map[string]string, argv ...string) {
	acpprobe := buildCLI(t)
	envSecret, flagSecret := plantedMark+"-secret-"+randHex(t), plantedMark+"-flag-"+randHex(t)
	box := newSandbox(t, append(slices.Clone(extraEnv), plantedVar+"="+envSecret)...)
	dir := t.TempDir() // acpprobe's files, outside the agent's working directory
	tr := filepath.Join(dir, "check.ndjson")
	tapDir := t.TempDir()
	tapTr, found := filepath.Join(tapDir, "tap-1.ndjson"), filepath.Join(tapDir, "findings-1.ndjson")
	var outputs []named // everything that must not carry a planted secret

	// 1. Live, recorded; then analyzed.
	start := time.Now()
	liveCode, liveOut, liveErr := runCLI(t, box, "check", append([]string{"--json", "--prompt-shapes",
		"--env", plantedFlag + "=" + flagSecret, "--transcript", tr, "--"}, argv...)...)
	t.Logf("live check: exit %d in %v", liveCode, time.Since(start).Round(time.Millisecond))
	live := resultDoc(t, liveOut)
	checkGone(t, box, live)
	outputs = append(outputs, named{"live stdout", liveOut}, named{"live stderr", liveErr})

	start = time.Now()
	anCode, anOut, anErr := execCLI(t, box, "analyze", "--json", tr)
	t.Logf("analyze: exit %d in %v", anCode, time.Since(start).Round(time.Millisecond))
	check(t, "analyze: exit code", anCode, liveCode)
	if anOut != liveOut {
		t.Errorf("analyze --json stdout differs from the live check's:\n%s", firstDifference(liveOut, anOut))
	}
	// The same lines, but for the command's name: a note or hint line names the command that
	// prints it ("acpprobe analyze: hint: …" for "acpprobe check: hint: …").
	check(t, "analyze: stderr", strings.ReplaceAll(anErr, "acpprobe analyze: ", "acpprobe check: "), liveErr)
	outputs = append(outputs, named{"analyze stdout", anOut}, named{"analyze stderr", anErr})

	// 2. The transcript: the main connection, then the fork probe when the agent has
	// session/fork (no --deep here).
	lines, text := readTranscriptFile(t, tr, "check", argv, box.cwd)
	outputs = append(outputs, named{"transcript " + tr, text})
	forks := live.Methods[acp.MethodSessionFork].Support == report.Supported
	wantExtra := []record.Purpose{}
	if forks {
		wantExtra = append(wantExtra, record.PurposeForkProbe)
	}
	main, extra := connections(t, lines)
	check(t, "transcript: the extra connections", extra, wantExtra)
	var started struct{ PID int }
	if data := onlyEvent(t, tr, main, "started"); data != nil && json.Unmarshal(data, &started) == nil {
		check(t, "transcript: started pid", started.PID, live.Agent.PID)
	}

	// 3. Replay.
	start = time.Now()
	repCode, repOut, repErr := runCLI(t, box, "check", "--json", "--prompt-shapes", "--", acpprobe, "replay", tr)
	t.Logf("replayed check: exit %d in %v", repCode, time.Since(start).Round(time.Millisecond))
	check(t, "replay: exit code", repCode, liveCode)
	checkGone(t, box, resultDoc(t, repOut))
	outputs = append(outputs, named{"replay stdout", repOut}, named{"replay stderr", repErr})
	{
		a, b := structural(t, "live", liveOut), structural(t, "replay", repOut)
		dropOptional(t, "live", a, optional)
		if ids := dropOptional(t, "replay", b, optional); len(ids) > 0 {
			// A replay is one process: nothing can outlive it in its group.
			t.Errorf("replay: %v, which a replay cannot have", ids)
		}
		sameResult(t, "replay", a, b)
	}

	// 4. Tap, with live checks.
	start = time.Now()
	// The planted --env secret goes to the check, which passes it to the tap in the
	// environment (where the tap's redactor finds it by its name), and on to the agent. Not as
	// `tap --env OTHER_TOKEN=…`: that would put it in the argv of the check's agent (the tap),
	// and a secret-named KEY=VALUE argument is not redacted from agent.command, the header or
	// the spawn event (`acpprobe probe --json -- env GEMINI_API_KEY=x… agent` shows it too).
	// The outer check waits longer than the tap (--grace 6s against the tap's 2 s), so the
	// tap always finishes its own teardown: its transcript shows how the agent ended under the
	// same 2 s wait as the direct check, while the outer check only sees the tap process leave.
	tapCode, tapOut, tapErr := runCLI(t, box, "check", append([]string{"--json", "--prompt-shapes", "--grace", "6s",
		"--env", plantedFlag + "=" + flagSecret, "--", "/bin/sh", tapWrapper(t, acpprobe, tapDir)}, argv...)...)
	t.Logf("check through the tap: exit %d in %v", tapCode, time.Since(start).Round(time.Millisecond))
	check(t, "tap: exit code", tapCode, liveCode)
	checkGone(t, box, resultDoc(t, tapOut)) // the tap process itself, and the sandbox
	outputs = append(outputs, named{"tap stdout", tapOut}, named{"tap stderr", tapErr})
	{
		a, b := structural(t, "live", liveOut), structural(t, "tap", tapOut)
		dropOptional(t, "live", a, optional)
		if ids := dropOptional(t, "tap", b, optional); len(ids) > 0 {
			// The probe sees the tap, alone in its process group, not the agent's group.
			t.Errorf("tap: %v, which a probe of the tap cannot have", ids)
		}
		// The outer check judges the tap process's end, not the agent's: the agent's end is
		// compared through the tap transcript below.
		withoutTeardown(a)
		withoutTeardown(b)
		withoutRunIDs(a)
		withoutRunIDs(b)
		sameResult(t, "tap", a, b)
	}

	tapLines, tapText := readTranscriptFile(t, tapTr, "tap", argv, box.cwd)
	outputs = append(outputs, named{"tap transcript " + tapTr, tapText})
	outputs = append(outputs, checkForkTap(t, tapDir, forks, argv, box.cwd)...)
	if data := onlyEvent(t, tapTr, tapLines, "spawn"); data != nil {
		checkJSONKey(t, "tap transcript: spawn.tap", data, "tap", "true")
	}
	if data := onlyEvent(t, tapTr, tapLines, "started"); data != nil {
		var s struct{ PID int }
		if err := json.Unmarshal(data, &s); err != nil || s.PID <= 0 {
			t.Errorf("tap transcript: started %s has no pid", data)
		} else if transport.GroupAlive(s.PID) {
			t.Errorf("tap transcript: the agent's process group %d is still alive after the tap", s.PID)
		}
	}
	// The tap's own teardown ladder must have ended the agent the way the direct probe's did
	// (unless how the agent leaves is a coin toss, said by an optional stdin-exit).
	if data := onlyEvent(t, tapTr, tapLines, "exit"); data != nil && live.Exit != nil && optional["protocol.stdin-exit"] == "" {
		checkJSONKey(t, "tap transcript: exit.by", data, "by", show(live.Exit.By))
	}

	// analyze T2 reads the tap transcript. The tap logs each chunk before forwarding it, so the
	// transcript is in causal order (every request before its answer), and the analysis is the
	// live result minus what needs the probe's step events (prompt shapes, the active checks),
	// the checks that judge the probe's own method detection (not Check.InTap) and the verdict
	// (a tap transcript has none).
	if misordered := answersBeforeRequests(tapLines); len(misordered) > 0 {
		t.Errorf("%s records %d answers before their requests (id: request seq > answer seq): %s",
			filepath.Base(tapTr), len(misordered), strings.Join(misordered, ", "))
	}
	start = time.Now()
	an2Code, an2Out, an2Err := execCLI(t, box, "analyze", "--json", tapTr)
	t.Logf("analyze of the tap transcript: exit %d in %v", an2Code, time.Since(start).Round(time.Millisecond))
	resultDoc(t, an2Out)
	outputs = append(outputs, named{"analyze tap stdout", an2Out}, named{"analyze tap stderr", an2Err})
	an2Findings := asList(structural(t, "analyze tap", an2Out)["findings"])
	check(t, "analyze tap transcript: exit code", an2Code, outcomeCode(live))
	a, b := structural(t, "live", liveOut), structural(t, "analyze tap", an2Out)
	liveFindings := asList(a["findings"])
	for _, doc := range []map[string]any{a, b} {
		delete(doc, "findings")
		delete(doc, "verdict")
		delete(doc, "promptShapes")
		if optional["protocol.stdin-exit"] != "" {
			delete(doc, "exit")
		}
		if _, ok := optional["protocol.leftover-processes"]; ok {
			x := asMap(doc["exit"])
			if x["groupKilled"] == true {
				t.Logf("allowed: exit.groupKilled and exit.survivors (%s)", optional["protocol.leftover-processes"])
			}
			delete(x, "groupKilled")
			delete(x, "survivors")
		}
		withoutRunIDs(doc)
	}
	sameResult(t, "analyze tap transcript", a, b)
	notSeenByTap := func(id string) bool {
		ch, ok := conformance.Lookup(id)
		return optional[id] != "" || (ok && (ch.Active || !ch.InTap()))
	}
	check(t, "analyze tap transcript: findings (the live ones without the active checks)",
		findingKeys(an2Findings, func(id string) bool { return optional[id] != "" }), findingKeys(unfolded(liveFindings, notSeenByTap), notSeenByTap))
	if code, out, _ := execCLI(t, box, "analyze", tapTr); code != an2Code || out == "" {
		t.Errorf("analyze (text) of the tap transcript: exit %d and %d bytes, want exit %d and a report", code, len(out), an2Code)
	}

	// F: NDJSON, one finding a line, exactly the analysis's findings that the tap reports.
	fText := readFile(t, found)
	outputs = append(outputs, named{"findings " + found, fText})
	var tapFindings []any
	for i, line := range strings.Split(strings.TrimSuffix(fText, "\n"), "\n") {
		if line == "" && fText == "" {
			break
		}
		var f map[string]any
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Errorf("%s line %d is not JSON: %v: %s", found, i+1, err, line)
			continue
		}
		id, _ := f["id"].(string)
		tier, _ := f["tier"].(string)
		if _, ok := conformance.Lookup(id); !ok || !slices.Contains(report.Tiers, report.Tier(tier)) {
			t.Errorf("%s line %d is not a finding (id %q, tier %q): %s", found, i+1, id, tier, line)
		}
		tapFindings = append(tapFindings, f)
	}
	t.Logf("tap --check found %d: %q", len(tapFindings), findingKeys(tapFindings, nil))
	check(t, "tap --findings (the analysis's findings the tap reports)",
		findingKeys(tapFindings, func(id string) bool { return optional[id] != "" }),
		findingKeys(an2Findings, func(id string) bool { return optional[id] != "" }))

	for _, o := range outputs {
		if i := strings.Index(o.text, plantedMark); i >= 0 {
			t.Errorf("%s carries a planted secret: …%s…", o.name, o.text[max(0, i-80):min(len(o.text), i+80)])
		}
	}
	if left := survivors(box.home); len(left) > 0 {
		t.Errorf("processes of the sandbox survived:\n%s", strings.Join(left, "\n"))
	}
}

type named struct{ name, text string }

// tapWrapper writes a shell script that runs `acpprobe tap --transcript DIR/tap-N.ndjson
// --check --findings DIR/findings-N.ndjson -- AGENT…` with the first N whose transcript does
// not exist yet, and returns its path. A check runs its agent command once per connection, one
// after the other: the main connection's tap writes tap-1, the fork probe's tap-2.
func tapWrapper(t *testing.T, acpprobe, dir string) string {
	t.Helper()
	script := fmt.Sprintf(`n=1
while [ -e %[1]s/tap-$n.ndjson ]; do n=$((n+1)); done
exec %[2]s tap --transcript %[1]s/tap-$n.ndjson --check --findings %[1]s/findings-$n.ndjson -- "$@"
`, shellQuote(dir), shellQuote(acpprobe))
	path := filepath.Join(t.TempDir(), "tap.sh")
	if err := os.WriteFile(path, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// shellQuote quotes s as one sh word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// checkForkTap asserts the tap runs past the main connection's (tapWrapper): exactly one more
// when the agent supports session/fork, the fork probe, whose transcript validates and holds
// initialize and session/fork as its client's requests, with a findings file; none otherwise.
// It returns the files, for the planted-secret check.
func checkForkTap(t *testing.T, dir string, forks bool, argv []string, cwd string) []named {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"findings-1.ndjson", "tap-1.ndjson"}
	if forks {
		want = []string{"findings-1.ndjson", "findings-2.ndjson", "tap-1.ndjson", "tap-2.ndjson"}
	}
	check(t, "tap runs: files", names, want)
	if !forks || !slices.Equal(names, want) {
		return nil
	}
	tr, found := filepath.Join(dir, "tap-2.ndjson"), filepath.Join(dir, "findings-2.ndjson")
	lines, text := readTranscriptFile(t, tr, "tap", argv, cwd)
	var asked []string
	for _, l := range lines[1:] {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if l.Dir == "client" && l.Raw != nil && json.Unmarshal([]byte(*l.Raw), &m) == nil && m.Method != "" && len(m.ID) > 0 {
			asked = append(asked, m.Method)
		}
	}
	check(t, "fork probe's tap transcript: client requests", asked, []string{acp.MethodInitialize, acp.MethodSessionFork})
	return []named{{"fork probe's tap transcript " + tr, text}, {"fork probe's findings " + found, readFile(t, found)}}
}

func randHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// outcomeCode is the exit code of a result without a verdict: the probe's own outcome.
func outcomeCode(r report.Result) int {
	switch {
	case r.Error == nil:
		return 0
	case r.Error.Code == report.ErrAuthRequired:
		return 4
	}
	return 3
}

// structural is internal/cli's sameresult rule (cmdSameResult in cli_test.go): the result
// without what legitimately differs between two probes of the same agent — times, pids, the
// command, transcript line numbers. Real agents need three more removals of the same kinds,
// which the reference agent never needs (it has no stderr to speak of, and no extensions):
//   - error.stderr, a copy of stderrTail (probe's builder sets it so). A real agent's stderr
//     interleaving varies (gemini-cli's session/new error and its warnings land in any
//     order), and a replay writes the recorded stderr before the answer it preceded, in the
//     order of the requests.
//   - extensions.*[].where[].seq, transcript line numbers like findings[].seq: stderr arrives
//     in different chunks live, replayed and through the tap, so the line numbers shift.
//   - the authPush notification, which a probe's teardown may come before (withoutAuthPush).
func structural(t *testing.T, what, stdout string) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("%s: stdout is not JSON: %v\n%s", what, err, stdout)
	}
	delete(doc, "agent")
	delete(doc, "timings")
	delete(doc, "stderrTail")
	delete(doc, "stderrBytes")
	// What a run did to the machine is the run's own: a replay, the tap's agent and a second
	// probe in the same HOME each do their own (TestIsolate* check it).
	delete(doc, "sideEffects")
	if x, ok := doc["exit"].(map[string]any); ok {
		delete(x, "afterStdinCloseMs")
		delete(x, "survivors") // pids and temporary paths; the finding's message names them
	}
	for _, m := range asMap(doc["methods"]) {
		delete(asMap(m), "ms")
	}
	for _, f := range asList(doc["findings"]) {
		delete(asMap(f), "seq")
		if asMap(f)["id"] == "protocol.leftover-processes" {
			delete(asMap(f), "evidence") // the survivors, with their pids
		}
	}
	// Which line answered a zero-_meta step depends on what the agent pushed in between.
	for _, s := range asList(asMap(doc["zeroMeta"])["steps"]) {
		delete(asMap(s), "seq")
		delete(asMap(s), "answerSeq")
	}
	if ps := asMap(doc["promptShapes"]); ps != nil {
		for _, p := range asList(ps["probes"]) {
			delete(asMap(p), "seq")
		}
	}
	// The two removals real agents add (see above).
	delete(asMap(doc["error"]), "stderr")
	withoutAuthPush(doc)
	for _, seen := range asMap(doc["extensions"]) {
		for _, s := range asList(seen) {
			for _, w := range asList(asMap(s)["where"]) {
				delete(asMap(w), "seq")
			}
		}
	}
	return doc
}

// authPush is the notification claude-agent-acp 0.101.0 and codex-acp 2.6.0 push after
// initialize with their login state ({"authStatus":{"kind":"none","label":"Not logged in"}}).
// Whether it arrives before a probe's teardown is a race (a probe of codex-acp is over within
// 100 ms of its initialize answer), so two probes of the same agent need not both see it.
const authPush = "_auth/status_update"

// authPushVendor is the vendor the catalogue files authPush under (extensions.vendors).
const authPushVendor = "auth"

// withoutAuthPush removes authPush from a structural result: from the extension methods seen,
// from the vendors used and from the notification counts.
func withoutAuthPush(doc map[string]any) {
	if ext := asMap(doc["extensions"]); ext != nil {
		for _, list := range []struct{ field, key, value string }{{"methods", "name", authPush}, {"vendors", "vendor", authPushVendor}} {
			kept := []any{}
			for _, m := range asList(ext[list.field]) {
				if asMap(m)[list.key] != list.value {
					kept = append(kept, m)
				}
			}
			if ext[list.field] != nil {
				ext[list.field] = kept
			}
		}
	}
	if n := asMap(doc["notifications"]); n != nil {
		by := asMap(n["byMethod"])
		if c, ok := by[authPush].(float64); ok {
			delete(by, authPush)
			total, _ := n["total"].(float64)
			n["total"] = total - c
		}
	}
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }
func asList(v any) []any         { l, _ := v.([]any); return l }

// dropOptional removes the findings allowed to come and go (optional, as in wantFindings) from
// a structural result, with their verdict counts; for protocol.leftover-processes also
// exit.groupKilled and exit.survivors, the facts it reports. It returns the ids it removed,
// which it logs.
func dropOptional(t *testing.T, what string, doc map[string]any, optional map[string]string) []string {
	t.Helper()
	var removed []string
	kept := []any{}
	for _, f := range asList(doc["findings"]) {
		id, _ := asMap(f)["id"].(string)
		if why, ok := optional[id]; ok {
			t.Logf("%s: allowed finding %s (%s)", what, id, why)
			removed = append(removed, id)
			if counts := asMap(asMap(doc["verdict"])["counts"]); counts != nil {
				tier, _ := asMap(f)["tier"].(string)
				n, _ := counts[tier].(float64)
				counts[tier] = n - 1
			}
			continue
		}
		kept = append(kept, f)
	}
	if doc["findings"] != nil {
		doc["findings"] = kept
	}
	if slices.Contains(removed, "protocol.leftover-processes") {
		delete(asMap(doc["exit"]), "groupKilled")
		delete(asMap(doc["exit"]), "survivors")
	}
	return removed
}

// withoutTeardown drops how the probed process ended (exit, and the findings judged from it):
// through the tap, the probe's process is the tap, which ends when its own teardown of the
// agent is over, however the agent ended.
func withoutTeardown(doc map[string]any) {
	delete(doc, "exit")
	var kept []any
	for _, f := range asList(doc["findings"]) {
		if id, _ := asMap(f)["id"].(string); id != "protocol.stdin-exit" && id != "protocol.leftover-processes" {
			kept = append(kept, f)
		}
	}
	doc["findings"] = kept
	if v := asMap(doc["verdict"]); v != nil {
		delete(v, "counts")
	}
}

// withoutRunIDs masks the random id two live sessions of the same agent cannot share: the
// sessionId of session/new's answer (a UUID for claude-agent-acp, ses_… for opencode).
// Nowhere else.
func withoutRunIDs(doc map[string]any) {
	if ns := asMap(asMap(doc["raw"])["newSession"]); ns != nil {
		if s, ok := ns["sessionId"].(string); ok && s != "" {
			ns["sessionId"] = "<session id>"
		}
	}
}

// sameResult asserts two structural results equal, listing every difference.
func sameResult(t *testing.T, what string, want, got map[string]any) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	var diffs []string
	jsonDiff("", want, got, &diffs)
	t.Errorf("%s: the result differs from the live check's (live | %s):\n%s", what, what, strings.Join(diffs, "\n"))
}

func jsonDiff(path string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := map[string]bool{}
			for k := range av {
				keys[k] = true
			}
			for k := range bv {
				keys[k] = true
			}
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				av2, aok := av[k]
				bv2, bok := bv[k]
				if aok != bok {
					*out = append(*out, fmt.Sprintf("  %s/%s: %.300s | %.300s", path, k, presence(av2, aok), presence(bv2, bok)))
					continue
				}
				jsonDiff(path+"/"+k, av2, bv2, out)
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok && len(av) == len(bv) {
			for i := range av {
				jsonDiff(fmt.Sprintf("%s/%d", path, i), av[i], bv[i], out)
			}
			return
		}
	}
	if !reflect.DeepEqual(a, b) {
		as, aok := a.(string)
		bs, bok := b.(string)
		if aok && bok && (len(as) > 200 || len(bs) > 200) {
			i := 0
			for i < len(as) && i < len(bs) && as[i] == bs[i] {
				i++
			}
			from := max(0, i-60)
			*out = append(*out, fmt.Sprintf("  %s: from byte %d: %q | %q", path, i, as[from:min(len(as), i+200)], bs[from:min(len(bs), i+200)]))
			return
		}
		*out = append(*out, fmt.Sprintf("  %s: %.300s | %.300s", path, show(a), show(b)))
	}
}

func presence(v any, ok bool) string {
	if !ok {
		return "(absent)"
	}
	return show(v)
}

// unfolded returns findings (decoded JSON) where each one that drop says goes is replaced by
// its related evidence (evidence.related: findings of the same line folded into it, see
// conformance's overlaps). Without the probe's steps, a tap record has no answered-notification
// finding to fold the response-without-an-id into, so that one stands on its own.
func unfolded(findings []any, drop func(id string) bool) []any {
	var out []any
	for _, f := range findings {
		m := asMap(f)
		id, _ := m["id"].(string)
		if !drop(id) {
			out = append(out, f)
			continue
		}
		out = append(out, asList(asMap(m["evidence"])["related"])...)
	}
	return out
}

// findingKeys is the sorted multiset "TIER id pointer" of findings (decoded JSON), without
// those skip says.
func findingKeys(findings []any, skip func(id string) bool) []string {
	out := []string{}
	for _, f := range findings {
		m := asMap(f)
		id, _ := m["id"].(string)
		if skip != nil && skip(id) {
			continue
		}
		tier, _ := m["tier"].(string)
		ptr, _ := m["pointer"].(string)
		out = append(out, strings.TrimSpace(tier+" "+id+" "+ptr))
	}
	slices.Sort(out)
	return out
}

// transcriptLine is what the suite reads of a transcript line (header or event).
type transcriptLine struct {
	Format   *int            `json:"acpprobeTranscript"`
	Tool     string          `json:"tool"`
	Argv     []string        `json:"argv"`
	Cwd      string          `json:"cwd"`
	Redacted *bool           `json:"redacted"`
	Seq      int64           `json:"seq"`
	Dir      string          `json:"dir"`
	Raw      *string         `json:"raw"`
	Kind     string          `json:"kind"`
	Data     json.RawMessage `json:"data"`
}

var transcriptSchema struct {
	once sync.Once
	s    *jsonschema.Schema
	err  error
}

// lineSchema compiles transcript/transcript.schema.json (once), asserting formats and content
// encodings too.
func lineSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	transcriptSchema.once.Do(func() {
		path := filepath.Join(repoRoot(t), "transcript", "transcript.schema.json")
		raw, err := os.ReadFile(path)
		if err != nil {
			transcriptSchema.err = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			transcriptSchema.err = err
			return
		}
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		c.AssertContent()
		if transcriptSchema.err = c.AddResource(path, doc); transcriptSchema.err != nil {
			return
		}
		transcriptSchema.s, transcriptSchema.err = c.Compile(path)
	})
	if transcriptSchema.err != nil {
		t.Fatalf("transcript.schema.json: %v", transcriptSchema.err)
	}
	return transcriptSchema.s
}

// readTranscriptFile checks a transcript: every line (each ending with a newline) matches
// transcript.schema.json; the first is the header (format 1, the tool, redacted, the agent's
// argv and cwd) and no other is; the events are numbered 1…n and end with "done". It returns
// the lines and the whole text.
func readTranscriptFile(t *testing.T, path, tool string, argv []string, cwd string) ([]transcriptLine, string) {
	t.Helper()
	text := readFile(t, path)
	if !strings.HasSuffix(text, "\n") {
		t.Errorf("%s does not end with a newline", path)
	}
	sch := lineSchema(t)
	var lines []transcriptLine
	for i, raw := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
		if err != nil {
			t.Fatalf("%s line %d is not JSON: %v", path, i+1, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s line %d does not match transcript.schema.json: %v\n%.500s", path, i+1, err, raw)
		}
		var l transcriptLine
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		lines = append(lines, l)
	}
	if len(lines) < 2 {
		t.Fatalf("%s has %d lines, want a header and events", path, len(lines))
	}
	h := lines[0]
	if h.Format == nil || *h.Format != 1 {
		t.Fatalf("%s does not start with the header: %.300s", path, text)
	}
	check(t, path+": header tool", h.Tool, tool)
	check(t, path+": header redacted", h.Redacted, new(true))
	check(t, path+": header argv", h.Argv, argv)
	check(t, path+": header cwd", h.Cwd, cwd)
	for i, l := range lines[1:] {
		if l.Format != nil {
			t.Errorf("%s line %d is a second header", path, i+2)
		}
		if l.Seq != int64(i+1) {
			t.Errorf("%s line %d has seq %d, want %d", path, i+2, l.Seq, i+1)
		}
	}
	// The last connection ends with done; only the events of the whole run follow it.
	end := len(lines) - 1
	for end > 1 && lines[end].Dir == "event" && (lines[end].Kind == "side-effects" || lines[end].Kind == "auth-identity") {
		end--
	}
	if last := lines[end]; last.Dir != "event" || last.Kind != "done" {
		t.Errorf("%s ends with %+v, want the done event (and the run's side-effects and auth-identity)", path, last)
	}
	t.Logf("%s: %d events, %d bytes", filepath.Base(path), len(lines)-1, len(text))
	return lines, text
}

// answersBeforeRequests lists the agent responses a transcript records before the client
// request they answer ("id: request seq > answer seq").
func answersBeforeRequests(lines []transcriptLine) []string {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	answered := map[string]int64{} // id → seq of an answer not yet preceded by its request
	asked := map[string]bool{}
	var out []string
	for _, l := range lines[1:] {
		if l.Raw == nil || (l.Dir != "client" && l.Dir != "agent") {
			continue
		}
		var m msg
		if json.Unmarshal([]byte(*l.Raw), &m) != nil || len(m.ID) == 0 {
			continue
		}
		id := string(m.ID)
		switch {
		case l.Dir == "client" && m.Method != nil:
			asked[id] = true
			if seq, ok := answered[id]; ok {
				out = append(out, fmt.Sprintf("%s: %d > %d", id, l.Seq, seq))
				delete(answered, id)
			}
		case l.Dir == "agent" && m.Method == nil && !asked[id]:
			answered[id] = l.Seq
		}
	}
	return out
}

// connections splits a transcript's lines (header first) into its main connection (the
// header and the lines up to its first "done" event) and the purposes of the connections after
// it, in order: each starts right after a "done" with a "spawn" event that names its purpose
// (as record.Split reads a record).
func connections(t *testing.T, lines []transcriptLine) (main []transcriptLine, extra []record.Purpose) {
	t.Helper()
	extra = []record.Purpose{}
	end := len(lines)
	for i := 1; i < len(lines); i++ {
		if i > 1 && lines[i-1].Dir == "event" && lines[i-1].Kind == "done" && lines[i].Dir == "event" && lines[i].Kind == "spawn" {
			var s record.SpawnInfo
			if err := json.Unmarshal(lines[i].Data, &s); err != nil {
				t.Errorf("spawn event %s: %v", lines[i].Data, err)
			}
			if s.Purpose == "" {
				t.Errorf("a second connection without a purpose: %s", lines[i].Data)
			}
			extra = append(extra, s.Purpose)
			end = min(end, i)
		}
	}
	return lines[:end], extra
}

// onlyEvent returns the data of the one event of kind in a transcript (nil, and an error,
// when there is not exactly one).
func onlyEvent(t *testing.T, path string, lines []transcriptLine, kind string) json.RawMessage {
	t.Helper()
	var found []json.RawMessage
	for _, l := range lines[1:] {
		if l.Dir == "event" && l.Kind == kind {
			found = append(found, l.Data)
		}
	}
	if len(found) != 1 {
		t.Errorf("%s has %d %q events, want 1", path, len(found), kind)
		return nil
	}
	return found[0]
}

// checkJSONKey asserts that the object data has key with the JSON value want.
func checkJSONKey(t *testing.T, what string, data json.RawMessage, key, want string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Errorf("%s: %v in %s", what, err, data)
		return
	}
	checkJSON(t, what, m[key], want)
}

// firstDifference shows where two texts part.
func firstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-100)
	return fmt.Sprintf("at byte %d:\n live:    …%.200s\n analyze: …%.200s", i, a[from:], b[from:])
}
