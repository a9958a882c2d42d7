package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// shapeNames are the prompt shapes of `check --prompt-shapes`, in the order they are sent: a
// valid control, then the malformed shapes every validator must reject.
var shapeNames = []string{
	"valid-text-control", "string", "empty-object", "unknown-type", "role-content-string",
	"role-content-blocks", "message-content-string", "message-content-blocks", "type-user", "kind-text",
}

// checked is `acpprobe check --prompt-shapes --deep` run through the library (acpprobe.Run):
// the probe with the active conformance steps; then, in the same log, the fork-probe
// connection when the agent supports session/fork (initialize, a fork of a session that does
// not exist, the agent stopped at once) and the --deep connection (initialize asking for
// acpprobe.DeepVersion); then the analysis and the verdict (fail on MANDATORY, no baseline).
type checked struct {
	probed // the whole record (every connection); res is the report
	// deep and fork are the frames of the extra connections, split off the record (fork is
	// nil when the agent does not support session/fork).
	deep, fork []jsonrpc.Frame
	// extra are the purposes of the extra connections, in order.
	extra []record.Purpose
	// optionalSeen lists the "allowed but not required" findings this run had.
	optionalSeen []string
}

// checkAgent runs the check of argv in a fresh sandbox and checks the record like probeAgent
// does.
func checkAgent(t *testing.T, extraEnv []string, argv ...string) checked {
	t.Helper()
	box := newSandbox(t, extraEnv...)
	main := probeIn(t, box, argv, &acpprobe.Check{PromptShapes: true, Deep: true})
	if main.res.ProtocolVersion == nil {
		// Every agent of the suite answers initialize; without that there is nothing to check.
		t.Fatalf("initialize was not answered (error %v)", main.res.Error)
	}
	for _, f := range main.res.Findings {
		t.Logf("finding %s %s [seq %d %s]: %s", f.Tier, f.ID, f.Seq, f.Pointer, f.Message)
	}
	conns := record.Split(main.log.Frames())
	c := checked{probed: main, deep: conns.Of(record.PurposeDeep), fork: conns.Of(record.PurposeForkProbe)}
	for _, e := range conns.Extra {
		c.extra = append(c.extra, e.Purpose)
	}
	c.checkDeep(t)
	c.checkSteps(t)
	return c
}

// wantFork asserts the fork-probe connection: when the main connection found session/fork
// supported (code is then what the agent answers a fork of a session that does not exist), it
// comes before the deep one, sent initialize and that fork and nothing else, and did not wait
// for the agent to leave on EOF; otherwise (code 0) there is none.
func (c checked) wantFork(t *testing.T, code int) {
	t.Helper()
	supported := c.res.Methods[acp.MethodSessionFork].Support == report.Supported
	check(t, "session/fork supported", supported, code != 0)
	if code == 0 {
		check(t, "extra connections", c.extra, []record.Purpose{record.PurposeDeep})
		return
	}
	check(t, "extra connections", c.extra, []record.Purpose{record.PurposeForkProbe, record.PurposeDeep})
	if c.fork == nil {
		t.Fatal("fork: the record holds no fork-probe connection")
	}
	x := record.New(c.fork)
	spawn := x.Spawn()
	check(t, "fork: spawn.initializeOnly", spawn.InitializeOnly, true)
	check(t, "fork: spawn.protocolVersion", spawn.ProtocolVersion, 1)
	var asked []string
	for _, ex := range x.Calls(jsonrpc.DirClient) {
		asked = append(asked, ex.Method())
		if ex.Answer == nil {
			t.Errorf("fork: %s got no answer", ex.Method())
		}
	}
	check(t, "fork: client requests", asked, []string{acp.MethodInitialize, acp.MethodSessionFork})
	fork := x.First(acp.MethodSessionFork)
	if fork == nil || fork.Answer == nil {
		t.Fatal("fork: no answered session/fork")
	}
	params := acp.ParseObject(fork.Request.Msg.Params)
	check(t, "fork: sessionId", params.String("sessionId"), record.NonexistentSessionID)
	check(t, "fork: cwd", params.String("cwd"), c.box.cwd)
	got := 0
	if e := fork.Answer.Msg.Err(); e != nil {
		got = e.Code
	}
	if got != code {
		t.Errorf("fork: answered %.300s, want error %d", fork.Answer.Raw, code)
	}
	for _, f := range x.Events(record.Teardown.Kind) {
		if p, ok := record.Teardown.Decode(f); ok && p.Step == record.TeardownLadder {
			check(t, "fork: the ladder's wait for EOF (ms)", p.StdinWaitMs, new(0.0))
		}
	}
	if f, ok := x.FirstEvent(record.Exit.Kind); ok {
		e, _ := record.Exit.Decode(f)
		t.Logf("fork: the agent ended by %s (%+v): not judged", e.By, e)
	} else {
		t.Error("fork: no exit event")
	}
}

// checkDeep asserts the deep connection: it asked for DeepVersion, stopped after initialize,
// and the agent answered protocolVersion 1 (so protocol.version-negotiation must not appear;
// the exact finding lists assert that).
func (c checked) checkDeep(t *testing.T) {
	t.Helper()
	frames := c.deep
	if len(frames) == 0 {
		t.Fatalf("deep: the record holds no second connection")
	}
	spawn, ok := record.Spawn.Decode(frames[0])
	if !ok {
		t.Fatalf("deep: the connection does not start with a spawn event")
	}
	check(t, "deep: spawn.protocolVersion", spawn.ProtocolVersion, acpprobe.DeepVersion)
	check(t, "deep: spawn.purpose", spawn.Purpose, record.PurposeDeep)
	check(t, "deep: spawn.initializeOnly", spawn.InitializeOnly, true)
	var asked []string
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request {
			asked = append(asked, f.Msg.Method)
			if f.Msg.Method == acp.MethodInitialize {
				check(t, "deep: initialize protocolVersion", string(acp.ParseObject(f.Msg.Params)["protocolVersion"]),
					fmt.Sprint(acpprobe.DeepVersion))
			}
		}
	}
	check(t, "deep: client requests", asked, []string{acp.MethodInitialize})
	for _, f := range frames {
		if f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Response && f.Msg.Err() != nil {
			t.Errorf("deep: the agent answered with an error: %.300s", f.Raw)
		}
	}
	deep := derive.Connection(context.Background(), record.New(frames), nil)
	check(t, "deep: protocolVersion answered", deep.ProtocolVersion, new(1))
	if deep.Error != nil {
		t.Errorf("deep: result error %s at %s: %s", deep.Error.Code, deep.Error.Stage, deep.Error.Message)
	}
}

// checkSteps asserts that every active step ran and every request of the steps was answered.
func (c checked) checkSteps(t *testing.T) {
	t.Helper()
	var steps []string
	requests := map[string]int64{} // id key → seq, of the client's requests after the first step
	inSteps := false
	for _, f := range record.Split(c.log.Frames()).Main {
		switch {
		case record.Step.Is(f):
			p, _ := record.Step.Decode(f)
			steps = append(steps, p.Name)
			inSteps = true
		case record.Teardown.Is(f):
			inSteps = false
		case inSteps && f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request:
			if k, ok := jsonrpc.IDKey(f.Msg.ID); ok {
				requests[k] = f.Seq
			}
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Response:
			if k, ok := jsonrpc.IDKey(f.Msg.ID); ok {
				delete(requests, k)
			}
		}
	}
	check(t, "steps run", steps, []string{"extension-methods", "invalid-params", "prompt-shapes"})
	if len(requests) > 0 {
		t.Errorf("requests of the steps left unanswered (id → seq): %v", requests)
	}
}

// wantFindings asserts the findings exactly, as a multiset of "TIER id pointer" (no pointer
// when the finding has none): a new finding fails the test as much as a vanished one. The ids
// in optional may appear or not, each for the reason given; they are logged when they do.
func (c *checked) wantFindings(t *testing.T, want []string, optional map[string]string) {
	t.Helper()
	got := []string{}
	for _, f := range c.res.Findings {
		if why, ok := optional[f.ID]; ok {
			t.Logf("allowed finding %s %s (%s): %s", f.Tier, f.ID, why, f.Message)
			c.optionalSeen = append(c.optionalSeen, f.ID)
			continue
		}
		got = append(got, strings.TrimSpace(string(f.Tier)+" "+f.ID+" "+f.Pointer))
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	check(t, "findings", got, want)
	for id := range optional {
		if ch, ok := conformance.Lookup(id); !ok {
			t.Errorf("optional finding %s is not a check id", id)
		} else if ch.Tier == report.TierMandatory {
			t.Errorf("optional finding %s is MANDATORY: it would change the verdict", id)
		}
	}
}

// finding returns the one finding with the given id.
func (c checked) finding(t *testing.T, id string) report.Finding {
	t.Helper()
	var out []report.Finding
	for _, f := range c.res.Findings {
		if f.ID == id {
			out = append(out, f)
		}
	}
	if len(out) != 1 {
		t.Fatalf("%d findings %s, want 1", len(out), id)
	}
	return out[0]
}

// wantSays asserts that the one finding id says text.
func (c checked) wantSays(t *testing.T, id, text string) {
	t.Helper()
	if f := c.finding(t, id); !strings.Contains(f.Message, text) {
		t.Errorf("finding %s says %q, want it to mention %q", id, f.Message, text)
	}
}

// wantVerdict asserts the verdict of Judge with --fail-on mandatory and no baseline; the
// counts do not include the optional findings wantFindings saw (so call it after that).
func (c checked) wantVerdict(t *testing.T, failed bool, counts map[report.Tier]int) {
	t.Helper()
	v := c.res.Verdict
	if v == nil {
		t.Fatal("verdict is nil")
	}
	check(t, "verdict.failed", v.Failed, failed)
	check(t, "verdict.failOn", v.FailOn, report.TierMandatory)
	got := maps.Clone(v.Counts)
	for _, id := range c.optionalSeen {
		ch, _ := conformance.Lookup(id)
		got[ch.Tier]--
	}
	check(t, "verdict.counts (without the allowed findings)", got, counts)
}

// shapesWant is what the prompt-shape probe must find.
type shapesWant struct {
	sessionCreated bool
	controlCode    int // the valid control's answer: an error about the session (or the login)
	rejectCode     int // the answer to every malformed shape
	errorStyle     string
	branches       []report.ShapeBranch
	requiredFields []string // nil when the errors name none without a branch
}

// wantShapes asserts the prompt-shape outcomes: the control passed validation, every
// malformed shape was rejected with rejectCode, and what the errors say about the validator.
func (c checked) wantShapes(t *testing.T, w shapesWant) {
	t.Helper()
	ps := c.res.PromptShapes
	if ps == nil {
		t.Fatal("promptShapes is nil: the prompt-shape step did not run")
	}
	check(t, "promptShapes.session", ps.Session, "nonexistent")
	check(t, "promptShapes.sessionCreated", ps.SessionCreated, w.sessionCreated)
	names := []string{}
	for _, p := range ps.Probes {
		names = append(names, p.Name)
		wantOutcome, wantCode := report.ShapeRejected, w.rejectCode
		if p.Name == shapeNames[0] {
			wantOutcome, wantCode = report.ShapeAccepted, w.controlCode
		}
		code := 0
		if p.Code != nil {
			code = *p.Code
		}
		if p.Outcome != wantOutcome || code != wantCode {
			t.Errorf("shape %s: %s %d, want %s %d; answer %.300s", p.Name, p.Outcome, code, wantOutcome, wantCode, p.Answer)
		}
	}
	check(t, "promptShapes probes", names, shapeNames)
	check(t, "promptShapes.errorStyle", ps.ErrorStyle, w.errorStyle)
	check(t, "promptShapes.inferredBranches", ps.InferredBranches, w.branches)
	check(t, "promptShapes.requiredFields", ps.RequiredFields, w.requiredFields)
	if ps.Prompt != nil {
		t.Errorf("promptShapes.prompt = %s, want none (no --allow-prompt)", show(ps.Prompt))
	}
}

// branches builds the expected inferred branches: "type:field,field" each.
func branches(specs ...string) []report.ShapeBranch {
	out := []report.ShapeBranch{}
	for _, s := range specs {
		typ, fields, _ := strings.Cut(s, ":")
		b := report.ShapeBranch{Type: typ, Required: []string{}}
		if fields != "" {
			b.Required = strings.Split(fields, ",")
		}
		out = append(out, b)
	}
	return out
}

// leftoverWhy is why protocol.leftover-processes is allowed, not required, for codex-acp: its
// node launcher runs the native codex-acp binary as a child in the same process group, and the
// teardown's SIGTERM reaches both at once. Whether the child is still alive at the instant the
// launcher has been reaped is a race between their exits (under load about a third of the runs
// lose it), and then the teardown kills the rest of the group, which the finding reports. The
// survivor checks still require that nothing outlives the probe. (claude-agent-acp is also
// stopped by SIGTERM, but its Claude Code child never outlived it in the runs seen, so there
// the finding is not allowed.)
const leftoverWhy = "codex's native child may outlive its node launcher by a moment after the group SIGTERM"

// TestCheckCodexACP checks codex-acp 0.16.0. It answers the unknown notification
// _acpprobe/unknown-notification with an error response that has no id: the only MANDATORY
// finding, so check fails. The same line is also an invalid JSON-RPC message (a response
// without an id): one departure, one finding, so envelope.invalid-message is the answered
// notification's related evidence.
func TestCheckCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentBin(t, "codex-acp"))

	c.wantFindings(t, []string{
		"MANDATORY protocol.notification-answered",
		"ADVISORY protocol.stdin-exit",
		// The env_var auth methods codex-api-key and openai-api-key.
		"INFO schema.legacy-field /result/authMethods/1/type",
		"INFO schema.legacy-field /result/authMethods/2/type",
		"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp",
		// The serde validator lists audio; promptCapabilities.audio is false.
		"INFO capability.prompt-content",
	}, map[string]string{"protocol.leftover-processes": leftoverWhy})
	c.wantVerdict(t, true, map[report.Tier]int{report.TierMandatory: 1, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 4})
	c.wantSays(t, "capability.prompt-content", "audio")
	c.wantFork(t, 0)
	c.wantExitBy(t, record.ExitSigterm)

	// The line that answers the notification is also a response without an id: that is the
	// answered notification's related evidence, not a finding of its own.
	notif := c.finding(t, "protocol.notification-answered")
	answer := notif.Seq
	wantRelatedInvalidMessage(t, notif)
	for _, f := range c.log.Frames() {
		if f.Seq == answer {
			checkJSON(t, "the answer to the notification", f.Raw,
				`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"_acpprobe/unknown-notification"}}`)
		}
	}

	c.wantShapes(t, shapesWant{
		controlCode:    -32000, // it checks the login before the session
		rejectCode:     -32602,
		errorStyle:     "serde",
		branches:       branches("text", "image", "audio", "resource_link", "resource"),
		requiredFields: []string{"type"},
	})
}

// wantExitBy asserts how the main connection's agent ended: check waits the grace for it to
// leave after its stdin closes, so "stdin" means it did (and no protocol.stdin-exit), "sigterm"
// that it had to be signalled.
func (c checked) wantExitBy(t *testing.T, by record.ExitCause) {
	t.Helper()
	if c.res.Exit == nil {
		t.Fatal("exit is nil")
	}
	t.Logf("exit: by %s, %v ms after its stdin closed", c.res.Exit.By, show(c.res.Exit.AfterStdinCloseMs))
	check(t, "exit.by", c.res.Exit.By, by)
}

// wantRelatedInvalidMessage asserts that a protocol.notification-answered finding carries,
// as its only related evidence, the envelope.invalid-message of its line (a response without
// an id), MANDATORY.
func wantRelatedInvalidMessage(t *testing.T, f report.Finding) {
	t.Helper()
	var ev struct {
		Related []struct {
			ID      string      `json:"id"`
			Tier    report.Tier `json:"tier"`
			Message string      `json:"message"`
		} `json:"related"`
	}
	if err := json.Unmarshal(f.Evidence, &ev); err != nil {
		t.Fatalf("%s evidence %s: %v", f.ID, f.Evidence, err)
	}
	if len(ev.Related) != 1 {
		t.Fatalf("%s evidence.related = %s, want one entry", f.ID, f.Evidence)
	}
	r := ev.Related[0]
	check(t, f.ID+" evidence.related[0].id", r.ID, "envelope.invalid-message")
	check(t, f.ID+" evidence.related[0].tier", r.Tier, report.TierMandatory)
	if !strings.Contains(r.Message, "without an id") {
		t.Errorf("%s evidence.related[0] says %q, want it to mention %q", f.ID, r.Message, "without an id")
	}
}

// TestCheckGeminiCLI checks gemini-cli 0.61.0 (`gemini --acp`). No MANDATORY finding: invalid
// params are answered -32603 (its zod error list rides in data), and the legacy
// session/set_model still answers.
func TestCheckGeminiCLI(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentBin(t, "gemini"), "--acp")

	// It exits by itself when its stdin closes, so no teardown signal and no stdin-exit.
	c.wantFindings(t, []string{
		"ADVISORY protocol.invalid-params /error/code",
		"INFO capability.legacy-method",
	}, nil)
	c.wantVerdict(t, false, map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 1})
	c.wantSays(t, "protocol.invalid-params", `-32603 "Internal error"`)
	c.wantSays(t, "capability.legacy-method", "-32603") // its zod issues: a validation failure
	c.wantFork(t, 0)
	c.wantExitBy(t, record.ExitStdin)

	c.wantShapes(t, shapesWant{
		controlCode: -32602, // "Session not found: …"
		rejectCode:  -32603, // "Internal error" with the zod issues as data
		errorStyle:  "zod-union",
		branches: branches("text:text,type", "image:data,mimeType,type", "audio:data,mimeType,type",
			"resource_link:name,type,uri", "resource:resource,type"),
	})
}

// TestCheckClaudeAgentACP checks claude-agent-acp 0.23.1 in the three cases of
// TestClaudeAgentACP. No MANDATORY finding in any. A created session adds the legacy `models`
// field of its session/new answer.
func TestCheckClaudeAgentACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	bin := agentBin(t, "claude-agent-acp")
	root := os.Geteuid() == 0

	for _, tc := range []struct {
		name    string
		env     []string
		refused bool // session/new fails (see TestClaudeAgentACP)
	}{
		{name: "IS_SANDBOX=yes", env: []string{"IS_SANDBOX=yes"}, refused: root},
		{name: "IS_SANDBOX unset"},
		{name: "IS_SANDBOX=1", env: []string{"IS_SANDBOX=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := checkAgent(t, tc.env, bin)
			var optional map[string]string
			if tc.refused {
				optional = claudeRefusedOptional
			}
			if tc.refused {
				check(t, "error.code", errorCode(c.res), report.ErrUnknown)
			} else {
				check(t, "error.code", errorCode(c.res), report.ErrorCode(""))
			}

			// Detected with invalid params, no Claude Code process starts, and the agent leaves
			// by itself within the grace once its stdin closes: no stdin-exit any more.
			want := []string{
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
				// The zod validator lists audio; promptCapabilities.audio is false.
				"INFO capability.prompt-content",
				"INFO capability.legacy-method",
			}
			counts := map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 0, report.TierInfo: 3}
			if !tc.refused {
				want = append(want, "INFO schema.legacy-field /result/models")
				counts[report.TierInfo]++
			}
			c.wantFindings(t, want, optional)
			c.wantVerdict(t, false, counts)
			c.wantSays(t, "capability.prompt-content", "audio")
			c.wantSays(t, "capability.legacy-method", "-32602")
			// The fork of a session that does not exist, on its own connection: refused with
			// -32002 and a fresh session id ("Resource not found: <uuid>"), no session made.
			c.wantFork(t, -32002)
			// The main connection, which never forked a made-up session, leaves on EOF.
			c.wantExitBy(t, record.ExitStdin)

			c.wantShapes(t, shapesWant{
				sessionCreated: !tc.refused,
				controlCode:    -32603, // "Internal error", data.details "Session not found"
				rejectCode:     -32602,
				errorStyle:     "zod-tree",
				// A zod error tree names the branches, not which branch needs which field.
				branches:       branches("text", "image", "audio", "resource_link", "resource"),
				requiredFields: []string{"data", "mimeType", "name", "resource", "text", "uri"},
			})
		})
	}
}

func errorCode(r *report.Result) report.ErrorCode {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}
