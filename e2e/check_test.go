package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
// and the agent answered initialize with a result (wantDeep asserts which).
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
}

// wantDeep asserts the protocolVersion the agent answered to the deep connection's request
// for DeepVersion: one it supports, at most the one asked for, so no
// protocol.version-negotiation (the exact finding lists assert that). The connection's own
// result has no error when that is 1; a 2 is one acpprobe does not speak, which it says
// (protocol_mismatch at initialize).
func (c checked) wantDeep(t *testing.T, version int) {
	t.Helper()
	deep := derive.Connection(context.Background(), record.New(c.deep), nil)
	check(t, "deep: protocolVersion answered", deep.ProtocolVersion, new(version))
	var got string
	if e := deep.Error; e != nil {
		got = fmt.Sprintf("%s at %s: %s", e.Code, e.Stage, e.Message)
	}
	want := ""
	if version != acp.ProtocolVersion {
		want = fmt.Sprintf("%s at %s: the agent answered protocolVersion %d to a request for %d; acpprobe speaks version %d",
			report.ErrProtocolMismatch, record.StageInitialize, version, acpprobe.DeepVersion, acp.ProtocolVersion)
	}
	check(t, "deep: the connection's result error", got, want)
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
	// knownDefect, when set, is why acpprobe reports the malformed shapes undetermined though
	// the agent rejected them: that outcome is then logged as a KNOWN DEFECT, not failed.
	knownDefect string
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
		if w.knownDefect != "" && wantOutcome == report.ShapeRejected && p.Outcome == report.ShapeUndetermined && code == wantCode {
			// What is true of the answer: a validation error, unlike the control's.
			var e jsonrpc.Error
			if json.Unmarshal(p.Answer, &e) != nil || !acp.IsValidationError(&e) {
				t.Errorf("shape %s: answer %.300s is not a validation error", p.Name, p.Answer)
			}
			t.Logf("KNOWN DEFECT: shape %s reported %s, but the agent rejected it (%s): %.200s", p.Name, p.Outcome, w.knownDefect, p.Answer)
			continue
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

// zodTreeBranches are the branches a zod error tree names (as TypeScript SDK validators answer,
// `z.treeifyError`): the five content types, without saying which field belongs to which.
var zodTreeBranches = branches("text", "image", "audio", "resource_link", "resource")

// zodUnionBranches are the branches zod's issue list names (gemini-cli and qwen-code), each
// with its required fields.
var zodUnionBranches = branches("text:text,type", "image:data,mimeType,type", "audio:data,mimeType,type",
	"resource_link:name,type,uri", "resource:resource,type")

// TestCheckCodexACP checks codex-acp 2.6.0. Its initialize answer carries
// sessionCapabilities.subagents, a key of no ACP schema (it is JetBrains AIR's): the MANDATORY
// finding, so check fails. Changed since 0.16.0: it no longer answers the unknown notification
// (0.16.0 sent an error response without an id, the MANDATORY protocol.notification-answered),
// its api-key method has no legacy `type`, its validator is zod's (0.16.0: serde), and it has
// session/fork, so the fork probe runs: refused with the login error.
func TestCheckCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentArgv(t, "codex")...)

	c.wantFindings(t, []string{
		"MANDATORY schema.non-spec-key /result/agentCapabilities/sessionCapabilities/subagents",
		// Its launcher leaves about 2.1 s after its stdin closes, past the 2 s grace.
		"ADVISORY protocol.stdin-exit",
		"INFO schema.unstable /result/agentCapabilities/providers",
		"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp",
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/systemPrompt",
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/title",
		// The zod validator lists audio; promptCapabilities.audio is false.
		"INFO capability.prompt-content",
		"INFO capability.legacy-method",
	}, nil)
	c.wantVerdict(t, true, map[report.Tier]int{report.TierMandatory: 1, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 7})
	c.wantSays(t, "capability.prompt-content", "audio")
	c.wantSays(t, "capability.legacy-method", "session/set_model answers (-32602")
	c.wantFork(t, -32000) // "Authentication required": the login comes before the session lookup
	c.wantDeep(t, 2)      // asked for 999, it answers 2 (0.16.0: 1), in the v2 shape
	c.wantExitBy(t, record.ExitSigterm)

	c.wantShapes(t, shapesWant{
		controlCode:    -32002, // "Session acpprobe-nonexistent-session not found" (0.16.0: -32000, the login)
		rejectCode:     -32602,
		errorStyle:     "zod-tree",
		branches:       zodTreeBranches,
		requiredFields: []string{"data", "mimeType", "name", "resource", "text", "uri"},
	})
}

// TestCheckGeminiCLI checks gemini-cli 0.61.0 (`gemini --acp`). No MANDATORY finding: invalid
// params are answered -32603 (its zod error list rides in data), and the legacy
// session/set_model still answers.
func TestCheckGeminiCLI(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentArgv(t, "gemini")...)

	// It exits by itself when its stdin closes, so no teardown signal and no stdin-exit.
	c.wantFindings(t, []string{
		"ADVISORY protocol.invalid-params /error/code",
		"INFO capability.legacy-method",
	}, nil)
	c.wantVerdict(t, false, map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 1})
	c.wantSays(t, "protocol.invalid-params", `-32603 "Internal error"`)
	c.wantSays(t, "capability.legacy-method", "-32603") // its zod issues: a validation failure
	c.wantFork(t, 0)
	c.wantDeep(t, 1)
	c.wantExitBy(t, record.ExitStdin)

	c.wantShapes(t, shapesWant{
		controlCode: -32602, // "Session not found: …"
		rejectCode:  -32603, // "Internal error" with the zod issues as data
		errorStyle:  "zod-union",
		branches:    zodUnionBranches,
	})
}

// TestCheckClaudeAgentACP checks claude-agent-acp 0.101.0 in the three cases of
// TestClaudeAgentACP. No MANDATORY finding in any. A created session starts Claude Code, which
// may outlive the adapter after session/close and EOF (claudeSessionWhy):
// protocol.leftover-processes, allowed. Changed since 0.23.1: no legacy session/set_model
// and no legacy `models`, so neither capability.legacy-method nor schema.legacy-field; the
// unstable providers and sessionCapabilities.systemPrompt; the control prompt on a session that
// does not exist answers -32002 (0.23.1: -32603); the deep connection is answered version 2.
func TestCheckClaudeAgentACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	argv := agentArgv(t, "claude")
	for _, tc := range claudeCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := checkAgent(t, tc.env, argv...)
			optional := map[string]string{"protocol.leftover-processes": claudeSessionWhy}
			if tc.refused {
				check(t, "error.code", errorCode(c.res), report.ErrUnknown)
				optional["protocol.leftover-processes"] = claudeAuthStatusWhy
			} else {
				check(t, "error.code", errorCode(c.res), report.ErrorCode(""))
			}

			want := []string{
				"INFO schema.unstable /result/agentCapabilities/providers",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/systemPrompt",
				// The zod validator lists audio; promptCapabilities.audio is false.
				"INFO capability.prompt-content",
			}
			counts := map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 0, report.TierInfo: 4}
			c.wantFindings(t, want, optional)
			c.wantVerdict(t, false, counts)
			c.wantSays(t, "capability.prompt-content", "audio")
			checkClaudeSurvivors(t, c.res.Exit, !tc.refused, true)
			// The fork of a session that does not exist, on its own connection: refused with
			// -32002 ("Resource not found"), no session made.
			c.wantFork(t, -32002)
			c.wantDeep(t, 2)
			// The adapter leaves on EOF by itself.
			c.wantExitBy(t, record.ExitStdin)

			c.wantShapes(t, shapesWant{
				sessionCreated: !tc.refused,
				controlCode:    -32002, // "Resource not found"
				rejectCode:     -32602,
				errorStyle:     "zod-tree",
				branches:       zodTreeBranches,
				requiredFields: []string{"data", "mimeType", "name", "resource", "text", "uri"},
			})
		})
	}
}

// TestCheckQwenCode checks qwen-code 0.24.4: like gemini-cli, invalid params are answered
// -32603 with zod's issue list, and the legacy session/set_model answers. It leaves by itself
// once its stdin closes.
func TestCheckQwenCode(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentArgv(t, "qwen")...)

	c.wantFindings(t, []string{
		"ADVISORY protocol.invalid-params /error/code",
		"INFO capability.legacy-method",
	}, map[string]string{"protocol.leftover-processes": qwenLeftoverWhy})
	c.wantVerdict(t, false, map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 1})
	c.wantSays(t, "protocol.invalid-params", `-32603 "Internal error"`)
	c.wantFork(t, 0)
	c.wantDeep(t, 1)
	c.wantExitBy(t, record.ExitStdin)

	c.wantShapes(t, shapesWant{
		controlCode: -32603, // "Internal error", data.details "Session not found: …"
		rejectCode:  -32603, // "Internal error" with the zod issues as data
		errorStyle:  "zod-union",
		branches:    zodUnionBranches,
		knownDefect: "derive/shapes.go's sameError compares code and message only, so the zod issue list reads like the control's session error",
	})
}

// TestCheckOpenCode checks opencode 1.18.33: no MANDATORY finding. It has session/fork, so the
// fork probe runs: the fork of a session that does not exist is refused, after seconds, with
// -32603 "Internal error: OpenCode service failure". It leaves by itself once its stdin closes.
func TestCheckOpenCode(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentArgv(t, "opencode")...)

	c.wantFindings(t, []string{
		"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
		"INFO capability.prompt-content",
		"INFO capability.unadvertised-method",
		"INFO capability.legacy-method",
	}, nil)
	c.wantVerdict(t, false, map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 0, report.TierInfo: 4})
	c.wantSays(t, "capability.prompt-content", "audio")
	c.wantSays(t, "capability.unadvertised-method", "session/set_mode answers (-32602")
	c.wantFork(t, -32603)
	c.wantDeep(t, 1)
	c.wantExitBy(t, record.ExitStdin)

	c.wantShapes(t, shapesWant{
		sessionCreated: true,
		controlCode:    -32602, // "Invalid params: session not found: …"
		rejectCode:     -32602,
		errorStyle:     "zod-tree",
		branches:       zodTreeBranches,
		requiredFields: []string{"data", "mimeType", "name", "text", "uri"},
	})
}

// TestCheckCodeBuddy checks CodeBuddy Code 2.117.0. Its initialize answer carries
// agentCapabilities.delegateToolsSupport, a key of no ACP schema: the MANDATORY finding, so
// check fails; and no agentInfo. It never leaves on stdin EOF (protocol.stdin-exit): the
// teardown's SIGTERM ends it, and nothing of it is left.
func TestCheckCodeBuddy(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentArgv(t, "codebuddy")...)

	c.wantFindings(t, []string{
		"MANDATORY schema.non-spec-key /result/agentCapabilities/delegateToolsSupport",
		"ADVISORY protocol.agent-info /result/agentInfo",
		"ADVISORY protocol.stdin-exit",
		"INFO capability.prompt-content",
		"INFO capability.legacy-method",
		"INFO capability.unadvertised-method",
	}, nil)
	c.wantVerdict(t, true, map[report.Tier]int{report.TierMandatory: 1, report.TierCapability: 0, report.TierAdvisory: 2, report.TierInfo: 3})
	c.wantSays(t, "capability.prompt-content", "audio")
	c.wantSays(t, "capability.unadvertised-method", "session/resume answers (-32602")
	c.wantFork(t, 0)
	c.wantDeep(t, 1)
	c.wantExitBy(t, record.ExitSigterm)
	c.wantSurvivors(t)

	c.wantShapes(t, shapesWant{
		controlCode:    -32603, // "Internal error", data.details "Session not found: …"
		rejectCode:     -32602,
		errorStyle:     "zod-tree",
		branches:       zodTreeBranches,
		requiredFields: []string{"data", "mimeType", "name", "text", "uri"},
	})
}

func errorCode(r *report.Result) report.ErrorCode {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}
