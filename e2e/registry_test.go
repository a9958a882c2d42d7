package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
)

// The embedded registry snapshot's entries this file probes.
var (
	// snapshotCodexArgv is what the codex-acp id runs: a binary distribution, looked up on
	// PATH under the base name of the archive's cmd.
	snapshotCodexArgv = []string{"codex-acp"}
	// snapshotGeminiArgv is what the gemini id runs: an npx distribution.
	snapshotGeminiArgv = []string{"npx", "-y", "@google/gemini-cli@0.27.3", "--experimental-acp"}
)

// npxPackage is the gemini-cli the --registry case pins: the suite's version, which the npm
// registry is known to serve (scripts/install-e2e-agents.sh installs it from there).
const npxPackage = "@google/gemini-cli@0.61.0"

// Budgets of a run that may start with a cold npx download (about 120 MB for gemini-cli).
var npxBudgets = []string{"--timeout", "4m", "--startup-timeout", "3m", "--request-timeout", requestTimeout.String()}

// suiteBudgets are the suite's budgets as flags (runCLI's).
var suiteBudgets = []string{"--timeout", probeTimeout.String(), "--startup-timeout", startupTimeout.String(),
	"--request-timeout", requestTimeout.String()}

// TestRegistryIDCodexACP probes codex-acp by its registry id (a binary distribution, found on
// PATH: e2e/.agents/node_modules/.bin comes first there) and by the raw command, in the same
// sandbox: the results are structurally identical, the exit codes and stderr envelopes equal,
// and `acpprobe diff --ignore agent` finds no drift.
func TestRegistryIDCodexACP(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	bin := agentBin(t, "codex-acp")
	box := newSandbox(t, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()

	byID := probeCLI(t, box, dir, "registry id", suiteBudgets, "--json", "codex-acp")
	raw := probeCLI(t, box, dir, "raw command", suiteBudgets, "--json", "--", bin)

	byID.wantAgent(t, new("codex-acp"), snapshotCodexArgv, box.cwd)
	raw.wantAgent(t, nil, []string{bin}, box.cwd)
	check(t, "exit code", byID.code, 4)
	if e := byID.res.Error; e == nil || e.Code != report.ErrAuthRequired {
		t.Errorf("registry id: error %s, want auth_required", show(e))
	}
	if byID.res.AgentInfo == nil || byID.res.AgentInfo.Version != "2.6.0" {
		// The snapshot's entry names release 0.9.2; what runs is whatever codex-acp is on PATH.
		t.Errorf("registry id: agentInfo %s, want the installed codex-acp 2.6.0", show(byID.res.AgentInfo))
	}
	sameAsRaw(t, box, byID, raw, nil)
}

// TestRegistryIDGemini probes gemini-cli by registry id, each case in one fresh sandbox:
//   - snapshot: --registry-command, the embedded snapshot's own gemini command, npx -y
//     @google/gemini-cli@0.27.3 --experimental-acp, a version npm no longer serves: npx exits 1
//     with ETARGET before initialize, and the error line says so (staleOutcome), as it does,
//     without the registry's part, for the same npx line given raw;
//   - on PATH: the suite's gemini on PATH, which the id runs instead of npx (and says so),
//     nothing downloaded; by id and as the raw command, the same probe;
//   - registry file: --registry FILE (and --registry-command), an agent.json that redefines
//     gemini as npx -y @google/gemini-cli@0.61.0 --acp, a real gemini-cli run through npx.
func TestRegistryIDGemini(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("%s=1 but npx is not on PATH: install Node.js (with npm)", enableVar)
	}

	t.Run("snapshot", func(t *testing.T) {
		t.Parallel()
		box := newSandbox(t)
		dir := t.TempDir()
		byID := probeCLI(t, box, dir, "registry id", npxBudgets, "--json", "--registry-command", "gemini")
		raw := probeCLI(t, box, dir, "raw command", npxBudgets, append([]string{"--json", "--"}, snapshotGeminiArgv...)...)

		byID.wantAgent(t, new("gemini"), snapshotGeminiArgv, box.cwd)
		check(t, "registry id: agent.command", byID.res.Agent.Command, strings.Join(snapshotGeminiArgv, " "))
		raw.wantAgent(t, nil, snapshotGeminiArgv, box.cwd)
		staleOutcome(t, byID, snapshotStale+"; the ACP registry snapshot of "+registry.SnapshotDate+
			" is stale: try --refresh, or the latest (npx -y @google/gemini-cli@latest --experimental-acp)")
		staleOutcome(t, raw, snapshotStale)
	})

	t.Run("on PATH", func(t *testing.T) {
		t.Parallel()
		bin := agentBin(t, "gemini")
		box := newSandbox(t, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		dir := t.TempDir()
		argv := []string{"gemini", snapshotGeminiArgv[3]} // the snapshot's arguments, to the program on PATH
		byID := probeCLI(t, box, dir, "registry id (on PATH)", suiteBudgets, "--json", "gemini")
		raw := probeCLI(t, box, dir, "raw command", suiteBudgets, "--json", "--", bin, snapshotGeminiArgv[3])

		byID.wantAgent(t, new("gemini"), argv, box.cwd)
		raw.wantAgent(t, nil, []string{bin, snapshotGeminiArgv[3]}, box.cwd)
		installed := "@google/gemini-cli " + strings.TrimPrefix(npxPackage, "@google/gemini-cli@")
		note := fmt.Sprintf("acpprobe probe: note: gemini: resolved to gemini on PATH (%s: %s) instead of %s (--registry-command runs that)\n",
			bin, installed, strings.Join(snapshotGeminiArgv, " "))
		if !strings.HasPrefix(byID.stderr, note) {
			t.Errorf("registry id (on PATH): stderr %q, want it to start with %q", byID.stderr, note)
		}
		for _, r := range []cliRun{byID, raw} {
			check(t, r.name+": exit code", r.code, 4)
			if ai := r.res.AgentInfo; ai == nil || ai.Name != "gemini-cli" || "@google/gemini-cli "+ai.Version != installed {
				t.Errorf("%s: agentInfo %s, want the installed %s", r.name, show(ai), installed)
			}
		}
		if _, err := os.Stat(filepath.Join(box.home, ".npm", "_npx")); err == nil {
			t.Errorf("npx fetched a package into the sandbox's npm cache: the id did not run the gemini on PATH")
		}
		sameAsRaw(t, box, byID, raw, map[string]string{"protocol.leftover-processes": "gemini's detached node processes outlive an immediate SIGTERM, one or two of them"})
	})

	t.Run("registry file", func(t *testing.T) {
		t.Parallel()
		box := newSandbox(t)
		dir := t.TempDir()
		file := filepath.Join(dir, "agent.json")
		writeJSON(t, file, map[string]any{
			"id": "gemini", "name": "Gemini CLI", "version": "0.61.0", "description": "Google's official CLI for Gemini",
			"authors": []string{"Google"}, "license": "Apache-2.0",
			"distribution": map[string]any{"npx": map[string]any{"package": npxPackage, "args": []string{"--acp"}}},
		})
		argv := []string{"npx", "-y", npxPackage, "--acp"}
		byID := probeCLI(t, box, dir, "registry id (cold npx)", npxBudgets, "--json", "--registry-command", "--registry", file, "gemini")
		logNpmCache(t, box, "after the cold run")
		if _, err := os.Stat(filepath.Join(box.home, ".npm", "_npx")); err != nil {
			t.Errorf("npx left no package under the sandbox's npm cache (%v): did it download into the fresh HOME?", err)
		}
		raw := probeCLI(t, box, dir, "raw command (warm npx)", npxBudgets, append([]string{"--json", "--"}, argv...)...)
		t.Logf("npx: spawn→initialize %.0f ms cold (download included), %.0f ms warm",
			byID.res.Timings.SpawnToInitializeMs, raw.res.Timings.SpawnToInitializeMs)

		byID.wantAgent(t, new("gemini"), argv, box.cwd)
		raw.wantAgent(t, nil, argv, box.cwd)
		for _, r := range []cliRun{byID, raw} {
			check(t, r.name+": exit code", r.code, 4)
			if ai := r.res.AgentInfo; ai == nil || ai.Name != "gemini-cli" || ai.Version != "0.61.0" {
				t.Errorf("%s: agentInfo %s, want gemini-cli 0.61.0", r.name, show(ai))
			}
			if e := r.res.Error; e == nil || e.Code != report.ErrAuthRequired || e.Stage != record.StageSessionNew {
				t.Errorf("%s: error %s, want auth_required at session/new", r.name, show(e))
			}
			if r.res.Exit != nil { // a probe signals as soon as it has closed the agent's stdin
				check(t, r.name+": exit.by", r.res.Exit.By, record.ExitSigterm)
			}
		}
		// npx-launched gemini relaunches itself as detached node processes: after the probe's
		// immediate SIGTERM one or two of them outlive it, a race the runs need not share.
		sameAsRaw(t, box, byID, raw, map[string]string{"protocol.leftover-processes": "gemini's detached node processes outlive an immediate SIGTERM, one or two of them"})
	})
}

// TestRegistryIDCodeBuddy probes the codebuddy-code id (a built-in entry with the registry's
// npx line, npx -y @tencent-ai/codebuddy-code@2.156.0 --acp), each case in a fresh sandbox:
//   - npx: the npm registry this suite runs against serves no @tencent-ai/codebuddy-code
//     (E404): exit 3, the error line says so, and a note says how to run the CLI that
//     @tencent-ai/agent-sdk bundles;
//   - on PATH: that bundled CLI's directory (scripts/install-e2e-agents.sh installs the SDK) on
//     PATH: the id runs its codebuddy (CodeBuddy Code 2.117.0, which sends no agentInfo and
//     needs a login: auth_required, exit 4), and says so.
func TestRegistryIDCodeBuddy(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("%s=1 but npx is not on PATH: install Node.js (with npm)", enableVar)
	}
	const pkg = "@tencent-ai/codebuddy-code@2.156.0"

	t.Run("npx", func(t *testing.T) {
		t.Parallel()
		box := newSandbox(t)
		r := probeCLI(t, box, t.TempDir(), "registry id (npx)", npxBudgets, "--json", "--registry-command", "codebuddy-code")
		r.wantAgent(t, new("codebuddy-code"), []string{"npx", "-y", pkg, "--acp"}, box.cwd)
		const line = "npm: no package @tencent-ai/codebuddy-code in the npm registry registry.npmjs.org (E404)"
		if e := r.res.Error; e == nil || e.Code != report.ErrAgentCrashed || e.Stage != record.StageInitialize || r.code != 3 ||
			!strings.Contains(r.res.StderrTail, "E404") {
			t.Fatalf("npx of %s did not fail with npm's E404 before initialize (does this npm registry serve it now?): exit %d, error %s\nstderr:\n%s",
				pkg, r.code, show(e), r.res.StderrTail)
		}
		want := []any{map[string]any{"error": map[string]any{"code": "agent_crashed", "stage": "initialize", "message": line, "exitCode": 3.0}}}
		check(t, "stderr envelope", jsonLines(r.stderr), want)
		hint := "acpprobe probe: note: " + registry.PackageHint("@tencent-ai/codebuddy-code") + "\n"
		if !strings.Contains(r.stderr, hint) {
			t.Errorf("stderr %q lacks the note %q", r.stderr, hint)
		}
	})

	t.Run("on PATH", func(t *testing.T) {
		t.Parallel()
		bin := agentArgv(t, "codebuddy")[1] // node runs it: the program is the script
		box := newSandbox(t, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
		r := probeCLI(t, box, t.TempDir(), "registry id (on PATH)", suiteBudgets, "--json", "codebuddy-code")
		r.wantAgent(t, new("codebuddy-code"), []string{"codebuddy", "--acp"}, box.cwd)
		note := fmt.Sprintf("acpprobe probe: note: codebuddy-code: resolved to codebuddy on PATH (%s: @tencent-ai/codebuddy-code 2.117.0) instead of npx -y %s --acp (--registry-command runs that)\n", bin, pkg)
		if !strings.HasPrefix(r.stderr, note) {
			t.Errorf("stderr %q, want it to start with %q", r.stderr, note)
		}
		check(t, "exit code", r.code, 4)
		if e := r.res.Error; e == nil || e.Code != report.ErrAuthRequired || e.Stage != record.StageSessionNew {
			t.Errorf("error %s, want auth_required at session/new", show(e))
		}
		if r.res.AgentInfo != nil || r.res.ProtocolVersion == nil {
			t.Errorf("agentInfo %s, protocol %v: want no agentInfo, and initialize answered", show(r.res.AgentInfo), r.res.ProtocolVersion)
		}
	})
}

// snapshotStale is what npm says of the snapshot's gemini-cli, in acpprobe's error line.
const snapshotStale = "npm: no version 0.27.3 of @google/gemini-cli"

// staleOutcome asserts the outcome of the snapshot's gemini command, npx -y
// @google/gemini-cli@0.27.3, on an npm registry that no longer serves that version (it lists
// 0.27.0 and 0.27.4, not 0.27.3): npx exits 1 with ETARGET before initialize, so agent_crashed
// at initialize, exit 3, the result's stderr npm's, and the error line (here the --json
// envelope's message) says what npm said, as message.
func staleOutcome(t *testing.T, r cliRun, message string) {
	t.Helper()
	e := r.res.Error
	if e == nil || e.Code != report.ErrAgentCrashed || e.Stage != record.StageInitialize || r.code != 3 ||
		!strings.Contains(r.res.StderrTail, "ETARGET") || !strings.Contains(r.res.StderrTail, "No matching version found for "+snapshotGeminiArgv[2]) {
		t.Errorf("%s: the snapshot's gemini (%s) did not fail with npm's ETARGET before initialize: exit %d, error %s\nstderr:\n%s",
			r.name, strings.Join(snapshotGeminiArgv, " "), r.code, show(e), r.res.StderrTail)
	}
	want := []any{map[string]any{"error": map[string]any{"code": "agent_crashed", "stage": "initialize", "message": message, "exitCode": 3.0}}}
	check(t, r.name+": stderr envelope", jsonLines(r.stderr), want)
}

// configAgent is one entry of the agents config the tests write.
type configAgent struct {
	name string
	bin  string
	args []string
	env  map[string]string // the config's env
	cwd  string            // relative to the config file's directory ("" = none)
}

// writeAgentsConfig writes an editor-style agents config ({"agents": {name: {command, args,
// env, cwd}}}, plus "type": "custom", a key editors use and acpprobe ignores) in dir and
// creates the working directories it names.
func writeAgentsConfig(t *testing.T, dir string, agents []configAgent) string {
	t.Helper()
	entries := map[string]any{}
	for _, a := range agents {
		e := map[string]any{"type": "custom", "command": a.bin}
		if len(a.args) > 0 {
			e["args"] = a.args
		}
		if len(a.env) > 0 {
			e["env"] = a.env
		}
		if a.cwd != "" {
			e["cwd"] = a.cwd
			if err := os.MkdirAll(filepath.Join(dir, a.cwd), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		entries[a.name] = e
	}
	path := filepath.Join(dir, "agents.json")
	writeJSON(t, path, map[string]any{"agents": entries})
	return path
}

// pinnedNames are the config names of the pinned agents (agentArgv), in the order of
// scripts/install-e2e-agents.sh.
var pinnedNames = []string{"claude", "codex", "gemini", "qwen", "opencode", "codebuddy"}

// realConfigAgents are the real agents as config entries named as in pinnedNames. With extra,
// each gets env ACPPROBE_E2E_VIA=config-<name> and a relative cwd work-<name>, and claude also
// IS_SANDBOX=1: as root that makes claude-agent-acp offer bypassPermissions, which the
// sandbox's empty IS_SANDBOX does not, so the mode shows that the config's env reached the
// agent.
func realConfigAgents(t *testing.T, extra bool) []configAgent {
	var agents []configAgent
	for _, name := range pinnedNames {
		argv := agentArgv(t, name)
		agents = append(agents, configAgent{name: name, bin: argv[0], args: argv[1:]})
	}
	if extra {
		for i := range agents {
			a := &agents[i]
			a.env = map[string]string{"ACPPROBE_E2E_VIA": "config-" + a.name}
			if a.name == "claude" {
				a.env["IS_SANDBOX"] = "1"
			}
			a.cwd = "work-" + a.name
		}
	}
	return agents
}

// TestConfigAgents probes each real agent by its name in an agents config file (with env and a
// relative cwd) and by the equivalent raw command (--cwd, --env, --), in the same sandbox:
// structurally identical results, equal exit codes and envelopes, no drift.
func TestConfigAgents(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	cfgDir := t.TempDir()
	agents := realConfigAgents(t, true)
	cfg := writeAgentsConfig(t, cfgDir, agents)
	// claude-agent-acp and opencode make a session without a login; the others need one.
	wantCode := map[string]int{"claude": 0, "codex": 4, "gemini": 4, "qwen": 4, "opencode": 0, "codebuddy": 4}
	optional := map[string]map[string]string{"qwen": {"protocol.leftover-processes": qwenLeftoverWhy},
		"claude": {"protocol.leftover-processes": claudeSessionWhy}}

	for _, a := range agents {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			box := newSandbox(t)
			dir := t.TempDir()
			work := filepath.Join(cfgDir, a.cwd)
			argv := append([]string{a.bin}, a.args...)

			byName := probeCLI(t, box, dir, "config name", suiteBudgets, "--json", "--config", cfg, a.name)
			rawArgs := []string{"--json", "--cwd", work}
			for _, k := range slices.Sorted(maps.Keys(a.env)) {
				rawArgs = append(rawArgs, "--env", k+"="+a.env[k])
			}
			raw := probeCLI(t, box, dir, "raw command", suiteBudgets, append(append(rawArgs, "--"), argv...)...)

			byName.wantAgent(t, new(a.name), argv, work)
			raw.wantAgent(t, nil, argv, work)
			var env []string
			for _, k := range slices.Sorted(maps.Keys(a.env)) {
				env = append(env, k+"="+a.env[k])
			}
			check(t, "config name: agent.command (the launch line, env first)", byName.res.Agent.Command,
				strings.Join(append(env, argv...), " "))
			check(t, "config name: exit code", byName.code, wantCode[a.name])
			if a.name == "claude" {
				// IS_SANDBOX=1 came from the config (the sandbox sets it empty).
				for _, r := range []cliRun{byName, raw} {
					if !slices.ContainsFunc(r.res.Modes, func(m acp.Mode) bool { return m.ID == "bypassPermissions" }) {
						t.Errorf("%s: modes %s lack bypassPermissions: IS_SANDBOX=1 did not reach claude-agent-acp", r.name, show(r.res.Modes))
					}
				}
			}
			sameAsRaw(t, box, byName, raw, optional[a.name])
			if entries, err := os.ReadDir(work); err != nil || len(entries) > 0 {
				t.Errorf("the agent wrote into its working directory %s: %v %v", work, entries, err)
			}
		})
	}
}

// TestRegistryAgentsAndUnknownIDs covers what resolves before anything runs: `acpprobe agents`
// on this machine (with the suite's agents on PATH and as config entries; with an empty PATH),
// a registry binary missing from PATH (exit 3 with where to download it), and unknown ids
// (exit 2 with close matches, nothing launched).
func TestRegistryAgentsAndUnknownIDs(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	bin := agentBin(t, "codex-acp")
	cfg := writeAgentsConfig(t, t.TempDir(), realConfigAgents(t, false))
	onPath := newSandbox(t, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	empty := newSandbox(t, "PATH="+t.TempDir())

	list := func(box sandbox, args ...string) map[string]registry.Status {
		t.Helper()
		code, out, errOut := execCLI(t, box, append([]string{"agents", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("acpprobe agents --json: exit %d: %s", code, errOut)
		}
		var all []registry.Status
		if err := json.Unmarshal([]byte(out), &all); err != nil {
			t.Fatalf("acpprobe agents --json: %v\n%s", err, out)
		}
		byID := map[string]registry.Status{}
		for _, s := range all {
			byID[s.ID] = s
		}
		return byID
	}
	type status struct {
		Kind   registry.Kind
		Source registry.Source
		CanRun bool
		Argv   []string
	}
	pick := func(s registry.Status) status { return status{s.Kind, s.Source, s.CanRun, s.Argv} }

	got := list(onPath)
	check(t, "agents: codex-acp", pick(got["codex-acp"]), status{registry.KindBinary, registry.SourceRegistry, true, snapshotCodexArgv})
	// The suite's gemini is on that PATH: the id runs it.
	check(t, "agents: gemini", pick(got["gemini"]), status{registry.KindPath, registry.SourceRegistry, true, []string{"gemini", snapshotGeminiArgv[3]}})
	if s, ok := got["acptest-claude"]; !ok || !s.CanRun || s.Source != registry.SourceBuiltin || len(s.Argv) == 0 || s.Argv[0] != buildCLI(t) {
		t.Errorf("agents: acptest-claude %s, want a runnable built-in that runs acpprobe itself", show(s))
	}
	// With --config, its entries are listed, and its gemini replaces the registry's.
	got = list(onPath, "--config", cfg)
	for _, name := range pinnedNames {
		check(t, "agents --config: "+name, pick(got[name]), status{registry.KindConfig, registry.SourceConfig, true, agentArgv(t, name)})
	}
	check(t, "agents --config: codex-acp", pick(got["codex-acp"]), status{registry.KindBinary, registry.SourceRegistry, true, snapshotCodexArgv})

	noPath := list(empty)
	if s := noPath["codex-acp"]; s.CanRun || s.Reason != "codex-acp not found on PATH" ||
		!strings.HasPrefix(s.Install, "download https://github.com/zed-industries/codex-acp/releases/download/v0.9.2/") {
		t.Errorf("agents with an empty PATH: codex-acp %s, want not runnable, not on PATH, with the download", show(s))
	}
	if registry.PlatformFor(runtime.GOOS, runtime.GOARCH) != "" {
		code, out, errOut := runCLI(t, empty, "probe", "codex-acp")
		check(t, "probe codex-acp without it on PATH: exit code", code, 3)
		check(t, "probe codex-acp without it on PATH: stdout", out, "")
		// The second line says where the id came from: the snapshot, its age, and --refresh.
		re := regexp.MustCompile(`^acpprobe probe: agent "codex-acp" cannot run here: codex-acp not found on PATH; to install: download https://github\.com/zed-industries/codex-acp/releases/download/v0\.9\.2/\S+, extract it and put codex-acp on PATH\n` +
			`acpprobe probe: note: codex-acp comes from the ACP registry snapshot of 2026-02-07 \(\d+ days old\); 'acpprobe agents --refresh' fetches the current registry\n$`)
		if !re.MatchString(errOut) {
			t.Errorf("probe codex-acp without it on PATH: stderr %q, want %s", errOut, re)
		}
	}

	// Each line ends by showing how to run a command of that name instead.
	for _, tc := range []struct {
		args []string
		line string
	}{
		{[]string{"probe", "gemni"}, `acpprobe probe: unknown agent "gemni"; did you mean: gemini?; to run a command of that name, put it after --: acpprobe probe -- gemni`},
		{[]string{"check", "--json", "codex"}, `acpprobe check: unknown agent "codex"; did you mean: codex-acp, acptest-codex?; to run a command of that name, put it after --: acpprobe check -- codex`},
		{[]string{"probe", "--config", cfg, "claud"}, `acpprobe probe: unknown agent "claud"; did you mean: claude, claude-acp, claude-code-acp, acptest-claude?; to run a command of that name, put it after --: acpprobe probe -- claud`},
	} {
		code, out, errOut := runCLI(t, onPath, tc.args[0], tc.args[1:]...)
		check(t, fmt.Sprintf("%q: exit code", tc.args), code, 2)
		check(t, fmt.Sprintf("%q: stdout", tc.args), out, "")
		check(t, fmt.Sprintf("%q: stderr", tc.args), errOut, tc.line+"\n")
	}
	// A matrix with one unknown id is a usage error before any agent starts: --out is not
	// even created.
	out := filepath.Join(t.TempDir(), "out")
	code, _, errOut := runCLI(t, onPath, "matrix", "--config", cfg, "--out", out, "claude", "gemni")
	check(t, "matrix with an unknown id: exit code", code, 2)
	check(t, "matrix with an unknown id: stderr", errOut, "acpprobe matrix: unknown agent \"gemni\"; did you mean: gemini?\n")
	if _, err := os.Stat(out); err == nil {
		t.Errorf("matrix with an unknown id created %s", out)
	}
	for _, box := range []sandbox{onPath, empty} {
		if left := survivors(box.home); len(left) > 0 {
			t.Errorf("processes survived:\n%s", strings.Join(left, "\n"))
		}
	}
}

// cliRun is one `acpprobe probe --json` run.
type cliRun struct {
	name           string
	code           int
	stdout, stderr string
	res            report.Result
	file           string // stdout, saved for acpprobe diff
}

// probeCLI runs `acpprobe probe <budgets> <args…>` in box, checks that nothing of the agent
// survived, and saves stdout under dir.
func probeCLI(t *testing.T, box sandbox, dir, name string, budgets []string, args ...string) cliRun {
	t.Helper()
	start := time.Now()
	code, stdout, stderr := execCLI(t, box, append(append([]string{"probe"}, budgets...), args...)...)
	took := time.Since(start)
	r := cliRun{name: name, code: code, stdout: stdout, stderr: stderr, res: resultDoc(t, stdout)}
	r.file = filepath.Join(dir, strings.NewReplacer(" ", "-", "(", "", ")", "").Replace(name)+".json")
	if err := os.WriteFile(r.file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	checkGone(t, box, r.res)
	tm := r.res.Timings
	outcome := "no error"
	if e := r.res.Error; e != nil {
		outcome = e.Error()
	}
	t.Logf("%s: acpprobe probe %s: exit %d in %v (spawn→initialize %.0f ms, total %.0f ms); %s",
		name, strings.Join(args, " "), code, took.Round(time.Millisecond), tm.SpawnToInitializeMs, tm.TotalMs, outcome)
	return r
}

// wantAgent checks the agent block: the id (nil for a raw command), argv and cwd.
func (r cliRun) wantAgent(t *testing.T, id *string, argv []string, cwd string) {
	t.Helper()
	check(t, r.name+": agent.id", r.res.Agent.ID, id)
	check(t, r.name+": agent.argv", r.res.Agent.Argv, argv)
	check(t, r.name+": agent.cwd", r.res.Agent.Cwd, cwd)
}

// sameAsRaw asserts that a probe by id and the probe of the equivalent raw command agree: the
// same exit code and stderr envelope, the same result structurally (the transcript test's
// structural rule, with the findings allowed to come and go dropped and the random session ids
// masked), and `acpprobe diff --ignore agent` says "no drift". When an optional finding was in
// one run only, diff must report exactly that (the finding, and exit.groupKilled and
// exit.survivors for protocol.leftover-processes) and nothing more once those paths are
// ignored.
func sameAsRaw(t *testing.T, box sandbox, byID, raw cliRun, optional map[string]string) {
	t.Helper()
	check(t, "exit code ("+byID.name+" | "+raw.name+")", byID.code, raw.code)
	check(t, "stderr envelope ("+byID.name+" | "+raw.name+")", jsonLines(byID.stderr), jsonLines(raw.stderr))

	a, b := structural(t, byID.name, byID.stdout), structural(t, raw.name, raw.stdout)
	dropA, dropB := dropOptional(t, byID.name, a, optional), dropOptional(t, raw.name, b, optional)
	withoutRunIDs(a)
	withoutRunIDs(b)
	if !reflect.DeepEqual(a, b) {
		var diffs []string
		jsonDiff("", a, b, &diffs)
		t.Errorf("the results differ structurally (%s | %s):\n%s", byID.name, raw.name, strings.Join(diffs, "\n"))
	}

	// structural drops the racy authPush; so does diff.
	ignore := []string{"--ignore", "agent", "--ignore", "extensions.methods[" + authPush + "]", "--ignore", "extensions.vendors[" + authPushVendor + "]"}
	var once []string // optional findings in one run only
	for _, id := range dropA {
		if !slices.Contains(dropB, id) {
			once = append(once, id)
		} else {
			// In both runs, but free to say different things (how many processes, …).
			ignore = append(ignore, "--ignore", "findings["+id+"]")
		}
	}
	for _, id := range dropB {
		if !slices.Contains(dropA, id) {
			once = append(once, id)
		}
	}
	if len(once) > 0 {
		code, out, errOut := execCLI(t, box, append(append([]string{"diff", "--json"}, ignore...), raw.file, byID.file)...)
		check(t, "diff --json (an optional finding in one run only): exit code", code, 1)
		var changes []struct {
			Path string `json:"path"`
		}
		if err := json.Unmarshal([]byte(out), &changes); err != nil {
			t.Fatalf("diff --json: %v: %s %s", err, out, errOut)
		}
		for _, c := range changes {
			known := false
			for _, id := range once {
				known = known || c.Path == "findings["+id+"]" || strings.HasPrefix(c.Path, "findings["+id+"@")
			}
			if !known {
				t.Errorf("diff: change %s is not one of the optional findings %q", c.Path, once)
			}
			ignore = append(ignore, "--ignore", c.Path)
		}
		t.Logf("diff: %d change(s) from the optional findings %q (%s), ignored", len(changes), once, out)
	}
	code, out, errOut := execCLI(t, box, append(append([]string{"diff"}, ignore...), raw.file, byID.file)...)
	check(t, "acpprobe diff "+strings.Join(ignore, " ")+" RAW ID: exit code", code, 0)
	check(t, "acpprobe diff: stdout", out, "no drift\n")
	check(t, "acpprobe diff: stderr", errOut, "")
}

// jsonLines returns the lines of s that are JSON values (decoded), for comparing envelopes.
func jsonLines(s string) []any {
	var out []any
	for _, line := range strings.Split(s, "\n") {
		var v any
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// logNpmCache logs the size of the sandbox's npm cache (npx downloads into $HOME/.npm).
func logNpmCache(t *testing.T, box sandbox, when string) {
	t.Helper()
	var size int64
	files := 0
	_ = filepath.Walk(filepath.Join(box.home, ".npm"), func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			size += info.Size()
			files++
		}
		return nil
	})
	t.Logf("npm cache of the sandbox %s: %d files, %.1f MB", when, files, float64(size)/(1<<20))
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
