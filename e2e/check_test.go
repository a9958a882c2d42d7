package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
)

// deepVersion is the protocolVersion the second connection of `acpprobe check --deep` asks
// for (internal/cli's deepVersion): no protocol has it, so an agent must answer the latest
// version it supports instead.
const deepVersion = 999

// shapeNames are the prompt shapes of `check --prompt-shapes`, in the order they are sent: a
// valid control, then the malformed shapes every validator must reject.
var shapeNames = []string{
	"valid-text-control", "string", "empty-object", "unknown-type", "role-content-string",
	"role-content-blocks", "message-content-string", "message-content-blocks", "type-user", "kind-text",
}

// checked is `acpprobe check --prompt-shapes --deep` run through the library: the probe with
// the active conformance steps, a second initialize-only connection asking for deepVersion,
// then conformance.Evaluate and Judge (fail on MANDATORY, no baseline). Each connection has
// its own log here; the CLI records both in one log and splits it (conformance.SplitDeep),
// which TestCLICheckGeminiText covers.
type checked struct {
	probed        // the main connection, with the active steps; res.Findings is set
	deep   probed // the initialize-only connection
	// optionalSeen lists the "allowed but not required" findings this run had.
	optionalSeen []string
}

// checkAgent runs the check of argv in a fresh sandbox (both connections share it, as the CLI's
// do) and checks both connections like probeAgent does.
func checkAgent(t *testing.T, extraEnv []string, argv ...string) checked {
	t.Helper()
	box := newSandbox(t, extraEnv...)
	main := probeIn(t, box, argv, func(o *probe.Options) {
		o.Steps = conformance.Steps(conformance.StepOptions{PromptShapes: true})
	})
	if main.res.ProtocolVersion == nil {
		// Every agent of the suite answers initialize; without that there is nothing to check.
		t.Fatalf("initialize was not answered (error %v)", main.res.Error)
	}
	deep := probeIn(t, box, argv, func(o *probe.Options) {
		o.ProtocolVersion = deepVersion
		o.InitializeOnly = true
	})
	findings, err := conformance.Evaluate(main.log.Frames(), main.res, conformance.Options{Deep: deep.log.Frames()})
	if err != nil {
		t.Fatalf("conformance.Evaluate: %v", err)
	}
	main.res.Findings = findings
	conformance.Judge(main.res, probe.TierMandatory, nil, "")
	for _, f := range findings {
		t.Logf("finding %s %s [seq %d %s]: %s", f.Tier, f.ID, f.Seq, f.Pointer, f.Message)
	}
	c := checked{probed: main, deep: deep}
	c.checkDeep(t)
	c.checkSteps(t)
	return c
}

// checkDeep asserts the deep connection: it asked for deepVersion, stopped after initialize,
// and the agent answered protocolVersion 1 (so protocol.version-negotiation must not appear;
// the exact finding lists assert that).
func (c checked) checkDeep(t *testing.T) {
	t.Helper()
	// Evaluate reads the version asked for from the connection's first frame, its spawn event.
	frames := c.deep.log.Frames()
	var spawn probe.SpawnInfo
	if len(frames) == 0 || frames[0].Dir != jsonrpc.DirEvent || frames[0].Kind != probe.EventSpawn ||
		json.Unmarshal(frames[0].Raw, &spawn) != nil {
		t.Fatalf("deep: the log does not start with a spawn event")
	}
	check(t, "deep: spawn.protocolVersion", spawn.ProtocolVersion, deepVersion)
	check(t, "deep: spawn.initializeOnly", spawn.InitializeOnly, true)
	var asked []string
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request {
			asked = append(asked, f.Msg.Method)
			if f.Msg.Method == acp.MethodInitialize {
				check(t, "deep: initialize protocolVersion", string(acp.ParseObject(f.Msg.Params)["protocolVersion"]),
					fmt.Sprint(deepVersion))
			}
		}
	}
	check(t, "deep: client requests", asked, []string{acp.MethodInitialize})
	// Not asserted: the deep Result's error. probe's builder does not know an initialize-only
	// run and reports agent_crashed at session/new for the session/new it never sent;
	// Evaluate only reads the answered version, so no finding depends on it.
	if e := c.deep.res.Error; e != nil {
		t.Logf("deep: result error %s at %s: %s", e.Code, e.Stage, e.Message)
	}
	for _, f := range frames {
		if f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Response && f.Msg.Err() != nil {
			t.Errorf("deep: the agent answered with an error: %.300s", f.Raw)
		}
	}
	check(t, "deep: protocolVersion answered", c.deep.res.ProtocolVersion, new(1))
	// Evaluate reads the deep connection from its frames, not from the Result.
	check(t, "deep: protocolVersion from the frames", probe.FromFrames(frames).ProtocolVersion, new(1))
}

// checkSteps asserts that every active step ran and every request of the steps was answered.
func (c checked) checkSteps(t *testing.T) {
	t.Helper()
	var steps []string
	requests := map[string]int64{} // id key → seq, of the client's requests after the first step
	inSteps := false
	for _, f := range c.log.Frames() {
		switch {
		case f.Dir == jsonrpc.DirEvent && f.Kind == probe.EventStep:
			var p struct{ Name string }
			_ = json.Unmarshal(f.Raw, &p)
			steps = append(steps, p.Name)
			inSteps = true
		case f.Dir == jsonrpc.DirEvent && f.Kind == probe.EventTeardown:
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
		got = append(got, strings.TrimSpace(f.Tier+" "+f.ID+" "+f.Pointer))
	}
	slices.Sort(got)
	want = slices.Clone(want)
	slices.Sort(want)
	check(t, "findings", got, want)
	for id := range optional {
		if ch, ok := conformance.Lookup(id); !ok {
			t.Errorf("optional finding %s is not a check id", id)
		} else if ch.Tier == probe.TierMandatory {
			t.Errorf("optional finding %s is MANDATORY: it would change the verdict", id)
		}
	}
}

// finding returns the one finding with the given id.
func (c checked) finding(t *testing.T, id string) probe.Finding {
	t.Helper()
	var out []probe.Finding
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
func (c checked) wantVerdict(t *testing.T, failed bool, counts map[string]int) {
	t.Helper()
	v := c.res.Verdict
	if v == nil {
		t.Fatal("verdict is nil")
	}
	check(t, "verdict.failed", v.Failed, failed)
	check(t, "verdict.failOn", v.FailOn, probe.TierMandatory)
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
	branches       []probe.ShapeBranch
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
		wantOutcome, wantCode := "rejected", w.rejectCode
		if p.Name == shapeNames[0] {
			wantOutcome, wantCode = "accepted", w.controlCode
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
func branches(specs ...string) []probe.ShapeBranch {
	out := []probe.ShapeBranch{}
	for _, s := range specs {
		typ, fields, _ := strings.Cut(s, ":")
		b := probe.ShapeBranch{Type: typ, Required: []string{}}
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
// findings (the same line counts as an invalid JSON-RPC message and as an answered
// notification), so check fails.
func TestCheckCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	c := checkAgent(t, nil, agentBin(t, "codex-acp"))

	c.wantFindings(t, []string{
		"MANDATORY envelope.invalid-message",
		"MANDATORY protocol.notification-answered",
		"ADVISORY protocol.stdin-exit",
		// The env_var auth methods codex-api-key and openai-api-key.
		"INFO schema.legacy-field /result/authMethods/1/type",
		"INFO schema.legacy-field /result/authMethods/2/type",
		"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp",
		// The serde validator lists audio; promptCapabilities.audio is false.
		"INFO capability.prompt-content",
	}, map[string]string{"protocol.leftover-processes": leftoverWhy})
	c.wantVerdict(t, true, map[string]int{probe.TierMandatory: 2, probe.TierCapability: 0, probe.TierAdvisory: 1, probe.TierInfo: 4})
	c.wantSays(t, "capability.prompt-content", "audio")

	// Both MANDATORY findings are the one line that answers the notification.
	answer := c.finding(t, "protocol.notification-answered").Seq
	check(t, "envelope.invalid-message seq", c.finding(t, "envelope.invalid-message").Seq, answer)
	c.wantSays(t, "envelope.invalid-message", "without an id")
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
	c.wantVerdict(t, false, map[string]int{probe.TierMandatory: 0, probe.TierCapability: 0, probe.TierAdvisory: 1, probe.TierInfo: 1})
	c.wantSays(t, "protocol.invalid-params", `-32603 "Internal error"`)
	c.wantSays(t, "capability.legacy-method", "-32602")

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
			if tc.refused {
				check(t, "error.code", errorCode(c.res), probe.ErrUnknown)
			} else {
				check(t, "error.code", errorCode(c.res), "")
			}

			want := []string{
				"ADVISORY protocol.stdin-exit",
				"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
				// The zod validator lists audio; promptCapabilities.audio is false.
				"INFO capability.prompt-content",
				"INFO capability.legacy-method",
			}
			counts := map[string]int{probe.TierMandatory: 0, probe.TierCapability: 0, probe.TierAdvisory: 1, probe.TierInfo: 3}
			if !tc.refused {
				want = append(want, "INFO schema.legacy-field /result/models")
				counts[probe.TierInfo]++
			}
			c.wantFindings(t, want, nil)
			c.wantVerdict(t, false, counts)
			c.wantSays(t, "capability.prompt-content", "audio")
			c.wantSays(t, "capability.legacy-method", "-32603")

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

func errorCode(r *probe.Result) string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Code
}
