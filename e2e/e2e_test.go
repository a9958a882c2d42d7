// Package e2e is acpprobe's opt-in end-to-end suite: it probes real ACP agents, installed from
// npm at pinned versions by scripts/install-e2e-agents.sh (claude-agent-acp, codex-acp,
// gemini-cli, qwen-code, opencode and CodeBuddy Code), and asserts what the probe truthfully
// reports about them on a machine with no model access.
//
// The suite is skipped unless ACPPROBE_E2E=1; see README.md.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// enableVar turns the suite on.
const enableVar = "ACPPROBE_E2E"

// howToRun is the command line that installs the agents and runs the suite.
const howToRun = "scripts/install-e2e-agents.sh && ACPPROBE_E2E=1 go test ./e2e/ -v"

// Budgets: the first start of a node agent can take seconds, and the suite runs the agents in
// parallel (under -race, too).
const (
	probeTimeout   = 60 * time.Second
	startupTimeout = 45 * time.Second
	requestTimeout = 20 * time.Second
)

// clearedVars could give an agent model access (or point it at a real account's credentials):
// each agent gets them as empty strings.
var clearedVars = []string{
	"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY",
	"GOOGLE_APPLICATION_CREDENTIALS",
	"ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX",
	"GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_PROJECT",
	"CODEBUDDY_API_KEY", "CODEBUDDY_AUTH_TOKEN",
	// Routes to a model (the emulator's profiles set them in a turn): a probe must not inherit
	// one. Each agent reads an empty value as unset (read in their sources: codex-acp's
	// `configString ? JSON.parse(…)`, opencode's `if (process.env.OPENCODE_CONFIG_CONTENT)`).
	"ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "OPENAI_MODEL", "GOOGLE_GEMINI_BASE_URL", "CODEBUDDY_BASE_URL",
	"DEFAULT_AUTH_REQUEST", "CODEX_CONFIG", "OPENCODE_CONFIG", "OPENCODE_CONFIG_CONTENT",
	// Not model access, but they change what claude-agent-acp and Claude Code do when run as
	// root (see claude_test.go): the caller's values must not leak in.
	"IS_SANDBOX", "CLAUDE_CODE_BUBBLEWRAP",
}

// repoRoot is the module root (the parent of this file's directory).
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the e2e directory")
	}
	return filepath.Dir(filepath.Dir(file))
}

// requireE2E skips the test unless the suite was asked for.
func requireE2E(t *testing.T) {
	t.Helper()
	if os.Getenv(enableVar) != "1" {
		t.Skipf("opt-in suite against real npm agents; run it with: %s", howToRun)
	}
}

// agentArgv returns the command line of the installed agent of config name name (claude,
// codex, gemini, qwen, opencode, codebuddy), as scripts/install-e2e-agents.sh wrote it into
// e2e/.agents/agents.json (an acpprobe agents config; scripts/e2e-latest.sh reads it too). A
// missing install fails the test (the suite was asked for, so it is an error, not a reason to
// skip).
func agentArgv(t *testing.T, name string) []string {
	t.Helper()
	path := filepath.Join(repoRoot(t), "e2e", ".agents", "agents.json")
	var cfg struct {
		Agents map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"agents"`
	}
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		t.Fatalf("%s=1 but the agents are not installed (%v); run scripts/install-e2e-agents.sh first", enableVar, err)
	}
	a, ok := cfg.Agents[name]
	if !ok {
		t.Fatalf("%s names no agent %q; run scripts/install-e2e-agents.sh again", path, name)
	}
	argv := append([]string{a.Command}, a.Args...)
	// The program: the command, or the script node runs (CodeBuddy Code's CLI).
	prog := a.Command
	if filepath.Base(a.Command) == "node" && len(a.Args) > 0 {
		prog = a.Args[0]
	}
	if st, err := os.Stat(prog); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Fatalf("%s (agent %s) is not an executable file (%v); run scripts/install-e2e-agents.sh again", prog, name, err)
	}
	return argv
}

// agentBin returns the absolute path of an installed agent binary in e2e/.agents/node_modules/.bin;
// a missing one fails the test (see agentArgv).
func agentBin(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(repoRoot(t), "e2e", ".agents", "node_modules", ".bin", name)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("%s=1 but agent %s is not installed (%v); run scripts/install-e2e-agents.sh first", enableVar, name, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable file; run scripts/install-e2e-agents.sh again", path)
	}
	return path
}

// sandbox is the isolated world an agent runs in.
type sandbox struct {
	home string // HOME and every config directory the agents know of
	cwd  string // the agent's working directory and session/new cwd
	env  []string
}

// newSandbox makes a fresh HOME and cwd; extraEnv (KEY=VALUE) is applied last.
func newSandbox(t *testing.T, extraEnv ...string) sandbox {
	t.Helper()
	s := sandbox{home: t.TempDir(), cwd: t.TempDir()}
	s.env = []string{
		"HOME=" + s.home,
		"XDG_CONFIG_HOME=" + filepath.Join(s.home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(s.home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(s.home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(s.home, ".cache"),
		// Agent-specific homes that would otherwise escape HOME when set in the caller's
		// environment. codex requires CODEX_HOME to exist.
		"CODEX_HOME=" + filepath.Join(s.home, ".codex"),
		"CLAUDE_CONFIG_DIR=" + filepath.Join(s.home, ".claude"),
		"GEMINI_CLI_HOME=" + s.home,
	}
	if err := os.MkdirAll(filepath.Join(s.home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, k := range clearedVars {
		s.env = append(s.env, k+"=")
	}
	s.env = transport.MergeEnv(s.env, extraEnv)
	return s
}

// probed is one probe of a real agent.
type probed struct {
	res *report.Result
	log *jsonrpc.Log
	box sandbox
}

// probeAgent probes argv through the library in a fresh sandbox (with extraEnv, KEY=VALUE, on
// top) and checks what must hold for every agent: a result with an exit, a clean stdout,
// nothing left running, nothing written to the working directory.
func probeAgent(t *testing.T, extraEnv []string, argv ...string) probed {
	t.Helper()
	return probeIn(t, newSandbox(t, extraEnv...), argv, nil)
}

// probeIn probes argv through the library (acpprobe.Run: the report the CLI prints) in box,
// with the suite's budgets and a fresh log, each of mods applied to the options; check, when
// not nil, adds the active checks and a verdict (fail on MANDATORY, no baseline). It checks
// what must hold for every agent (see probeAgent).
func probeIn(t *testing.T, box sandbox, argv []string, check *acpprobe.Check, mods ...func(*probe.Options)) probed {
	t.Helper()
	log := jsonrpc.NewLog()
	opts := probe.Options{
		Launcher:       transport.Command{Argv: argv, Dir: box.cwd, Env: box.env},
		Cwd:            box.cwd,
		Timeout:        probeTimeout,
		StartupTimeout: startupTimeout,
		RequestTimeout: requestTimeout,
		Log:            log,
	}
	for _, mod := range mods {
		mod(&opts)
	}
	ro := acpprobe.Options{Probe: opts, Check: check}
	if check != nil {
		ro.Analyze.Verdict = &acpprobe.Verdict{FailOn: report.TierMandatory}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*probeTimeout)
	defer cancel()
	res, err := acpprobe.Run(ctx, ro)
	if err != nil {
		t.Fatalf("acpprobe.Run: %v", err)
	}
	t.Logf("%s: %.0f ms (initialize %.0f ms, session/new %.0f ms, methods %.0f ms, teardown %.0f ms); error %v",
		filepath.Base(argv[0]), res.Timings.TotalMs, res.Timings.SpawnToInitializeMs, res.Timings.SessionNewMs,
		res.Timings.MethodsMs, res.Timings.TeardownMs, res.Error)
	p := probed{res: res, log: log, box: box}
	p.checkCommon(t)
	return p
}

func (p probed) checkCommon(t *testing.T) {
	t.Helper()
	r := p.res
	check(t, "schema", r.Schema, report.ResultSchema)
	check(t, "agent.cwd", r.Agent.Cwd, p.box.cwd)
	if r.Agent.PID <= 0 {
		t.Errorf("agent.pid = %d, want the child's pid", r.Agent.PID)
	}
	if r.Exit == nil {
		t.Errorf("exit is nil: the teardown recorded no end of the agent")
	} else if !r.Exit.Ended() {
		t.Errorf("exit %+v does not say how the agent ended", *r.Exit)
	}
	if r.Agent.PID > 0 && transport.GroupAlive(r.Agent.PID) {
		t.Errorf("process group %d is still alive after the probe", r.Agent.PID)
	}
	if left := survivors(p.box.home); len(left) > 0 {
		t.Errorf("processes of this agent's sandbox survived the probe (escaped the group?):\n%s", strings.Join(left, "\n"))
	}
	// Every line the agent wrote on stdout is a whole JSON-RPC message.
	for _, f := range p.log.Frames() {
		if f.Dir != jsonrpc.DirAgent {
			continue
		}
		if f.Oversize || f.DecodeErr != nil || f.Msg == nil {
			t.Errorf("agent frame %d is not a JSON-RPC message (%v): %.200s", f.Seq, f.DecodeErr, f.Raw)
		}
	}
	// The probe never prompts and grants no capability: the agents ask nothing of it and
	// write nothing where they run.
	check(t, "agentRequests", r.AgentRequests, map[string]int{})
	entries, err := os.ReadDir(p.box.cwd)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("the agent wrote %s into its working directory", e.Name())
	}
	wrote, files := homeEntries(p.box.home)
	t.Logf("the agent wrote %d files under its HOME: %q", files, wrote)
	if t.Failed() {
		t.Logf("stderr tail of the agent:\n%s", r.StderrTail)
	}
}

// survivors lists the live processes whose environment holds this sandbox's HOME: the
// agent's descendants, wherever their process group. It polls briefly so that processes
// already killed have time to be reaped. Linux only (nil elsewhere).
func survivors(home string) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	want := []byte("HOME=" + home)
	var left []string
	for deadline := time.Now().Add(3 * time.Second); ; {
		left = left[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || len(env) == 0 {
				continue // gone, a zombie, or not ours
			}
			for _, kv := range bytes.Split(env, []byte{0}) {
				if bytes.Equal(kv, want) {
					cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
					left = append(left, e.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
					break
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// check compares a value with its expectation.
func check(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		if show(got) == show(want) {
			t.Errorf("%s: %s as %T, want it as %T (compare values of the same type)", what, show(got), got, want)
			return
		}
		t.Errorf("%s:\n got  %s\n want %s", what, show(got), show(want))
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// checkJSON compares raw JSON with the expected document, ignoring formatting and key order.
func checkJSON(t *testing.T, what string, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s: %v in %s", what, err, got)
		return
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation: %v", what, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got  %s\n want %s", what, got, want)
	}
}

// wantError checks the probe error: code, stage and the agent's error object verbatim.
func (p probed) wantError(t *testing.T, code report.ErrorCode, stage record.Stage, agentError string) {
	t.Helper()
	e := p.res.Error
	if e == nil {
		t.Errorf("error is nil, want %s at %s", code, stage)
		return
	}
	check(t, "error.code", e.Code, code)
	check(t, "error.stage", e.Stage, stage)
	checkJSON(t, "error.agentError", e.AgentError, agentError)
}

// method is the expected support of one optional method: the answer's error code, or 0 for a
// result.
type method struct {
	support report.Support
	code    int
}

func (p probed) wantMethods(t *testing.T, want map[string]method) {
	t.Helper()
	got := map[string]method{}
	for name, m := range p.res.Methods {
		c := 0
		if m.Code != nil {
			c = *m.Code
		}
		got[name] = method{support: m.Support, code: c}
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("methods[%s] missing, want %+v", name, w)
		} else if g != w {
			t.Errorf("methods[%s] = %+v (%q), want %+v", name, g, p.res.Methods[name].Message, w)
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("methods[%s] = %+v, not expected", name, g)
		}
	}
}

// authMethod is the part of an authMethods entry the suite asserts.
type authMethod struct {
	ID   string
	Type string   // "" when absent (the agent-driven default)
	Vars []string // names of the env_var variables
}

func (p probed) wantAuthMethods(t *testing.T, want []authMethod) {
	t.Helper()
	got := []authMethod{}
	for _, raw := range p.res.AuthMethods {
		var m struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Vars []struct {
				Name string `json:"name"`
			} `json:"vars"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("authMethods entry %s: %v", raw, err)
			continue
		}
		a := authMethod{ID: m.ID, Type: m.Type}
		for _, v := range m.Vars {
			a.Vars = append(a.Vars, v.Name)
		}
		got = append(got, a)
	}
	check(t, "authMethods", got, want)
}

// homeEntries lists what lies under dir down to two levels (relative paths), and how many
// files there are in all, for the log.
func homeEntries(dir string) (entries []string, files int) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		if !d.IsDir() {
			files++
		}
		rel, _ := filepath.Rel(dir, path)
		if strings.Count(rel, string(filepath.Separator)) < 2 {
			entries = append(entries, rel)
		}
		return nil
	})
	return entries, files
}

// wantSurvivors asserts which processes of the agent outlived it (by their kernel names, in
// the order found; none when names is empty): exit.groupKilled says so, and each was killed.
func (p probed) wantSurvivors(t *testing.T, names ...string) {
	t.Helper()
	wantExitSurvivors(t, p.res.Exit, names...)
}

// wantExitSurvivors is wantSurvivors on an exit.
func wantExitSurvivors(t *testing.T, x *record.ExitInfo, names ...string) {
	t.Helper()
	if x == nil {
		t.Error("exit is nil")
		return
	}
	got := []string{}
	for _, s := range x.Survivors {
		got = append(got, s.Command)
		if !s.Killed {
			t.Errorf("survivor %+v was not killed", s)
		}
	}
	check(t, "exit.survivors (kernel names)", got, append([]string{}, names...))
	check(t, "exit.groupKilled", x.GroupKilled, len(names) > 0)
}

// optInClient is the clientCapabilities of a client that opts in to the logins some agents
// offer only when asked: gateway logins (auth._meta.gateway, what `acpprobe turn` declares on
// its first handshake) and URL elicitation.
const optInClient = `{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false,"auth":{"_meta":{"gateway":true}},"elicitation":{"url":{}}}`

// initializeAs probes argv with initialize alone, declaring clientCapabilities caps, in a fresh
// sandbox, and checks what must hold for every agent (see probeAgent).
func initializeAs(t *testing.T, caps string, argv ...string) probed {
	t.Helper()
	return probeIn(t, newSandbox(t), argv, nil, func(o *probe.Options) {
		o.InitializeOnly = true
		o.ClientCapabilities = json.RawMessage(caps)
	})
}

// wantGatewayProtocols asserts the _meta.gateway.protocol of the auth methods that have one,
// by id.
func wantGatewayProtocols(t *testing.T, p probed, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, raw := range p.res.AuthMethods {
		var m struct {
			ID   string `json:"id"`
			Meta struct {
				Gateway *struct {
					Protocol string `json:"protocol"`
				} `json:"gateway"`
			} `json:"_meta"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Errorf("authMethods entry %s: %v", raw, err)
		} else if m.Meta.Gateway != nil {
			got[m.ID] = m.Meta.Gateway.Protocol
		}
	}
	check(t, "gateway protocols of the auth methods", got, want)
}

// handshake is what an agent's initialize answer and method detection say, as the suite
// asserts them of every probe of it.
type handshake struct {
	// name, title and version are agentInfo's (noInfo: the agent sends none).
	name, title, version string
	noInfo               bool
	caps                 report.Capabilities
	auth                 []authMethod
	methods              map[string]method
	configOption         bool // supportsConfigOption
}

// wantHandshake asserts protocolVersion 1 and h.
func (p probed) wantHandshake(t *testing.T, h handshake) {
	t.Helper()
	r := p.res
	check(t, "protocolVersion", r.ProtocolVersion, new(1))
	if h.noInfo {
		check(t, "agentInfo", r.AgentInfo, (*acp.Implementation)(nil))
	} else if r.AgentInfo == nil {
		t.Error("agentInfo is nil")
	} else {
		check(t, "agentInfo", *r.AgentInfo, acp.Implementation{Name: h.name, Title: h.title, Version: h.version})
	}
	check(t, "capabilities", r.Capabilities, h.caps)
	p.wantAuthMethods(t, h.auth)
	p.wantMethods(t, h.methods)
	check(t, "supportsConfigOption", r.SupportsConfigOption, new(h.configOption))
}

// wrappedText compiles re, a multi-line pattern for the text report, to match the report as
// it is printed: folded at its width, so every space after a line's indent may be a line break
// and the next line's indent. The indent itself (which says what a line belongs to) still
// has to match.
func wrappedText(re string) *regexp.Regexp {
	head := regexp.MustCompile(`^(\(\?m\)\^ *)`).FindString(re)
	body := strings.ReplaceAll(strings.ReplaceAll(re[len(head):], " +", " "), " ", `\s+`)
	return regexp.MustCompile(head + body)
}

// withSchema125Methods is an agent's method support with the methods acpprobe detects since
// it validates against schema >= 1.25 (the unstable session/archive, session/unarchive,
// session/status, session/set_title, and the legacy session/stop) as the pins answer them:
// -32601, but where m says otherwise (codex-acp 2.6.0's session/set_title).
func withSchema125Methods(m map[string]method) map[string]method {
	out := map[string]method{}
	for _, name := range []string{acp.MethodSessionArchive, acp.MethodSessionUnarchive, acp.MethodSessionStatus, acp.MethodSessionSetTitle, acp.MethodSessionStop} {
		out[name] = method{report.Unsupported, -32601}
	}
	for k, v := range m {
		out[k] = v
	}
	return out
}
