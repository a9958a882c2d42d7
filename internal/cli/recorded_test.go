package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transcript"
	"github.com/acpprobe/acpprobe/turn"
)

// recordedDir holds transcripts of real agents at versions the e2e suite no longer installs
// (testdata/agents at the module root; its README says how each was made). What the e2e suite
// asserted about those versions is asserted here on the recordings, offline and without npm.
var recordedDir = filepath.Join("..", "..", "testdata", "agents")

// recorded is one kept transcript and the facts its analysis must show. file is relative to
// recordedDir; beside it lie the result acpprobe printed with --json (.result.json), its exit
// code (.exit) and its text report (.result.txt, documentation only).
type recorded struct {
	file      string
	agentInfo acp.Implementation
	caps      report.Capabilities
	auth      []authWant
	methods   map[string]methodWant
	// configOption is supportsConfigOption.
	configOption bool
	// err is the probe's error: code, stage and the agent's error object (zero: none).
	err        errWant
	authStatus report.AuthState
	// exitBy is how the main connection's agent ended.
	exitBy record.ExitCause
	check  *checkWant // a check transcript
	turns  *turnsWant // a turn transcript
	// more asserts what only one version needs (nil when nothing).
	more func(f fact, r *report.Result, frames []jsonrpc.Frame)
}

type authWant struct {
	ID   string
	Type string   // "" when absent
	Vars []string // the env_var variables
}

// methodWant is the support of one optional method and the error code of its answer (0: a
// result).
type methodWant struct {
	support report.Support
	code    int
}

type errWant struct {
	code       report.ErrorCode
	stage      record.Stage
	agentError string // JSON
}

// checkWant is what `check --prompt-shapes --deep` found.
type checkWant struct {
	// findings is the exact multiset "TIER id pointer".
	findings []string
	failed   bool
	counts   map[report.Tier]int
	// says: the one finding of each id mentions the text.
	says map[string]string
	// forkCode is the answer to the fork probe's session/fork of a session that does not exist
	// (0: the agent has no session/fork, so no fork probe).
	forkCode int
	shapes   shapesWant
}

type shapesWant struct {
	sessionCreated bool
	controlCode    int // the valid control's answer
	rejectCode     int // the answer to every malformed shape
	errorStyle     string
	branches       []string // "type:field,field"
	requiredFields []string
}

// turnsWant is what the turn scenarios showed.
type turnsWant struct {
	// outcomes of every scenario the transcript ran, by name.
	outcomes map[record.Scenario]report.TurnOutcome
	// findings are the exact scenario findings (turn.*, sessions.*, mcp.*), sorted.
	findings []string
	// family is in the name of a model the completion asked for ("" when not run).
	family string
	// reached is the least number of model selections that reached the model.
	reached int
	// permission is what the refused write left (nil when not run).
	permission *permissionWant
	// cancel is what the cancel did (nil when not run).
	cancel *cancelWant
	// mcp is where each sentinel transport stopped ("" all the way; nil when not run).
	mcp map[string]string
	// sessions checks the sessions scenario (nil when not asserted).
	sessions func(f fact, s *report.SessionsTruth)
}

// permissionWant is the tool call's last status and the stop reason of a refused write.
type permissionWant struct{ toolStatus, stopReason string }

// cancelWant is the cancelled turn's stop reason and whether the next turn had text.
type cancelWant struct {
	stopReason string
	nextText   bool
}

// fact reports a fact that does not hold, naming the transcript.
type fact struct {
	t    *testing.T
	file string
}

func (f fact) errorf(format string, args ...any) {
	f.t.Helper()
	f.t.Errorf("%s: %s", f.file, fmt.Sprintf(format, args...))
}

func (f fact) eq(what string, got, want any) {
	f.t.Helper()
	if !reflect.DeepEqual(got, want) {
		f.errorf("%s:\n got  %s\n want %s", what, showJSON(got), showJSON(want))
	}
}

func showJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// The answers of each old version to method detection (e2e/*_test.go at the pins).
var (
	// claude-agent-acp 0.23.1: its zod validator answers -32602 before any handler runs.
	claude0231Methods = map[string]methodWant{
		acp.MethodSetConfigOption: {report.Supported, -32602},
		acp.MethodSetMode:         {report.Supported, -32602},
		acp.MethodSetModel:        {report.Supported, -32602},
		acp.MethodSessionLoad:     {report.Supported, -32602},
		acp.MethodSessionResume:   {report.Supported, -32602},
		acp.MethodSessionFork:     {report.Supported, -32602},
		acp.MethodSessionList:     {report.Supported, -32602},
		acp.MethodSessionClose:    {report.Supported, -32602},
		acp.MethodSessionDelete:   {report.Unsupported, -32601},
	}
	// codex-acp 0.16.0: serde refuses the params before the login is asked for.
	codex0160Methods = map[string]methodWant{
		acp.MethodSetConfigOption: {report.Supported, -32602},
		acp.MethodSetMode:         {report.Supported, -32602},
		acp.MethodSetModel:        {report.Unsupported, -32601},
		acp.MethodSessionLoad:     {report.Supported, -32602},
		acp.MethodSessionResume:   {report.Supported, -32602},
		acp.MethodSessionFork:     {report.Unsupported, -32601},
		acp.MethodSessionList:     {report.Supported, -32602},
		acp.MethodSessionClose:    {report.Supported, -32602},
		acp.MethodSessionDelete:   {report.Unsupported, -32601},
	}
	// gemini-cli 0.61.0: -32603 "Internal error" with zod's issues is a validation failure.
	gemini0610Methods = map[string]methodWant{
		acp.MethodSetConfigOption: {report.Unsupported, -32601},
		acp.MethodSetMode:         {report.Supported, -32603},
		acp.MethodSetModel:        {report.Supported, -32603},
		acp.MethodSessionLoad:     {report.Supported, -32603},
		acp.MethodSessionResume:   {report.Unsupported, -32601},
		acp.MethodSessionFork:     {report.Unsupported, -32601},
		acp.MethodSessionList:     {report.Unsupported, -32601},
		acp.MethodSessionClose:    {report.Unsupported, -32601},
		acp.MethodSessionDelete:   {report.Unsupported, -32601},
	}

	claude0231 = acp.Implementation{Name: "@zed-industries/claude-agent-acp", Title: "Claude Agent", Version: "0.23.1"}
	codex0160  = acp.Implementation{Name: "codex-acp", Title: "Codex", Version: "0.16.0"}
	gemini0610 = acp.Implementation{Name: "gemini-cli", Title: "Gemini CLI", Version: "0.61.0"}

	claude0231Caps = report.Capabilities{
		LoadSession:         true,
		PromptCapabilities:  report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:     report.McpCapabilities{HTTP: true, SSE: true},
		SessionCapabilities: report.SessionCapabilities{Close: true, List: true, Resume: true, Fork: true},
		MetaKeys:            []string{"claudeCode"},
	}
	codex0160Caps = report.Capabilities{
		LoadSession:         true,
		PromptCapabilities:  report.PromptCapabilities{Image: true, EmbeddedContext: true},
		McpCapabilities:     report.McpCapabilities{HTTP: true},
		SessionCapabilities: report.SessionCapabilities{Close: true, List: true, Resume: true},
		Auth:                report.AuthCapabilities{Logout: true},
		MetaKeys:            []string{},
	}
	gemini0610Caps = report.Capabilities{
		LoadSession:        true,
		PromptCapabilities: report.PromptCapabilities{Image: true, Audio: true, EmbeddedContext: true},
		McpCapabilities:    report.McpCapabilities{HTTP: true, SSE: true},
		MetaKeys:           []string{},
	}
	codex0160Auth = []authWant{
		{ID: "chatgpt"},
		{ID: "codex-api-key", Type: "env_var", Vars: []string{"CODEX_API_KEY"}},
		{ID: "openai-api-key", Type: "env_var", Vars: []string{"OPENAI_API_KEY"}},
	}
	gemini0610Auth = []authWant{{ID: "oauth-personal"}, {ID: "gemini-api-key"}, {ID: "vertex-ai"}, {ID: "gateway"}}
)

// claude0231Check is what check found on claude-agent-acp 0.23.1, with or without a session
// (created): no MANDATORY finding, and a created session adds the legacy models field of its
// session/new answer. The fork probe's fork of a made-up session is refused with -32002
// "Resource not found: <a fresh uuid>". A zod error tree names the branches, not which branch
// needs which field.
func claude0231Check(created bool) *checkWant {
	w := &checkWant{
		findings: []string{
			"INFO schema.unstable /result/agentCapabilities/sessionCapabilities/fork",
			"INFO capability.prompt-content", // the zod validator lists audio
			"INFO capability.legacy-method",
		},
		counts:   map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 0, report.TierInfo: 3},
		says:     map[string]string{"capability.prompt-content": "audio", "capability.legacy-method": "-32602"},
		forkCode: -32002,
		shapes: shapesWant{sessionCreated: created, controlCode: -32603, rejectCode: -32602, errorStyle: "zod-tree",
			branches:       []string{"text", "image", "audio", "resource_link", "resource"},
			requiredFields: []string{"data", "mimeType", "name", "resource", "text", "uri"}},
	}
	if created {
		w.findings = append(w.findings, "INFO schema.legacy-field /result/models")
		w.counts[report.TierInfo]++
	}
	return w
}

// recordedAgents are the kept transcripts, with what the e2e suite asserted about each version
// (e2e/claude_test.go, codex_test.go, gemini_test.go, check_test.go, turn_test.go and
// sessions_test.go before the pins moved). Every transcript in recordedDir has a row.
var recordedAgents = []recorded{
	{
		// CodeBuddy Code 2.117.0 (the SDK's bundled CLI) on its backend profile: no agentInfo, a
		// session without a login, the active checks on that session and the completion and
		// prompt-shapes turns. Seed 000's tables (docs/codebuddy.md) are this transcript's
		// (TestSeed000Tables); here the facts behind them: every wrong shape refused -32602 with a
		// zod tree naming the five block types, audio accepted though not advertised and dropped
		// before the model, the answer in agent_message_chunk and end_turn.
		file: "codebuddy-code-2.117.0/check-turns.ndjson",
		caps: report.Capabilities{LoadSession: true, PromptCapabilities: report.PromptCapabilities{Image: true, EmbeddedContext: true},
			McpCapabilities: report.McpCapabilities{HTTP: true, SSE: true}, MetaKeys: []string{}},
		auth: []authWant{{ID: "iOA"}, {ID: "external"}, {ID: "internal"}, {ID: "selfhosted"}},
		methods: map[string]methodWant{"session/close": {report.Unsupported, -32601}, "session/delete": {report.Unsupported, -32601},
			"session/fork": {report.Unsupported, -32601}, "session/list": {report.Unsupported, -32601},
			"session/load": {report.Supported, -32602}, "session/resume": {report.Supported, -32602},
			"session/set_config_option": {report.Supported, -32602}, "session/set_mode": {report.Supported, -32602},
			"session/set_model": {report.Supported, -32603}},
		configOption: true, authStatus: report.AuthAuthenticated, exitBy: record.ExitSigterm,
		turns: &turnsWant{
			outcomes: map[record.Scenario]report.TurnOutcome{record.ScenarioCompletion: report.TurnPassed, record.ScenarioShapes: report.TurnPassed},
			findings: []string{"turn.shape-unadvertised"},
			family:   "default-model",
		},
		more: func(f fact, r *report.Result, _ []jsonrpc.Frame) {
			ps := r.PromptShapes
			if ps == nil {
				f.errorf("no promptShapes")
				return
			}
			f.eq("promptShapes.errorStyle", ps.ErrorStyle, "zod-tree")
			f.eq("promptShapes.inferredBranches", branchTypes(ps.InferredBranches), []string{"text", "image", "audio", "resource_link", "resource"})
			for _, p := range ps.Probes[1:] {
				if p.Outcome != report.ShapeRejected || p.Code == nil || *p.Code != -32602 {
					f.errorf("shape %s: %s %v, want rejected -32602", p.Name, p.Outcome, p.Code)
				}
			}
			for _, tr := range r.Turns {
				for _, s := range tr.Shapes {
					f.eq("shape "+s.Type+" accepted, reached", [2]bool{s.Accepted, s.Reached}, [2]bool{true, s.Type != "audio"})
				}
				for _, run := range tr.Runs {
					f.eq(tr.Scenario+": text in, stopReason", [2]string{strings.Join(run.TextIn, ","), run.StopReason}, [2]string{"agent_message_chunk", "end_turn"})
				}
			}
			f.eq("zeroMeta.outcome", r.ZeroMeta.Outcome, report.ZeroMetaHeld)
		},
	},
	{
		// As root with IS_SANDBOX empty, claude-agent-acp creates a session without any login
		// and offers no bypassPermissions mode.
		file: "claude-agent-acp-0.23.1/check.ndjson", agentInfo: claude0231, caps: claude0231Caps, auth: []authWant{},
		methods: claude0231Methods, configOption: true, authStatus: report.AuthAuthenticated,
		exitBy: record.ExitStdin, // the main connection never forked a made-up session: it leaves on EOF
		check:  claude0231Check(true),
		more:   claudeSession(false),
	},
	{
		// As root with IS_SANDBOX=1, the one value Claude Code accepts for
		// --allow-dangerously-skip-permissions: the session works and offers bypassPermissions.
		file: "claude-agent-acp-0.23.1/check-is-sandbox-1.ndjson", agentInfo: claude0231, caps: claude0231Caps, auth: []authWant{},
		methods: claude0231Methods, configOption: true, authStatus: report.AuthAuthenticated, exitBy: record.ExitStdin,
		check: claude0231Check(true),
		more:  claudeSession(true),
	},
	{
		// As root with IS_SANDBOX=yes: the adapter treats any non-empty value as a sandbox and passes
		// --allow-dangerously-skip-permissions, Claude Code refuses it as root and exits, and
		// session/new answers a generic internal error: the cause is unknown, not auth. Whether
		// the agent then leaves on EOF was a coin toss (protocol.stdin-exit allowed, not
		// required): in this recording it left (exit stdin, no stdin-exit).
		file: "claude-agent-acp-0.23.1/check-is-sandbox-yes.ndjson", agentInfo: claude0231, caps: claude0231Caps, auth: []authWant{},
		methods: claude0231Methods, configOption: true, authStatus: report.AuthUnknown, exitBy: record.ExitStdin,
		err: errWant{report.ErrUnknown, record.StageSessionNew,
			`{"code":-32603,"message":"Internal error","data":{"details":"Query closed before response received"}}`},
		check: claude0231Check(false),
		more: func(f fact, r *report.Result, _ []jsonrpc.Frame) {
			f.eq("raw.newSession", string(r.Raw.NewSession), "null")
		},
	},
	{
		// The main turn transcript: after the cancel, the next prompt ends end_turn at once with
		// no text and the agent calls the model only after answering. Every scenario ran on the
		// same agent process then, so the sessions turn after it answers before its model
		// request; the agent called the model in the other turns, so the scenario ran (a route
		// that did not take is said only of a run with no model request at all), and its load of
		// the fork lacks the history as in turn-sessions.ndjson.
		file: "claude-agent-acp-0.23.1/turn.ndjson", agentInfo: claude0231, caps: claude0231Caps, auth: []authWant{},
		methods: claude0231Methods, configOption: true, authStatus: report.AuthAuthenticated, exitBy: record.ExitSigterm,
		turns: &turnsWant{
			outcomes: map[record.Scenario]report.TurnOutcome{
				// prompt-shapes has an INFO finding only (an unadvertised audio block): passed, with a note.
				record.ScenarioCompletion: report.TurnPassed, record.ScenarioShapes: report.TurnPassed,
				record.ScenarioModels: report.TurnPassed, record.ScenarioPermission: report.TurnPassed,
				record.ScenarioCancel: report.TurnFailed, record.ScenarioSessions: report.TurnFailed,
				record.ScenarioMCP: report.TurnPassed,
			},
			findings:   []string{"sessions.fork-broken", "turn.shape-unadvertised", "turn.unusable-after-cancel"},
			family:     "claude",
			reached:    3,
			permission: &permissionWant{"failed", "end_turn"},
			cancel:     &cancelWant{"cancelled", false},
			mcp:        map[string]string{"stdio": "", "http": "", "sse": ""},
		},
	},
	{
		// The sessions scenario alone, on fresh processes in the turn's sandbox: it lists the
		// session in its real cwd, load replays the user message, the text and the tool call
		// (same id), close frees the session and leaves no process behind over the cycles,
		// resume replays nothing; but session/load of a fresh fork replays nothing at all.
		file: "claude-agent-acp-0.23.1/turn-sessions.ndjson", agentInfo: claude0231, caps: claude0231Caps, auth: []authWant{},
		methods: claude0231Methods, configOption: true, authStatus: report.AuthAuthenticated, exitBy: record.ExitSigterm,
		turns: &turnsWant{
			outcomes: map[record.Scenario]report.TurnOutcome{record.ScenarioSessions: report.TurnFailed},
			findings: []string{"sessions.fork-broken"},
			sessions: func(f fact, s *report.SessionsTruth) {
				f.eq("sessions advertised", strings.Join(s.Advertised, ","), "load,list,fork,close,resume")
				sessionsWork(f, s)
				if s.Load != nil && len(s.Live.ToolCalls) > 0 {
					f.eq("sessions: the tool calls load replays", s.Load.Replay.ToolCalls, s.Live.ToolCalls)
				}
				if s.Fork == nil || !s.Fork.Distinct || s.Fork.Load == nil || !s.Fork.Load.OK() || s.Fork.Load.Replay.Updates != 0 {
					f.errorf("sessions: fork %s, want a new id whose load replays nothing", showJSON(s.Fork))
				}
			},
		},
	},
	{
		// codex-acp answers the unknown notification with an error response without an id: one
		// departure, one MANDATORY finding, so check fails. (protocol.leftover-processes was
		// allowed, not required, in e2e: its native child may outlive the node launcher by a
		// moment; it did not in this recording.)
		file: "codex-acp-0.16.0/check.ndjson", agentInfo: codex0160, caps: codex0160Caps, auth: codex0160Auth,
		methods: codex0160Methods, configOption: true, authStatus: report.AuthRequired,
		exitBy: record.ExitSigterm, // its node launcher does not leave when stdin closes
		err:    errWant{report.ErrAuthRequired, record.StageSessionNew, `{"code":-32000,"message":"Authentication required"}`},
		check: &checkWant{
			findings: []string{
				"MANDATORY protocol.notification-answered",
				"ADVISORY protocol.stdin-exit",
				"INFO schema.legacy-field /result/authMethods/1/type",
				"INFO schema.legacy-field /result/authMethods/2/type",
				"INFO schema.unstable /result/agentCapabilities/mcpCapabilities/acp",
				"INFO capability.prompt-content", // the serde validator lists audio
			},
			failed: true,
			counts: map[report.Tier]int{report.TierMandatory: 1, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 4},
			says:   map[string]string{"capability.prompt-content": "audio"},
			shapes: shapesWant{controlCode: -32000, rejectCode: -32602, errorStyle: "serde", // it checks the login first
				branches: []string{"text", "image", "audio", "resource_link", "resource"}, requiredFields: []string{"type"}},
		},
		more: codexWire,
	},
	{
		// A refused write ends the turn cancelled and leaves the tool call in_progress; every
		// model and reasoning effort reaches the model; sse is not advertised and never
		// connected to. The sessions scenario follows the other scenarios on the same session
		// here, so its load replays their tool calls too.
		file: "codex-acp-0.16.0/turn.ndjson", agentInfo: codex0160, caps: codex0160Caps, auth: codex0160Auth,
		methods: codex0160Methods, configOption: true, authStatus: report.AuthAuthenticated, exitBy: record.ExitSigterm,
		turns: &turnsWant{
			outcomes: map[record.Scenario]report.TurnOutcome{
				// prompt-shapes and mcp have INFO findings only (an unadvertised audio block and
				// sse transport): passed, with notes.
				record.ScenarioCompletion: report.TurnPassed, record.ScenarioShapes: report.TurnPassed,
				record.ScenarioModels: report.TurnPassed, record.ScenarioPermission: report.TurnFailed,
				record.ScenarioCancel: report.TurnPassed, record.ScenarioSessions: report.TurnFailed,
				record.ScenarioMCP: report.TurnPassed,
			},
			findings:   []string{"mcp.unadvertised-transport", "sessions.replay-incomplete", "turn.refused-tool-call-not-ended", "turn.shape-unadvertised"},
			family:     "gpt",
			reached:    5,
			permission: &permissionWant{"in_progress", "cancelled"},
			cancel:     &cancelWant{"cancelled", true},
			mcp:        map[string]string{"stdio": "", "http": "", "sse": "connected"},
			sessions: func(f fact, s *report.SessionsTruth) {
				f.eq("sessions advertised", strings.Join(s.Advertised, ","), "load,list,close,resume")
				sessionsWork(f, s)
				// Its load replays the refused write's tool call completed where the live turn
				// left it in_progress.
				if len(s.Live.ToolCalls) != 1 || s.Load == nil {
					f.errorf("sessions: live tool calls %s, load %s: want one live tool call and a load", showJSON(s.Live.ToolCalls), showJSON(s.Load))
					return
				}
				live := s.Live.ToolCalls[0]
				f.eq("sessions: live tool call status", live.Status, "in_progress")
				i := slices.IndexFunc(s.Load.Replay.ToolCalls, func(c report.ToolCallTruth) bool { return c.ID == live.ID })
				if i < 0 {
					f.errorf("sessions: load replays no tool call %s: %s", live.ID, showJSON(s.Load.Replay.ToolCalls))
					return
				}
				f.eq("sessions: replayed tool call status", s.Load.Replay.ToolCalls[i].Status, "completed")
			},
		},
	},
	{
		// No MANDATORY finding: invalid params are answered -32603 (the zod issues in data) and
		// the legacy session/set_model still answers; it exits by itself when its stdin closes.
		file: "gemini-cli-0.61.0/check.ndjson", agentInfo: gemini0610, caps: gemini0610Caps, auth: gemini0610Auth,
		methods: gemini0610Methods, authStatus: report.AuthRequired, exitBy: record.ExitStdin,
		err: errWant{report.ErrAuthRequired, record.StageSessionNew, `{"code":-32000,"message":"Gemini API key is missing or not configured."}`},
		check: &checkWant{
			findings: []string{"ADVISORY protocol.invalid-params /error/code", "INFO capability.legacy-method"},
			counts:   map[report.Tier]int{report.TierMandatory: 0, report.TierCapability: 0, report.TierAdvisory: 1, report.TierInfo: 1},
			says:     map[string]string{"protocol.invalid-params": `-32603 "Internal error"`, "capability.legacy-method": "-32603"},
			shapes: shapesWant{controlCode: -32602, rejectCode: -32603, errorStyle: "zod-union",
				branches: []string{"text:text,type", "image:data,mimeType,type", "audio:data,mimeType,type",
					"resource_link:name,type,uri", "resource:resource,type"}},
		},
	},
	{
		// A router request, then the model; legacy session/set_model selections reach it;
		// permission asked and refused; cancel clean; all three sentinels (in its trusted
		// throwaway workspace) go all the way. A fresh process usually cannot load the session
		// (sessions.load-failed): the loading process writes a fresh start for the session id
		// before it reads the file back, a race it now and then loses the other way.
		file: "gemini-cli-0.61.0/turn.ndjson", agentInfo: gemini0610, caps: gemini0610Caps, auth: gemini0610Auth,
		methods: gemini0610Methods, authStatus: report.AuthAuthenticated, exitBy: record.ExitSigterm,
		turns: &turnsWant{
			outcomes: map[record.Scenario]report.TurnOutcome{
				record.ScenarioCompletion: report.TurnPassed, record.ScenarioShapes: report.TurnPassed,
				record.ScenarioModels: report.TurnPassed, record.ScenarioPermission: report.TurnPassed,
				record.ScenarioCancel: report.TurnPassed, record.ScenarioSessions: report.TurnFailed,
				record.ScenarioMCP: report.TurnPassed,
			},
			findings:   []string{"sessions.load-failed"},
			family:     "gemini",
			reached:    3,
			permission: &permissionWant{"", "end_turn"},
			cancel:     &cancelWant{"cancelled", true},
			mcp:        map[string]string{"stdio": "", "http": "", "sse": ""},
			sessions: func(f fact, s *report.SessionsTruth) {
				f.eq("sessions advertised", strings.Join(s.Advertised, ","), "load")
				if s.Load == nil || s.Load.OK() {
					f.errorf("sessions: load %s, want it refused (the recorded side of gemini-cli's race)", showJSON(s.Load))
				}
			},
		},
	},
}

// TestRecordedAgentsListed: every transcript kept in recordedDir has its row of facts, and every
// row's files are there, so a recording cannot be added or lost unnoticed.
func TestRecordedAgentsListed(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(recordedDir, "*", "*.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var kept, listed []string
	for _, f := range files {
		rel, _ := filepath.Rel(recordedDir, f)
		kept = append(kept, filepath.ToSlash(rel))
	}
	for _, r := range recordedAgents {
		listed = append(listed, r.file)
		for _, ext := range []string{".result.json", ".result.txt", ".exit"} {
			if _, err := os.Stat(filepath.Join(recordedDir, strings.TrimSuffix(r.file, ".ndjson")+ext)); err != nil {
				t.Errorf("%s: %v", r.file, err)
			}
		}
	}
	slices.Sort(kept)
	slices.Sort(listed)
	if !slices.Equal(kept, listed) {
		t.Errorf("transcripts in %s: %q; rows of recordedAgents: %q (a new transcript needs its facts)", recordedDir, kept, listed)
	}
}

// TestRecordedAgents analyzes every kept transcript (acpprobe.Analyze, with the verdict acpprobe
// analyze gives a check or turn transcript): the result is the kept one, structurally (the
// sameresult rule), and the facts of its row hold. A deliberate change of a report updates the
// kept .result.json in the same commit, saying why; the transcripts never change.
func TestRecordedAgents(t *testing.T) {
	for _, row := range recordedAgents {
		t.Run(strings.TrimSuffix(row.file, ".ndjson"), func(t *testing.T) {
			t.Parallel()
			f := fact{t: t, file: row.file}
			path := filepath.Join(recordedDir, row.file)
			frames := readRecorded(t, path)
			r, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{
				Verdict: &acpprobe.Verdict{FailOn: report.TierMandatory}})
			if err != nil {
				t.Fatalf("%s: %v", row.file, err)
			}
			got, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			sameAsKept(t, row.file, got, nil)
			row.facts(f, r, frames)
		})
	}
}

// readRecorded reads a kept transcript.
func readRecorded(t *testing.T, path string) []jsonrpc.Frame {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	_, frames, err := transcript.Read(file)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return frames
}

// sameAsKept compares a result with the kept .result.json of the transcript file, structurally
// (structuralDoc), without the top-level keys of drop too.
// notProbed are the methods the kept result of a transcript says were not probed: the probe
// that recorded it did not know them.
func notProbed(t *testing.T, file string) []string {
	t.Helper()
	kept, err := os.ReadFile(filepath.Join(recordedDir, strings.TrimSuffix(file, ".ndjson")+".result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var r report.Result
	if err := json.Unmarshal(kept, &r); err != nil {
		t.Fatal(err)
	}
	var out []string
	for name, m := range r.Methods {
		if m.Support == report.Skipped {
			out = append(out, name)
		}
	}
	return out
}

func sameAsKept(t *testing.T, file string, got []byte, drop []string) {
	t.Helper()
	kept, err := os.ReadFile(filepath.Join(recordedDir, strings.TrimSuffix(file, ".ndjson")+".result.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := structuralDoc(kept)
	if err != nil {
		t.Fatalf("%s: the kept result: %v", file, err)
	}
	b, err := structuralDoc(got)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, k := range drop { // a key, or a dotted path to one
		for _, doc := range []map[string]any{a, b} {
			path := strings.Split(k, ".")
			m := doc
			for _, p := range path[:len(path)-1] {
				m, _ = m[p].(map[string]any)
			}
			delete(m, path[len(path)-1])
		}
	}
	keys := maps.Clone(a)
	maps.Copy(keys, b)
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !reflect.DeepEqual(a[k], b[k]) {
			t.Errorf("%s: %s differs from the kept result:\n got  %s\n kept %s", file, k, showJSON(b[k]), showJSON(a[k]))
		}
	}
}

// facts asserts the row's facts on the analysis r of frames.
func (row recorded) facts(f fact, r *report.Result, frames []jsonrpc.Frame) {
	f.t.Helper()
	f.eq("protocolVersion", r.ProtocolVersion, new(1))
	switch {
	case row.agentInfo == (acp.Implementation{}):
		if r.AgentInfo != nil { // CodeBuddy Code sends none
			f.errorf("agentInfo %+v, want none", *r.AgentInfo)
		}
	case r.AgentInfo == nil:
		f.errorf("agentInfo is nil")
	default:
		f.eq("agentInfo", *r.AgentInfo, row.agentInfo)
	}
	f.eq("capabilities", r.Capabilities, row.caps)
	f.eq("authMethods", authMethodsOf(f, r), row.auth)
	got := map[string]methodWant{}
	for name, m := range r.Methods {
		if m.Support == report.Skipped {
			continue // a method the recording probe did not know
		}
		w := methodWant{support: m.Support}
		if m.Code != nil {
			w.code = *m.Code
		}
		got[name] = w
	}
	f.eq("methods", got, row.methods)
	f.eq("supportsConfigOption", r.SupportsConfigOption, new(row.configOption))
	f.eq("auth.status", r.Auth.Status, row.authStatus)
	if row.err.code == "" {
		if r.Error != nil {
			f.errorf("error %s at %s (%s), want none", r.Error.Code, r.Error.Stage, r.Error.Message)
		}
	} else if r.Error == nil {
		f.errorf("error is nil, want %s at %s", row.err.code, row.err.stage)
	} else {
		f.eq("error.code", r.Error.Code, row.err.code)
		f.eq("error.stage", r.Error.Stage, row.err.stage)
		sameJSON(f, "error.agentError", r.Error.AgentError, row.err.agentError)
	}
	if r.Exit == nil {
		f.errorf("exit is nil")
	} else {
		f.eq("exit.by", r.Exit.By, row.exitBy)
	}
	if row.check != nil {
		row.check.facts(f, r, frames)
	}
	if row.turns != nil {
		row.turns.facts(f, r, frames)
	}
	if row.more != nil {
		row.more(f, r, frames)
	}
}

func authMethodsOf(f fact, r *report.Result) []authWant {
	out := []authWant{}
	for _, raw := range r.AuthMethods {
		var m struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Vars []struct {
				Name string `json:"name"`
			} `json:"vars"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			f.errorf("authMethods entry %s: %v", raw, err)
			continue
		}
		a := authWant{ID: m.ID, Type: m.Type}
		for _, v := range m.Vars {
			a.Vars = append(a.Vars, v.Name)
		}
		out = append(out, a)
	}
	return out
}

// sameJSON compares raw JSON with the expected document, whatever the formatting and key order.
func sameJSON(f fact, what string, got json.RawMessage, want string) {
	f.t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		f.errorf("%s: %v in %s", what, err, got)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		f.t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		f.errorf("%s:\n got  %s\n want %s", what, got, want)
	}
}

// shapeNames are check's prompt shapes in the order they are sent: a valid control, then the
// malformed shapes every validator must reject.
var shapeNames = []string{
	"valid-text-control", "string", "empty-object", "unknown-type", "role-content-string",
	"role-content-blocks", "message-content-string", "message-content-blocks", "type-user", "kind-text",
}

// facts asserts what check found: the findings exactly, the verdict, the active steps, the
// fork-probe and deep connections, and the prompt shapes.
func (w *checkWant) facts(f fact, r *report.Result, frames []jsonrpc.Frame) {
	f.t.Helper()
	got := []string{}
	for _, x := range r.Findings {
		got = append(got, strings.TrimSpace(string(x.Tier)+" "+x.ID+" "+x.Pointer))
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(w.findings))
	f.eq("findings", got, want)
	for id, text := range w.says {
		n := 0
		for _, x := range r.Findings {
			if x.ID == id {
				n++
				if !strings.Contains(x.Message, text) {
					f.errorf("finding %s says %q, want it to mention %q", id, x.Message, text)
				}
			}
		}
		if n != 1 {
			f.errorf("%d findings %s, want 1", n, id)
		}
	}
	if r.Verdict == nil {
		f.errorf("verdict is nil")
	} else {
		f.eq("verdict.failed", r.Verdict.Failed, w.failed)
		f.eq("verdict.counts", r.Verdict.Counts, w.counts)
	}
	f.eq("agentRequests", r.AgentRequests, map[string]int{})

	conns := record.Split(frames)
	main := record.New(conns.Main)
	checkSteps(f, conns.Main)
	var extra []record.Purpose
	for _, e := range conns.Extra {
		extra = append(extra, e.Purpose)
	}
	if w.forkCode == 0 {
		f.eq("extra connections", extra, []record.Purpose{record.PurposeDeep})
	} else {
		f.eq("extra connections", extra, []record.Purpose{record.PurposeForkProbe, record.PurposeDeep})
		checkForkProbe(f, conns.Of(record.PurposeForkProbe), main.Spawn().Cwd, w.forkCode)
	}
	checkDeep(f, conns.Of(record.PurposeDeep))

	ps := r.PromptShapes
	if ps == nil {
		f.errorf("promptShapes is nil")
		return
	}
	s := w.shapes
	f.eq("promptShapes.session", ps.Session, "nonexistent")
	f.eq("promptShapes.sessionCreated", ps.SessionCreated, s.sessionCreated)
	names := []string{}
	for _, p := range ps.Probes {
		names = append(names, p.Name)
		outcome, code := report.ShapeRejected, s.rejectCode
		if p.Name == shapeNames[0] {
			outcome, code = report.ShapeAccepted, s.controlCode
		}
		got := 0
		if p.Code != nil {
			got = *p.Code
		}
		if p.Outcome != outcome || got != code {
			f.errorf("shape %s: %s %d, want %s %d", p.Name, p.Outcome, got, outcome, code)
		}
	}
	f.eq("promptShapes probes", names, shapeNames)
	f.eq("promptShapes.errorStyle", ps.ErrorStyle, s.errorStyle)
	branches := []report.ShapeBranch{}
	for _, b := range s.branches {
		typ, fields, _ := strings.Cut(b, ":")
		sb := report.ShapeBranch{Type: typ, Required: []string{}}
		if fields != "" {
			sb.Required = strings.Split(fields, ",")
		}
		branches = append(branches, sb)
	}
	f.eq("promptShapes.inferredBranches", ps.InferredBranches, branches)
	f.eq("promptShapes.requiredFields", ps.RequiredFields, s.requiredFields)
	if ps.Prompt != nil {
		f.errorf("promptShapes.prompt = %s, want none (no --allow-prompt)", showJSON(ps.Prompt))
	}
}

// checkSteps: the three active steps of check ran on the main connection, and every request
// they sent was answered.
func checkSteps(f fact, frames []jsonrpc.Frame) {
	var steps []string
	open := map[string]int64{} // id key → seq, of the client's requests after the first step
	inSteps := false
	for _, fr := range frames {
		switch {
		case record.Step.Is(fr):
			p, _ := record.Step.Decode(fr)
			steps = append(steps, p.Name)
			inSteps = true
		case record.Teardown.Is(fr):
			inSteps = false
		case inSteps && fr.Dir == jsonrpc.DirClient && fr.Msg != nil && fr.Msg.Kind() == jsonrpc.Request:
			if k, ok := jsonrpc.IDKey(fr.Msg.ID); ok {
				open[k] = fr.Seq
			}
		case fr.Dir == jsonrpc.DirAgent && fr.Msg != nil && fr.Msg.Kind() == jsonrpc.Response:
			if k, ok := jsonrpc.IDKey(fr.Msg.ID); ok {
				delete(open, k)
			}
		}
	}
	f.eq("steps run", steps, []string{"extension-methods", "invalid-params", "prompt-shapes"})
	if len(open) > 0 {
		f.errorf("requests of the steps left unanswered (id → seq): %v", open)
	}
}

// checkForkProbe: the fork probe's connection is initialize-only, sent initialize and a fork of
// the made-up session with the main connection's cwd, got the answer code, and did not wait for
// the agent to leave on EOF.
func checkForkProbe(f fact, frames []jsonrpc.Frame, cwd string, code int) {
	if frames == nil {
		f.errorf("fork probe: no such connection")
		return
	}
	x := record.New(frames)
	f.eq("fork probe: spawn.initializeOnly", x.Spawn().InitializeOnly, true)
	var asked []string
	for _, ex := range x.Calls(jsonrpc.DirClient) {
		asked = append(asked, ex.Method())
	}
	f.eq("fork probe: client requests", asked, []string{acp.MethodInitialize, acp.MethodSessionFork})
	fork := x.First(acp.MethodSessionFork)
	if fork == nil || fork.Answer == nil {
		f.errorf("fork probe: no answered session/fork")
		return
	}
	params := acp.ParseObject(fork.Request.Msg.Params)
	f.eq("fork probe: sessionId", params.String("sessionId"), record.NonexistentSessionID)
	f.eq("fork probe: cwd", params.String("cwd"), cwd)
	got := 0
	if e := fork.Answer.Msg.Err(); e != nil {
		got = e.Code
	}
	f.eq("fork probe: the answer's error code", got, code)
	for _, fr := range x.Events(record.Teardown.Kind) {
		if p, ok := record.Teardown.Decode(fr); ok && p.Step == record.TeardownLadder {
			f.eq("fork probe: the ladder's wait for EOF (ms)", p.StdinWaitMs, new(0.0))
		}
	}
}

// checkDeep: the --deep connection asked for DeepVersion, stopped after initialize, and the
// agent answered protocolVersion 1 without an error.
func checkDeep(f fact, frames []jsonrpc.Frame) {
	if frames == nil {
		f.errorf("deep: no such connection")
		return
	}
	x := record.New(frames)
	s := x.Spawn()
	f.eq("deep: spawn.protocolVersion", s.ProtocolVersion, acpprobe.DeepVersion)
	f.eq("deep: spawn.initializeOnly", s.InitializeOnly, true)
	var asked []string
	for _, ex := range x.Calls(jsonrpc.DirClient) {
		asked = append(asked, ex.Method())
		if ex.Answer == nil || ex.Answer.Msg.Err() != nil {
			f.errorf("deep: %s was not answered with a result", ex.Method())
		}
	}
	f.eq("deep: client requests", asked, []string{acp.MethodInitialize})
	deep := derive.Connection(context.Background(), x, nil)
	f.eq("deep: protocolVersion answered", deep.ProtocolVersion, new(1))
	if deep.Error != nil {
		f.errorf("deep: error %s at %s: %s", deep.Error.Code, deep.Error.Stage, deep.Error.Message)
	}
}

// facts asserts the outcome and key facts of each turn scenario, the scenario findings exactly,
// and that every model request reached the emulator with the profile's dummy key.
func (w *turnsWant) facts(f fact, r *report.Result, frames []jsonrpc.Frame) {
	f.t.Helper()
	turns := map[record.Scenario]report.Turn{}
	outcomes := map[record.Scenario]report.TurnOutcome{}
	for _, tr := range r.Turns {
		turns[record.Scenario(tr.Scenario)] = tr
		outcomes[record.Scenario(tr.Scenario)] = tr.Outcome
	}
	f.eq("turn outcomes", outcomes, w.outcomes)
	var ids []string
	for _, x := range r.Findings {
		if strings.HasPrefix(x.ID, "turn.") || strings.HasPrefix(x.ID, "sessions.") || strings.HasPrefix(x.ID, "mcp.") {
			ids = append(ids, x.ID)
		}
	}
	slices.Sort(ids)
	f.eq("scenario findings", ids, w.findings)

	requests := 0
	for _, fr := range frames {
		if req, ok := record.ModelRequest.Decode(fr); ok && req.Endpoint == "generate" {
			requests++
			if req.Credential != "dummy" {
				f.errorf("model request %d (%s %s) carried credential %q, want the dummy key", req.Seq, req.Method, req.Path, req.Credential)
			}
		}
	}
	if requests == 0 {
		f.errorf("no model request reached the emulator")
	}

	if w.family != "" {
		tr := turns[record.ScenarioCompletion]
		if len(tr.Runs) == 0 {
			f.errorf("completion: no run")
		} else {
			run := tr.Runs[0]
			f.eq("completion stopReason", run.StopReason, "end_turn")
			f.eq("completion text in", strings.Join(run.TextIn, ","), "agent_message_chunk")
			f.eq("completion text", run.Text, record.TurnReply)
			if run.ModelRequests < 1 || !slices.ContainsFunc(run.Models, func(m string) bool { return strings.Contains(m, w.family) }) {
				f.errorf("completion: %d model request(s) for %v, want one for a %s model", run.ModelRequests, run.Models, w.family)
			}
		}
	}
	if w.reached > 0 {
		reached := 0
		for _, m := range turns[record.ScenarioModels].Models {
			if !m.Set {
				f.errorf("model truth: %s = %s was refused", m.Option, m.Value)
			}
			if m.Reached != nil && !*m.Reached {
				f.errorf("model truth: %s = %s was asked for %v", m.Option, m.Value, m.Requested)
			}
			if m.Reached != nil && *m.Reached {
				reached++
			}
		}
		if reached < w.reached {
			f.errorf("model truth: %d selection(s) reached the model, want at least %d", reached, w.reached)
		}
	}
	if w.permission != nil {
		runs := turns[record.ScenarioPermission].Permission
		if len(runs) != 1 {
			f.errorf("permission: %s, want the one run the old versions of acpprobe made", showJSON(runs))
		} else if p := runs[0]; !p.Offered || !p.Asked || p.FileWritten {
			f.errorf("permission: %s, want a write tool offered, permission asked, nothing written", showJSON(p))
		} else {
			f.eq("permission tool status", p.ToolStatus, w.permission.toolStatus)
			f.eq("permission stopReason", p.StopReason, w.permission.stopReason)
		}
	}
	if w.cancel != nil {
		c := turns[record.ScenarioCancel].Cancel
		if c == nil {
			f.errorf("cancel: no facts")
		} else {
			f.eq("cancel stopReason", c.StopReason, w.cancel.stopReason)
			f.eq("cancel: the next turn had text", c.NextText, w.cancel.nextText)
		}
	}
	if w.mcp != nil {
		got := map[string]string{}
		for _, m := range turns[record.ScenarioMCP].MCP {
			got[m.Transport] = m.StoppedAt
			if m.StoppedAt == "" && (m.Returned == nil || !*m.Returned) {
				f.errorf("mcp %s: the tool's result never came back to the model", m.Transport)
			}
		}
		f.eq("mcp: where each transport stopped", got, w.mcp)
	}
	if w.sessions != nil {
		s := turns[record.ScenarioSessions].Sessions
		if s == nil {
			f.errorf("sessions: no facts")
		} else {
			w.sessions(f, s)
		}
	}
}

// sessionsWork asserts what works in the sessions of claude-agent-acp 0.23.1 and codex-acp
// 0.16.0: the session is listed in its cwd, load replays the user message and the live tool
// call, close frees it over every cycle without growing the processes (a prompt after close is
// refused, no model request), and resume replays nothing.
func sessionsWork(f fact, s *report.SessionsTruth) {
	if s.List == nil || !s.List.Listed || s.List.Cwd != s.Cwd {
		f.errorf("sessions: list %s, want the session in %s", showJSON(s.List), s.Cwd)
	}
	if s.Load == nil || !s.Load.OK() || !s.Load.Replay.UserText || len(s.Live.ToolCalls) != 1 ||
		!slices.ContainsFunc(s.Load.Replay.ToolCalls, func(c report.ToolCallTruth) bool { return c.ID == s.Live.ToolCalls[0].ID }) {
		f.errorf("sessions: load %s against the live turn %s", showJSON(s.Load), showJSON(s.Live))
	}
	if c := s.Close; c == nil || c.Cycles != turn.SessionCycles || c.Grew || c.Prompt == nil || c.Prompt.OK() || c.ModelRequests != 0 {
		f.errorf("sessions: close %s: want %d cycles, no growth, a refused prompt", showJSON(s.Close), turn.SessionCycles)
	}
	if s.Resume == nil || !s.Resume.OK() || s.Resume.Replayed != 0 {
		f.errorf("sessions: resume %s, want it resumed without replay", showJSON(s.Resume))
	}
}

// claudeSession asserts claude-agent-acp 0.23.1's session made without login: its modes
// (bypassPermissions only where the adapter allows it: not as root with IS_SANDBOX empty), the
// mode and model options, and that the teardown closed the live session.
func claudeSession(bypass bool) func(fact, *report.Result, []jsonrpc.Frame) {
	return func(f fact, r *report.Result, frames []jsonrpc.Frame) {
		var s struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(r.Raw.NewSession, &s); err != nil || s.SessionID == "" {
			f.errorf("raw.newSession has no sessionId (%v): %s", err, r.Raw.NewSession)
			return
		}
		modes := []string{}
		for _, m := range r.Modes {
			modes = append(modes, m.ID)
		}
		want := []string{"default", "acceptEdits", "plan", "dontAsk"}
		if bypass {
			want = append(want, "bypassPermissions")
		}
		f.eq("modes", modes, want)
		f.eq("currentModeId", r.CurrentModeID, "default")
		options := []string{}
		for _, o := range r.ConfigOptions {
			options = append(options, o.ID)
		}
		f.eq("configOptions ids", options, []string{"mode", "model"})
		if r.ModelConfig == nil {
			f.errorf("modelConfig is nil, want the model config option")
		} else {
			f.eq("modelConfig.configId", r.ModelConfig.ConfigID, "model")
			f.eq("modelConfig.currentValue", r.ModelConfig.CurrentValue, "default")
			if len(r.Models) == 0 || len(r.Models) != len(r.ModelConfig.Values) {
				f.errorf("models: %d in session/new, %d values of the model option; want the same non-empty list", len(r.Models), len(r.ModelConfig.Values))
			}
		}
		f.eq("reasoning", r.Reasoning, (*report.Reasoning)(nil))
		closed := false
		for _, fr := range record.Split(frames).Main {
			if fr.Dir == jsonrpc.DirClient && fr.Msg != nil && fr.Msg.Method == acp.MethodSessionClose &&
				acp.ParseObject(fr.Msg.Params).String("sessionId") == s.SessionID {
				closed = true
			}
		}
		if !closed {
			f.errorf("the teardown did not send session/close for session %s", s.SessionID)
		}
	}
}

// codexWire asserts codex-acp 0.16.0's wire: it writes "id" as the last key of every response
// (matching must not care: no method is left unknown), and the line that answers the
// notification is also a response without an id, the answered notification's one related
// evidence.
func codexWire(f fact, r *report.Result, frames []jsonrpc.Frame) {
	responses := 0
	for _, fr := range record.Split(frames).Main {
		if fr.Dir != jsonrpc.DirAgent || fr.Msg == nil || fr.Msg.Kind() != jsonrpc.Response || fr.Msg.ID == nil {
			continue
		}
		responses++
		if k, err := lastKey(fr.Raw); err != nil || k != "id" {
			f.errorf("response frame %d: last key %q (%v), want \"id\"", fr.Seq, k, err)
		}
	}
	if responses < 3+len(acp.ProbedMethods) {
		f.errorf("%d responses with an id, want at least initialize, session/new, the control and one per probed method", responses)
	}
	var notif *report.Finding
	for i, x := range r.Findings {
		if x.ID == "protocol.notification-answered" {
			notif = &r.Findings[i]
		}
	}
	if notif == nil {
		f.errorf("no protocol.notification-answered")
		return
	}
	for _, fr := range frames {
		if fr.Seq == notif.Seq {
			sameJSON(f, "the answer to the notification", fr.Raw,
				`{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":"_acpprobe/unknown-notification"}}`)
		}
	}
	var ev struct {
		Related []struct {
			ID      string      `json:"id"`
			Tier    report.Tier `json:"tier"`
			Message string      `json:"message"`
		} `json:"related"`
	}
	if err := json.Unmarshal(notif.Evidence, &ev); err != nil || len(ev.Related) != 1 {
		f.errorf("protocol.notification-answered evidence %s (%v), want one related entry", notif.Evidence, err)
		return
	}
	rel := ev.Related[0]
	f.eq("the related evidence", [2]string{rel.ID, string(rel.Tier)}, [2]string{"envelope.invalid-message", string(report.TierMandatory)})
	if !strings.Contains(rel.Message, "without an id") {
		f.errorf("the related evidence says %q, want it to mention %q", rel.Message, "without an id")
	}
}

// lastKey returns the last top-level key of a JSON object.
func lastKey(raw []byte) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", errors.New("not a JSON object")
	}
	last := ""
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		last, _ = tok.(string)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", err
		}
	}
	return last, nil
}

// TestRecordedAgentsReplay: for every kept check transcript, `acpprobe check --json
// --prompt-shapes --deep -- acpprobe replay T` (the flags it was recorded with) gives the kept
// result structurally, with the kept exit code. It runs in a throwaway HOME and working
// directory; sideEffects and exit.containment are left out, because what the run did to the
// machine, and what held the replaying process, are the run's own (a replay creates none of
// the files the agent did). A replay plays T's main connection to
// every connection of the check: the replayed fork probe's session/fork gets the recorded
// answer to method detection's fork (-32602), not the live fork probe's -32002; neither is a
// finding, so the results agree.
func TestRecordedAgentsReplay(t *testing.T) {
	for _, row := range recordedAgents {
		if row.check == nil {
			continue
		}
		t.Run(strings.TrimSuffix(row.file, ".ndjson"), func(t *testing.T) {
			t.Parallel()
			base := strings.TrimSuffix(row.file, ".ndjson")
			raw, err := os.ReadFile(filepath.Join(recordedDir, base+".exit"))
			if err != nil {
				t.Fatal(err)
			}
			wantCode, err := strconv.Atoi(strings.TrimSpace(string(raw)))
			if err != nil {
				t.Fatalf("%s.exit: %v", base, err)
			}
			path, err := filepath.Abs(filepath.Join(recordedDir, row.file))
			if err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			cmd := exec.Command("acpprobe", "check", "--json", "--prompt-shapes", "--deep", "--", "acpprobe", "replay", path)
			cmd.Dir = t.TempDir()
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GORACE=atexit_sleep_ms=0"}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code, err := exitStatus(cmd.Run())
			if err != nil {
				t.Fatal(err)
			}
			if code != wantCode {
				t.Errorf("%s: the replayed check exited %d, the recorded one %d\n%s", row.file, code, wantCode, stderr.String())
			}
			// A method today's probe detects that the recorded one did not is answered by the
			// replay as not in the recording; the kept result says it was not probed.
			drop := []string{"sideEffects", "exit.containment"}
			for _, m := range notProbed(t, row.file) {
				drop = append(drop, "methods."+m)
			}
			sameAsKept(t, row.file, stdout.Bytes(), drop)
		})
	}
}
