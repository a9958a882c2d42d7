package probe_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// The test binary re-executes itself as the reference agent when this variable is set, so the
// engine is tested against a real child process.
const agentEnv = "ACPPROBE_TEST_AS_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		code := acptest.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// agentProcess launches this test binary as the reference agent with cfg.
func agentProcess(t *testing.T, cfg acptest.Config) transport.Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A -race binary sleeps a second at exit (atexit_sleep_ms) unless told not to, which
	// would make every agent miss the teardown grace.
	return transport.Command{Argv: append([]string{exe}, cfg.Args()...), Env: []string{agentEnv + "=1", "GORACE=atexit_sleep_ms=0"}}
}

// run probes cfg as a child process with short budgets and checks the invariants every probe
// must hold: a result, an exit record, and no process of the agent's group left alive. The
// teardown waits for the agent to leave after its stdin closes (as check does), so that how
// each fault ends is in the record.
func run(t *testing.T, cfg acptest.Config, tweak func(*probe.Options)) (*report.Result, []jsonrpc.Frame) {
	t.Helper()
	log := jsonrpc.NewLog()
	opts := probe.Options{
		Launcher:       agentProcess(t, cfg),
		Cwd:            t.TempDir(),
		Timeout:        10 * time.Second,
		StartupTimeout: 5 * time.Second,
		RequestTimeout: 2 * time.Second,
		Grace:          500 * time.Millisecond,
		Log:            log,
		WaitForExit:    true,
	}
	if tweak != nil {
		tweak(&opts)
	}
	r, err := driveAndDerive(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if r.Exit == nil || !r.Exit.Ended() {
		t.Fatalf("no exit recorded: %+v", r.Exit)
	}
	if r.Agent.PID == 0 {
		t.Fatal("no pid recorded")
	}
	if transport.GroupAlive(r.Agent.PID) {
		t.Fatalf("process group %d still has live processes after the probe", r.Agent.PID)
	}
	if r.Schema != report.ResultSchema {
		t.Errorf("schema = %q", r.Schema)
	}
	validateResult(t, r)
	if len(r.Methods) != len(acp.ProbedMethods) {
		t.Errorf("methods has %d entries, want all %d probed methods: %v", len(r.Methods), len(acp.ProbedMethods), r.Methods)
	}
	return r, log.Frames()
}

func support(r *report.Result) map[string]report.Support {
	m := map[string]report.Support{}
	for k, v := range r.Methods {
		m[k] = v.Support
	}
	return m
}

func authIDs(r *report.Result) []string {
	var ids []string
	for _, m := range r.AuthMethods {
		var o struct{ ID string }
		_ = json.Unmarshal(m, &o)
		ids = append(ids, o.ID)
	}
	return ids
}

func TestClaudePersona(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "claude"}, nil)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if r.ProtocolVersion == nil || *r.ProtocolVersion != 1 {
		t.Errorf("protocolVersion = %v", r.ProtocolVersion)
	}
	if r.AgentInfo == nil || r.AgentInfo.Name != "acptest-claude" {
		t.Errorf("agentInfo = %+v", r.AgentInfo)
	}
	c := r.Capabilities
	if !c.LoadSession || !c.PromptCapabilities.Image || c.PromptCapabilities.Audio || !c.PromptCapabilities.EmbeddedContext {
		t.Errorf("prompt/load capabilities = %+v", c)
	}
	if !c.McpCapabilities.HTTP || !c.McpCapabilities.SSE || c.McpCapabilities.ACP {
		t.Errorf("mcp = %+v", c.McpCapabilities)
	}
	want := report.SessionCapabilities{Close: true, List: true, Resume: true, Fork: true}
	if c.SessionCapabilities != want {
		t.Errorf("sessionCapabilities = %+v, want %+v", c.SessionCapabilities, want)
	}
	if !slices.Equal(c.MetaKeys, []string{"claudeCode"}) {
		t.Errorf("metaKeys = %v", c.MetaKeys)
	}
	if r.Auth.Status != report.AuthAuthenticated {
		t.Errorf("auth = %+v", r.Auth)
	}
	var modes []string
	for _, m := range r.Modes {
		modes = append(modes, m.ID)
	}
	if !slices.Equal(modes, []string{"default", "acceptEdits", "plan", "bypassPermissions"}) || r.CurrentModeID != "default" {
		t.Errorf("modes = %v current %q", modes, r.CurrentModeID)
	}
	if len(r.ConfigOptions) != 2 || r.ConfigOptions[0].ID != "mode" || r.ConfigOptions[1].Category != "model" {
		t.Errorf("configOptions = %+v", r.ConfigOptions)
	}
	if r.ModelConfig == nil || r.ModelConfig.ConfigID != "model" || !slices.Equal(r.ModelConfig.Values, []string{"default", "opus", "haiku"}) || r.ModelConfig.CurrentValue != "default" {
		t.Errorf("modelConfig = %+v", r.ModelConfig)
	}
	if len(r.Models) != 3 || r.Models[2].ID != "haiku" {
		t.Errorf("models = %+v, want the declared availableModels", r.Models)
	}
	if r.Reasoning != nil {
		t.Errorf("reasoning = %+v, want nil (no thought_level option)", r.Reasoning)
	}
	wantSupport := map[string]report.Support{
		"session/set_config_option": report.Supported, "session/set_mode": report.Supported, "session/set_model": report.Supported,
		"session/load": report.Supported, "session/resume": report.Supported, "session/fork": report.Supported,
		"session/list": report.Supported, "session/close": report.Supported, "session/delete": report.Unsupported,
		"session/status": report.Unsupported, "session/archive": report.Unsupported, "session/unarchive": report.Unsupported,
		"session/set_title": report.Unsupported, "session/stop": report.Unsupported,
	}
	if got := support(r); !maps.Equal(got, wantSupport) {
		t.Errorf("methods = %v\nwant      %v", got, wantSupport)
	}
	// Detected with invalid params: the validator answers, the handler never runs.
	for _, m := range []string{"session/load", "session/list"} {
		if s := r.Methods[m]; s.Code == nil || *s.Code != jsonrpc.CodeInvalidParams || s.DetectedBy != report.DetectedByInvalidParams {
			t.Errorf("%s = %+v, want -32602 to invalid params", m, s)
		}
	}
	if r.SupportsConfigOption == nil || !*r.SupportsConfigOption {
		t.Errorf("supportsConfigOption = %v, want true", r.SupportsConfigOption)
	}
	if r.Notifications.ByMethod["session/update"] != 1 || r.Notifications.BySessionUpdate["available_commands_update"] != 1 {
		t.Errorf("notifications = %+v", r.Notifications)
	}
	if r.Exit.By != "stdin" || r.Exit.Code == nil || *r.Exit.Code != 0 || r.Exit.AfterStdinCloseMs == nil {
		t.Errorf("exit = %+v, want status 0 after stdin closed", r.Exit)
	}
	var raw struct{ AgentCapabilities map[string]any }
	if err := json.Unmarshal(r.Raw.Initialize, &raw); err != nil || raw.AgentCapabilities["_meta"] == nil {
		t.Errorf("raw.initialize not verbatim: %s", r.Raw.Initialize)
	}
	var ns struct{ SessionID string }
	if err := json.Unmarshal(r.Raw.NewSession, &ns); err != nil || ns.SessionID != "claude-session-1" {
		t.Errorf("raw.newSession = %s", r.Raw.NewSession)
	}
}

func TestCodexPersonaAuthRequiredKeepsCapabilities(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "codex"}, nil)
	if r.Error == nil || r.Error.Code != report.ErrAuthRequired || r.Error.Stage != record.StageSessionNew {
		t.Fatalf("error = %+v, want auth_required at session/new", r.Error)
	}
	if string(r.Error.AgentError) != `{"code":-32000,"message":"Authentication required"}` {
		t.Errorf("agentError not verbatim: %s", r.Error.AgentError)
	}
	if r.Auth.Status != report.AuthRequired || len(r.Auth.Evidence) == 0 {
		t.Errorf("auth = %+v", r.Auth)
	}
	if ids := authIDs(r); !slices.Equal(ids, []string{"chatgpt", "codex-api-key", "openai-api-key"}) {
		t.Errorf("auth method ids = %v", ids)
	}
	var m struct {
		Type string
		Vars []struct{ Name string }
	}
	if err := json.Unmarshal(r.AuthMethods[1], &m); err != nil || m.Type != "env_var" || len(m.Vars) != 1 || m.Vars[0].Name != "CODEX_API_KEY" {
		t.Errorf("env_var auth method not verbatim: %s", r.AuthMethods[1])
	}
	if !r.Capabilities.LoadSession || !r.Capabilities.Auth.Logout || !r.Capabilities.SessionCapabilities.List {
		t.Errorf("capabilities lost after the failure: %+v", r.Capabilities)
	}
	wantSupport := map[string]report.Support{
		"session/set_config_option": report.Supported, "session/set_mode": report.Supported, "session/set_model": report.Unsupported,
		"session/load": report.Supported, "session/resume": report.Supported, "session/fork": report.Unsupported,
		"session/list": report.Supported, "session/close": report.Supported, "session/delete": report.Unsupported,
		"session/status": report.Unsupported, "session/archive": report.Unsupported, "session/unarchive": report.Unsupported,
		"session/set_title": report.Unsupported, "session/stop": report.Unsupported,
	}
	if got := support(r); !maps.Equal(got, wantSupport) {
		t.Errorf("methods = %v\nwant      %v", got, wantSupport)
	}
	// Invalid params are refused before the login is asked for, as codex-acp does.
	if c := r.Methods["session/list"].Code; c == nil || *c != jsonrpc.CodeInvalidParams {
		t.Errorf("session/list code = %v, want -32602", c)
	}
	// codex writes "id" as the last key; matching must not care.
	found := false
	for _, f := range frames {
		if f.Dir == jsonrpc.DirAgent && strings.HasSuffix(string(f.Raw), `"id":1}`) {
			found = true
		}
	}
	if !found {
		t.Error("the codex persona did not put id last; the test does not exercise id matching")
	}
}

func TestGeminiPersonaNoConfigOptions(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "gemini"}, nil)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if !r.Capabilities.PromptCapabilities.Audio {
		t.Error("audio = false")
	}
	if ids := authIDs(r); !slices.Equal(ids, []string{"oauth-personal", "gemini-api-key", "vertex-ai", "gateway"}) {
		t.Errorf("auth ids = %v", ids)
	}
	if r.SupportsConfigOption == nil || *r.SupportsConfigOption || r.Methods["session/set_config_option"].Support != report.Unsupported {
		t.Errorf("set_config_option = %+v, supportsConfigOption %v", r.Methods["session/set_config_option"], r.SupportsConfigOption)
	}
	if c := r.Methods["session/set_mode"].Code; c == nil || *c != jsonrpc.CodeInvalidParams {
		t.Errorf("set_mode code = %v, want -32602 (still supported)", c)
	}
	if len(r.ConfigOptions) != 0 || r.ModelConfig != nil || len(r.Models) != 0 || len(r.Modes) != 3 {
		t.Errorf("configOptions %v modelConfig %v models %v modes %v", r.ConfigOptions, r.ModelConfig, r.Models, r.Modes)
	}
	if r.Auth.Status != report.AuthAuthenticated || !strings.Contains(r.Auth.Evidence[0], "4 authMethods") {
		t.Errorf("auth = %+v", r.Auth)
	}
}

func TestMinimalPersona(t *testing.T) {
	r, _ := run(t, acptest.Config{Persona: "minimal"}, nil)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	if r.AgentInfo != nil {
		t.Errorf("agentInfo = %+v, want nil", r.AgentInfo)
	}
	if !zeroCaps(r.Capabilities) {
		t.Errorf("capabilities = %+v, want all false", r.Capabilities)
	}
	for m, s := range r.Methods {
		if s.Support != report.Unsupported {
			t.Errorf("%s = %+v, want unsupported", m, s)
		}
	}
	if len(r.AuthMethods) != 0 || len(r.Modes) != 0 || len(r.ConfigOptions) != 0 {
		t.Errorf("unexpected optional data: %+v", r)
	}
}

func zeroCaps(c report.Capabilities) bool {
	return len(c.MetaKeys) == 0 && !c.LoadSession && c.PromptCapabilities == (report.PromptCapabilities{}) &&
		c.McpCapabilities == (report.McpCapabilities{}) && c.SessionCapabilities == (report.SessionCapabilities{}) &&
		c.Auth == (report.AuthCapabilities{}) && c.Experimental == (report.Experimental{})
}

func TestFaults(t *testing.T) {
	cases := []struct {
		name      string
		cfg       acptest.Config
		tweak     func(*probe.Options)
		code      report.ErrorCode // expected error code ("" = success)
		stage     record.Stage
		exitBy    record.ExitCause // how the agent ended ("" = don't care)
		exitCode  int              // when exitBy is self: the status
		stderrHas string
	}{
		{name: "hang on initialize", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: "initialize"}},
			tweak: func(o *probe.Options) { o.StartupTimeout = 300 * time.Millisecond },
			code:  report.ErrInitializeTimeout, stage: record.StageInitialize, exitBy: "sigterm", stderrHas: "hanging on initialize"},
		{name: "hang on session/new", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: "session/new"}},
			tweak: func(o *probe.Options) { o.Timeout = 700 * time.Millisecond },
			code:  report.ErrSessionNewTimeout, stage: record.StageSessionNew, exitBy: "sigterm"},
		{name: "exit before initialize", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{ExitBefore: "initialize"}},
			code: report.ErrAgentCrashed, stage: record.StageInitialize, exitBy: "self", exitCode: acptest.ExitBeforeStatus, stderrHas: "exiting before answering initialize"},
		{name: "exit before session/new", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{ExitBefore: "session/new"}},
			code: report.ErrAgentCrashed, stage: record.StageSessionNew, exitBy: "self", exitCode: acptest.ExitBeforeStatus},
		{name: "exit before a method probe", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{ExitBefore: "session/set_mode"}},
			code: report.ErrAgentCrashed, stage: record.StageMethods, exitBy: "self", exitCode: acptest.ExitBeforeStatus},
		{name: "garbage on stdout", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{GarbageStdout: true}},
			exitBy: "stdin"},
		{name: "slow start within budget", cfg: acptest.Config{Persona: "minimal", Faults: acptest.Faults{SlowStart: 100 * time.Millisecond}},
			exitBy: "stdin"},
		{name: "slow start over the startup budget", cfg: acptest.Config{Persona: "minimal", Faults: acptest.Faults{SlowStart: 5 * time.Second}},
			tweak: func(o *probe.Options) { o.StartupTimeout = 200 * time.Millisecond },
			code:  report.ErrInitializeTimeout, stage: record.StageInitialize, exitBy: "sigterm"},
		{name: "protocol version the probe cannot speak", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{AnswerVersion: 7}},
			code: report.ErrProtocolMismatch, stage: record.StageInitialize, exitBy: "stdin"},
		{name: "hang on a method probe leaves it unknown", cfg: acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: "session/list"}},
			tweak:  func(o *probe.Options) { o.RequestTimeout = 300 * time.Millisecond },
			exitBy: "sigterm"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, frames := run(t, tc.cfg, tc.tweak)
			if tc.code == "" {
				if r.Error != nil {
					t.Fatalf("error = %+v, want none", r.Error)
				}
			} else {
				if r.Error == nil || r.Error.Code != tc.code || r.Error.Stage != tc.stage {
					t.Fatalf("error = %+v, want %s at %s", r.Error, tc.code, tc.stage)
				}
				if r.Error.Stderr != r.StderrTail {
					t.Errorf("error does not carry the stderr tail")
				}
			}
			if tc.exitBy != "" && r.Exit.By != tc.exitBy {
				t.Errorf("exit = %+v, want by %s", r.Exit, tc.exitBy)
			}
			if tc.exitBy == "self" && (r.Exit.Code == nil || *r.Exit.Code != tc.exitCode) {
				t.Errorf("exit = %+v, want status %d", r.Exit, tc.exitCode)
			}
			if tc.stderrHas != "" && !strings.Contains(r.StderrTail, tc.stderrHas) {
				t.Errorf("stderr tail %q does not contain %q", r.StderrTail, tc.stderrHas)
			}
			switch tc.name {
			case "garbage on stdout":
				if !hasUndecodable(frames, acptest.GarbageLine) {
					t.Error("the garbage line is not in the log as an undecodable agent frame")
				}
				if r.ProtocolVersion == nil || len(r.Modes) != 4 {
					t.Errorf("the handshake after the garbage was not read: %+v", r)
				}
			case "exit before session/new", "exit before a method probe":
				if !r.Capabilities.LoadSession || r.AgentInfo == nil {
					t.Errorf("what initialize said is lost: %+v", r.Capabilities)
				}
			case "protocol version the probe cannot speak":
				if r.ProtocolVersion == nil || *r.ProtocolVersion != 7 || !strings.Contains(r.Error.Message, "protocolVersion 7") {
					t.Errorf("protocolVersion = %v, message %q", r.ProtocolVersion, r.Error.Message)
				}
				if m := r.Methods["session/list"]; m.Support != report.Skipped {
					t.Errorf("methods probed after a mismatch: %+v", m)
				}
			case "hang on a method probe leaves it unknown":
				if m := r.Methods["session/list"]; m.Support != report.Unknown || m.Code != nil {
					t.Errorf("session/list = %+v, want unknown", m)
				}
			}
		})
	}
}

func hasUndecodable(frames []jsonrpc.Frame, raw string) bool {
	for _, f := range frames {
		if f.Dir == jsonrpc.DirAgent && f.Msg == nil && f.DecodeErr != nil && string(f.Raw) == raw {
			return true
		}
	}
	return false
}

// TestAgentRequestsAreRefused checks that nothing the agent asks for is granted: file and
// terminal requests get -32601, permission requests the outcome "cancelled", an elicitation
// -32601 from the minimal client.
func TestAgentRequestsAreRefused(t *testing.T) {
	agentRequestsAreRefused(t, nil, `"code":-32601`)
}

// TestRichClientStillRefuses attacks the promise that a client profile only changes what
// acpprobe claims: a client declaring files, terminals and elicitation (the full profile's
// capabilities, with a host's clientInfo) still serves no file and no terminal, and declines
// the elicitation (before the profiles, an elicitation got -32601 from a client declaring it,
// and clientInfo could not be chosen).
func TestRichClientStillRefuses(t *testing.T) {
	caps := json.RawMessage(`{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true,"elicitation":{"form":{},"url":{}}}`)
	frames := agentRequestsAreRefused(t, func(o *probe.Options) {
		o.ClientCapabilities = caps
		o.ClientInfo = &acp.Implementation{Name: "zed", Title: "Zed", Version: "1.2.3"}
	}, `"result":{"action":"decline"}`)
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == "initialize" {
			if !strings.Contains(string(f.Raw), `"clientInfo":{"name":"zed","title":"Zed","version":"1.2.3"}`) ||
				!strings.Contains(string(f.Raw), `"clientCapabilities":`+string(caps)) {
				t.Errorf("initialize sent %s", f.Raw)
			}
			return
		}
	}
	t.Error("no initialize recorded")
}

func agentRequestsAreRefused(t *testing.T, tweak func(*probe.Options), elicitation string) []jsonrpc.Frame {
	t.Helper()
	methods := []string{"fs/read_text_file", "fs/write_text_file", "terminal/create", "session/request_permission", "elicitation/create"}
	r, frames := run(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{ClientRequests: methods}}, tweak)
	if r.Error != nil {
		t.Fatalf("error: %+v", r.Error)
	}
	for _, m := range methods {
		if r.AgentRequests[m] != 1 {
			t.Errorf("agentRequests[%s] = %d", m, r.AgentRequests[m])
		}
	}
	asked := map[string]string{} // id key → method
	answered := map[string]string{}
	for _, f := range frames {
		if f.Msg == nil {
			continue
		}
		key, _ := jsonrpc.IDKey(f.Msg.ID)
		switch {
		case f.Dir == jsonrpc.DirAgent && f.Msg.Kind() == jsonrpc.Request:
			asked[key] = f.Msg.Method
		case f.Dir == jsonrpc.DirClient && f.Msg.Kind() == jsonrpc.Response && asked[key] != "":
			answered[asked[key]] = string(f.Raw)
		}
	}
	for _, m := range methods {
		got := answered[m]
		switch m {
		case "session/request_permission":
			if !strings.Contains(got, `"result":{"outcome":{"outcome":"cancelled"}}`) {
				t.Errorf("%s answered %s, want outcome cancelled", m, got)
			}
		case "elicitation/create":
			if !strings.Contains(got, elicitation) {
				t.Errorf("%s answered %s, want %s", m, got, elicitation)
			}
		default:
			if !strings.Contains(got, `"code":-32601`) || strings.Contains(got, `"result"`) {
				t.Errorf("%s answered %q, want a -32601 error", m, got)
			}
		}
	}
	return frames
}

func TestInterruptTearsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	log := jsonrpc.NewLog()
	// Cancel as soon as the probe has sent session/new to an agent that hangs on it.
	log.Observe(func(f jsonrpc.Frame) {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == "session/new" {
			cancel()
		}
	})
	r, err := driveAndDerive(ctx, probe.Options{
		Launcher: agentProcess(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{HangOn: "session/new"}}),
		Cwd:      t.TempDir(), Grace: 300 * time.Millisecond, Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != report.ErrInterrupted {
		t.Fatalf("error = %+v, want interrupted", r.Error)
	}
	if transport.GroupAlive(r.Agent.PID) {
		t.Fatal("agent left running after an interrupt")
	}
	if r.Exit == nil || r.Exit.By != "sigterm" {
		t.Errorf("exit = %+v", r.Exit)
	}
}

// Ctrl-C while the ladder waits on an agent that ignores both the end of its input and
// SIGTERM cuts the graces short: the run ends at once, killed, and says it was interrupted.
func TestInterruptDuringTeardown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	log := jsonrpc.NewLog()
	log.Observe(func(f jsonrpc.Frame) {
		if p, ok := record.Teardown.Decode(f); ok && p.Step == record.TeardownLadder {
			cancel()
		}
	})
	const grace = 10 * time.Second
	start := time.Now()
	r, err := driveAndDerive(ctx, probe.Options{
		Launcher: agentProcess(t, acptest.Config{Persona: "minimal", Faults: acptest.Faults{IgnoreStdinEOF: true},
			Stress: acptest.Stress{IgnoreSIGTERM: true}}),
		Cwd: t.TempDir(), Grace: grace, Log: log, SkipMethods: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > grace/2 {
		t.Errorf("the interrupted teardown took %s, the graces were not cut", elapsed)
	}
	if r.Error == nil || r.Error.Code != report.ErrInterrupted || r.Error.Stage != record.StageTeardown {
		t.Errorf("error = %+v, want interrupted at teardown", r.Error)
	}
	if r.Exit == nil || r.Exit.By != "sigkill" || transport.GroupAlive(r.Agent.PID) {
		t.Errorf("exit = %+v, want killed and gone", r.Exit)
	}
}

func TestAuthPolicyFail(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "gemini"}, func(o *probe.Options) { o.AuthPolicy = probe.AuthPolicyFail })
	if r.Error == nil || r.Error.Code != report.ErrAuthRequired || r.Auth.Status != report.AuthRequired {
		t.Fatalf("error = %+v auth %+v", r.Error, r.Auth)
	}
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == "session/new" {
			t.Fatal("session/new was sent under auth policy fail")
		}
	}
}

func TestSpawnFailed(t *testing.T) {
	r, err := driveAndDerive(context.Background(), probe.Options{Launcher: transport.Command{Argv: []string{"/nonexistent/acpprobe-agent"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != report.ErrSpawnFailed || r.Error.Stage != record.StageSpawn {
		t.Fatalf("error = %+v", r.Error)
	}
	if !strings.Contains(r.Error.Message, "/nonexistent/acpprobe-agent") {
		t.Errorf("message does not name the command: %q", r.Error.Message)
	}
}

// A probe whose caller ended before the agent could start (Ctrl-C as it launched) is
// interrupted at the spawn stage, not a spawn failure of the agent's (before, spawn_failed
// with the context's error as the agent's fault).
func TestSpawnInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := driveAndDerive(ctx, probe.Options{Launcher: transport.Command{Argv: []string{"cat"}}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != report.ErrInterrupted || r.Error.Stage != record.StageSpawn {
		t.Fatalf("error = %+v, want interrupted at the spawn stage", r.Error)
	}
}

func TestNoMethods(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "claude"}, func(o *probe.Options) { o.SkipMethods = true })
	for m, s := range r.Methods {
		if s.Support != report.Skipped {
			t.Errorf("%s = %+v", m, s)
		}
	}
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == "session/set_mode" {
			t.Fatal("method probes sent with SkipMethods")
		}
	}
}

// TestProbeSendsNothingHarmful checks the zero-side-effect contract over the probe's own
// wire: no authenticate, logout or prompt; method probes carry params no handler accepts (or,
// as a fallback, name the nonexistent session), never the real one; session/close only for
// the session the probe created.
func TestProbeSendsNothingHarmful(t *testing.T) {
	_, frames := run(t, acptest.Config{Persona: "claude"}, nil)
	var sent []string
	for _, f := range frames {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Kind() != jsonrpc.Request {
			continue
		}
		sent = append(sent, f.Msg.Method)
		switch f.Msg.Method {
		case "authenticate", "logout", "session/prompt":
			t.Errorf("probe sent %s", f.Msg.Method)
		case "initialize", "session/new":
		case "session/close":
			if !strings.Contains(string(f.Msg.Params), "claude-session-1") && string(f.Msg.Params) != "{}" {
				t.Errorf("session/close of a session the probe did not create: %s", f.Msg.Params)
			}
		default:
			invalid, _ := json.Marshal(derive.DetectionParams(f.Msg.Method))
			if string(f.Msg.Params) != string(invalid) && !strings.Contains(string(f.Msg.Params), record.NonexistentSessionID) {
				t.Errorf("%s sent with %s: neither invalid params nor the nonexistent session", f.Msg.Method, f.Msg.Params)
			}
		}
		if strings.Contains(string(f.Raw), `"_meta"`) {
			t.Errorf("probe sent _meta: %s", f.Raw)
		}
	}
	if sent[0] != "initialize" || sent[1] != "session/new" || sent[len(sent)-1] != "session/close" {
		t.Errorf("request order = %v", sent)
	}
}

func TestInvalidOptions(t *testing.T) {
	if _, err := probe.Drive(context.Background(), probe.Options{}); err == nil {
		t.Error("no launcher accepted")
	}
	if _, err := probe.Drive(context.Background(), probe.Options{Launcher: transport.Command{Argv: []string{"true"}}, Cwd: "relative/dir"}); err == nil {
		t.Error("relative cwd accepted")
	}
	if _, err := probe.Drive(context.Background(), probe.Options{Launcher: transport.Command{Argv: []string{"true"}}, AuthPolicy: "maybe"}); err == nil {
		t.Error("unknown auth policy accepted")
	}
}

// TestInitializeOnly is the --deep connection: initialize, nothing else, and no error.
func TestInitializeOnly(t *testing.T) {
	r, frames := run(t, acptest.Config{Persona: "minimal"}, func(o *probe.Options) { o.InitializeOnly = true; o.ProtocolVersion = 999 })
	if r.Error != nil {
		t.Fatalf("error = %+v", r.Error)
	}
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method != "initialize" {
			t.Errorf("sent %s on an initialize-only connection", f.Msg.Method)
		}
	}
	if r.ProtocolVersion == nil || *r.ProtocolVersion != 1 {
		t.Errorf("protocolVersion = %v", r.ProtocolVersion)
	}
}

// driveAndDerive drives a probe and derives its result (the probe package's half of acpprobe.Run).
func driveAndDerive(ctx context.Context, opts probe.Options) (*report.Result, error) {
	log, err := probe.Drive(ctx, opts)
	if err != nil {
		return nil, err
	}
	return derive.Connection(context.Background(), record.New(log.Frames()), nil), nil
}

// Without WaitForExit the teardown does not wait on an agent that ignores the end of its
// input: it signals the group as soon as stdin is closed (after session/close), as real
// clients do, and the record says it did not wait, so nothing is judged of it (issue 12).
func TestTeardownDoesNotWaitForEOF(t *testing.T) {
	const grace = 3 * time.Second
	start := time.Now()
	r, frames := run(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{IgnoreStdinEOF: true}}, func(o *probe.Options) {
		o.WaitForExit = false
		o.Grace = grace
	})
	if elapsed := time.Since(start); elapsed > grace {
		t.Errorf("the probe took %s: it waited on an agent that ignores EOF", elapsed)
	}
	if r.Exit.By != "sigterm" {
		t.Errorf("exit = %+v, want signalled at once", r.Exit)
	}
	var waited *float64
	for _, f := range frames {
		if p, ok := record.Teardown.Decode(f); ok && p.Step == record.TeardownLadder {
			waited = p.StdinWaitMs
		}
	}
	if waited == nil || *waited != 0 {
		t.Errorf("the ladder event says it waited %v, want 0", waited)
	}
	// The same agent under a waiting teardown needs the grace and the signal.
	start = time.Now()
	r, _ = run(t, acptest.Config{Persona: "claude", Faults: acptest.Faults{IgnoreStdinEOF: true}}, func(o *probe.Options) { o.Grace = 300 * time.Millisecond })
	if elapsed := time.Since(start); elapsed < 300*time.Millisecond || r.Exit.By != "sigterm" {
		t.Errorf("waiting teardown: %s, exit %+v", elapsed, r.Exit)
	}
}
