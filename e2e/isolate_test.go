package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// isolated is what one real agent does under `acpprobe probe --isolate`, and what --auth-ab
// makes of it on a machine without model access.
type isolated struct {
	// writes are the files the agent creates in its sandbox (patterns of their paths as the
	// report shows them): each must be there, and nothing else may be but maybe.
	writes []string
	// maybe are files the agent may or may not write, depending on timing.
	maybe []string
	// auth is the auth oracle's answer; evidence lines it must give (one from each identity
	// at least).
	auth     report.AuthClass
	evidence []string
	// pushedAuth, when set, is the oracle's answer when the agent's login push (authPush:
	// "none (Not logged in)") arrives before the probe ends, which is a race; pushedEvidence
	// are the lines it must then give instead of evidence.
	pushedAuth     report.AuthClass
	pushedEvidence []string
}

// isolatedAgents are the pinned agents, by config name (agentArgv): what each writes when
// probed (initialize, session/new, method detection) in a fresh HOME, and how the oracle
// classifies it without credentials. A sandbox drops IS_SANDBOX, so claude-agent-acp's session
// works as root (TestClaudeAgentACP).
var isolatedAgents = map[string]isolated{
	// Claude Code (bundled by the adapter) writes its config, a backup of it and a plugin-store
	// entry; and the telemetry it could not send, when it tried before the teardown's SIGTERM.
	// (0.23.1 also logged the `npm root --global` it ran.) session/new works with an empty
	// identity and no auth method is advertised: "no auth needed" is all a probe that sends no
	// prompt can say, and the evidence says so.
	"claude": {
		writes: []string{`home/\.claude/\.claude\.json`, `home/\.claude/backups/\.claude\.json\.backup\.\d+`},
		// And, now and then, the one-byte file with which Claude Code checks that its TMPDIR
		// can be watched, when the teardown comes before it removes it. The CLI outlives the
		// adapter and is killed the settle window (250 ms) after it, not the grace (commit
		// 6e46e27): the plugin-store entry may not be written yet, and a rewrite of its
		// config may be cut between its temporary file and the rename. The CLI that lives on
		// also writes a key under sessions/, named by its pid (once in three CI runs, 2026-12-02).
		maybe: []string{`home/\.claude/telemetry/1p_failed_events\.[0-9a-f.-]+\.json`, `tmp/claude-\d+/fswatch-probe-\w+/probe`,
			`home/\.claude/plugins/store/cc-plugin-agents-md_builtin-[0-9a-f]+\.json`, `home/\.claude/\.claude\.json\.tmp\.\d+\.[0-9a-f]+`,
			`home/\.claude/sessions/\d+\.[0-9a-f]+\.key`},
		auth: report.AuthClassNoAuthNeeded,
		evidence: []string{"user (none): session/new succeeded", "isolated (env+home): session/new succeeded",
			"session/new works with an empty identity and the agent advertises no login; no prompt was sent, so a login the agent does not advertise would not show"},
		// The adapter pushes {"authStatus":{"kind":"none","label":"Not logged in"}} once its
		// `claude auth status` returns, often after a probe's teardown.
		pushedAuth: report.AuthClassRequired,
		pushedEvidence: []string{"user (none): session/new succeeded", "isolated (env+home): session/new succeeded",
			"isolated (env+home): auth status updates none (Not logged in)",
			"session/new works without a login, but the agent reports it is not signed in: a prompt would ask for one"},
	},
	// codex lays out its home: sqlite databases with their WAL files, an installation id, a
	// plugin-sync lock and the bundled system skills (0.16.0 also linked its own binary under
	// tmp/arg0).
	"codex": {
		writes: []string{`home/\.codex/(goals|logs|memories|queue|state)_\d+\.sqlite(-shm|-wal)?`, `home/\.codex/installation_id`,
			`home/\.codex/\.tmp/plugins\.sync\.lock`, `home/\.codex/skills/\.system/.+`},
		// And, when its plugin sync got that far before the teardown, the git repository it
		// starts cloning into.
		maybe: []string{`home/\.codex/\.tmp/git-\w+/.+`},
		auth:  report.AuthClassRequired,
		// It advertises no auth/status, and the catalogue knows it serves authentication/status
		// (side-effect free): both identities are asked it.
		evidence: []string{"user (none): session/new answered an authentication error: -32000 Authentication required",
			`user (none): asked for its login state, it answered "unauthenticated"`,
			"isolated (env+home): session/new answered an authentication error: -32000 Authentication required",
			`isolated (env+home): asked for its login state, it answered "unauthenticated"`,
			"isolated (env+home): authMethods api-key (agent), chat-gpt (agent)"},
	},
	// gemini-cli records the project and the chat of a session that never started.
	"gemini": {
		writes: []string{`home/\.gemini/installation_id`, `home/\.gemini/projects\.json`, `home/\.gemini/(history|tmp)/workspace/\.project_root`,
			`home/\.gemini/tmp/workspace/chats/session-[0-9T-]+-[0-9a-f]+\.jsonl`},
		auth: report.AuthClassRequired,
		evidence: []string{"user (none): session/new answered an authentication error: -32000 Gemini API key is missing or not configured.",
			"isolated (env+home): session/new answered an authentication error: -32000 Gemini API key is missing or not configured."},
	},
	// qwen-code writes an installation id, its output-language instructions and the state of
	// its extension store.
	"qwen": {
		writes: []string{`home/\.qwen/installation_id`, `home/\.qwen/output-language\.md`, `home/\.qwen/extension-store/(lock|state\.json)`,
			`home/\.qwen/extensions/extension-enablement\.json`},
		// And the marker of its OpenAI log cleanup, when that runs before the teardown.
		maybe: []string{`home/\.qwen/\.openai-logs-cleanup-[0-9a-f]+(\.lock)?`},
		auth:  report.AuthClassRequired,
		evidence: []string{"user (none): session/new answered an authentication error: -32000 Authentication required: Use Qwen Code CLI to authenticate first.",
			"isolated (env+home): session/new answered an authentication error: -32000 Authentication required: Use Qwen Code CLI to authenticate first.",
			"isolated (env+home): authMethods openai (agent)"},
	},
	// opencode writes its config, its database and log, and a lock; and, when its plugin
	// install gets that far before the teardown, npm's cache of the packages it looked up
	// (@opencode-ai/plugin …: the npm registry is the one network it reaches). Its session
	// works without a login, but it advertises one: whether a prompt needs it is not known.
	"opencode": {
		writes: []string{`home/\.config/opencode/(\.gitignore|opencode\.jsonc)`, `home/\.local/share/opencode/log/opencode\.log`,
			`home/\.local/share/opencode/opencode\.db(-shm|-wal)?`, `home/\.local/state/opencode/locks/[0-9a-f]+\.lock/(heartbeat|meta\.json)`},
		maybe: []string{`home/\.npm/_cacache/.+`},
		auth:  report.AuthClassUnknown,
		evidence: []string{"user (none): session/new succeeded", "isolated (env+home): session/new succeeded",
			"isolated (env+home): authMethods opencode-login (agent)",
			"session/new works without a login, but the agent advertises authMethods: whether a prompt needs one is not known without sending one"},
	},
	// CodeBuddy Code caches its product configuration, logs the session it could not start,
	// and writes its plugin marketplaces and dconf's user database (under the sandbox's
	// XDG_RUNTIME_DIR).
	"codebuddy": {
		writes: []string{`home/\.codebuddy/local_storage/entry_[0-9a-f]{32}\.info`, `home/\.codebuddy/logs/\d{4}-\d\d-\d\d/workspace__[0-9a-f]{32}\.log`,
			`home/\.codebuddy/plugins/known_marketplaces\.json`, `run/dconf/user`},
		auth: report.AuthClassRequired,
		evidence: []string{"user (none): session/new answered an authentication error: -32000 Authentication required",
			"isolated (env+home): session/new answered an authentication error: -32000 Authentication required",
			"isolated (env+home): authMethods iOA (agent), external (agent), internal (agent), selfhosted (agent)"},
	},
}

// TestIsolate probes each real agent with --isolate --keep-sandbox: the report lists exactly
// the files it writes (with sizes that match what is on disk in the kept sandbox), no browser
// launch, and nothing that survived; nothing reaches the user's HOME or working directory,
// and nothing of the agent runs after acpprobe.
func TestIsolate(t *testing.T) {
	requireE2E(t)
	for name, a := range isolatedAgents {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			box := newSandbox(t)
			homeBefore := entriesUnder(t, box.home) // newSandbox makes ~/.codex
			kept := filepath.Join(t.TempDir(), "sandbox")
			argv := append([]string{"--json", "--isolate", "--keep-sandbox", kept, "--"}, agentArgv(t, name)...)
			_, stdout, stderr := runCLI(t, box, "probe", argv...)
			r := resultDoc(t, stdout)
			se := r.SideEffects
			if se == nil {
				t.Fatalf("no sideEffects; stderr:\n%s", stderr)
			}
			check(t, "isolation.level", string(se.Isolation.Level), "env+home")
			check(t, "isolation.kept", se.Isolation.Kept, kept)
			check(t, "agent.cwd", r.Agent.Cwd, filepath.Join(kept, "workspace"))

			// Exactly the files it writes, each on disk in the kept sandbox with its size.
			var got []string
			matched := make([]bool, len(a.writes))
			for _, c := range se.Files.Changes {
				got = append(got, c.Change+" "+c.Path+" "+strconv.FormatInt(c.Size, 10))
				known := false
				for i, w := range a.writes {
					if regexp.MustCompile("^(" + w + ")$").MatchString(c.Path) {
						matched[i], known = true, true
					}
				}
				for _, w := range a.maybe {
					known = known || regexp.MustCompile("^("+w+")$").MatchString(c.Path)
				}
				if !known || c.Change != "created" {
					t.Errorf("unexpected change %s %s", c.Change, c.Path)
				}
				if st, err := os.Lstat(filepath.Join(kept, c.Path)); err != nil || (c.Kind == "file" && st.Size() != c.Size) {
					t.Errorf("%s (%d bytes) in the report is not so in the kept sandbox: %v", c.Path, c.Size, err)
				}
			}
			for i, w := range a.writes {
				if !matched[i] {
					t.Errorf("no file matches %s", w)
				}
			}
			t.Logf("%s wrote %d files in its sandbox:\n%s", name, len(got), strings.Join(got, "\n"))

			check(t, "browser.shimmed", se.Browser.Shimmed, true)
			check(t, "browser.launches", len(se.Browser.Launches), 0)
			check(t, "network.observed", se.Network.Observed, false)
			// What outlived the agent (Claude Code's CLI, which the adapter leaves to its
			// group; now and then one of qwen-code's node processes) was killed; it is
			// reported, and nothing runs now.
			for _, s := range se.Processes.AfterTeardown {
				if !s.Killed {
					t.Errorf("survivor %+v was not killed", s)
				}
			}
			t.Logf("after teardown: %+v; escaped: %+v", se.Processes.AfterTeardown, se.Processes.Escaped)
			if left := survivors(filepath.Join(kept, "home")); len(left) > 0 {
				t.Errorf("processes of the sandbox survived acpprobe:\n%s", strings.Join(left, "\n"))
			}
			checkGone(t, box, r)
			if got := entriesUnder(t, box.home); !slices.Equal(got, homeBefore) {
				t.Errorf("the user's HOME holds %v, and held %v before", got, homeBefore)
			}
			if got := entriesUnder(t, box.cwd); len(got) > 0 {
				t.Errorf("the user's working directory got %v", got)
			}
		})
	}
}

// TestIsolateAuthAB runs --auth-ab on each real agent: the user's identity (a HOME without
// credentials, the suite's) against an empty one in a sandbox. No model is reachable, so the
// truthful answers are auth_required for the agents that refuse session/new without a login,
// and, for claude-agent-acp and opencode, whose session/new works without any, what a probe
// without a prompt can say. Neither run logs in; the isolated one leaves nothing behind.
func TestIsolateAuthAB(t *testing.T) {
	requireE2E(t)
	for name, a := range isolatedAgents {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir() // where the isolated identity's sandbox goes
			box := newSandbox(t, "TMPDIR="+tmp)
			transcript := filepath.Join(t.TempDir(), "probe.ndjson")
			_, stdout, stderr := runCLI(t, box, "probe", append([]string{"--json", "--auth-ab", "--transcript", transcript, "--"}, agentArgv(t, name)...)...)
			r := resultDoc(t, stdout)
			ab := r.AuthAB
			if ab == nil {
				t.Fatalf("no authAB; stderr:\n%s", stderr)
			}
			want, evidence := a.auth, a.evidence
			if a.pushedAuth != "" && ab.Status == a.pushedAuth {
				want, evidence = a.pushedAuth, a.pushedEvidence
				t.Logf("%s: its login push arrived before the probe ended", name)
			}
			if ab.Status != want {
				t.Errorf("authAB.status %s, want %s", ab.Status, want)
			}
			for _, e := range evidence {
				if !slices.Contains(ab.Evidence, e) {
					t.Errorf("evidence lacks %q", e)
				}
			}
			t.Logf("%s: %s\n%s", name, ab.Status, strings.Join(ab.Evidence, "\n"))
			if len(ab.Identities) != 2 || ab.Identities[0].Identity != record.IdentityUser || string(ab.Identities[0].Isolation) != "none" ||
				ab.Identities[1].Identity != record.IdentityIsolated || string(ab.Identities[1].Isolation) != "env+home" {
				t.Errorf("identities %+v, want the user's (none), then the isolated one (env+home)", ab.Identities)
			}
			for _, m := range clientMethods(t, transcript) {
				if m == "authenticate" || m == "logout" {
					t.Errorf("the probe called %s", m)
				}
			}
			checkGone(t, box, r)
			if left := survivorsUnder(tmp); len(left) > 0 {
				t.Errorf("processes of the isolated identity survived:\n%s", strings.Join(left, "\n"))
			}
			// The user's identity runs with TMPDIR=tmp too, and writes there what it writes into
			// any TMPDIR (claude-agent-acp 0.101.0: cc-socks and claude-0; opencode: opencode);
			// the isolated identity's sandbox is a directory acpprobe-sandbox-* beside it.
			var sandboxes, user []string
			for _, e := range entriesUnder(t, tmp) {
				if first, _, _ := strings.Cut(e, string(filepath.Separator)); strings.HasPrefix(first, "acpprobe-sandbox-") {
					sandboxes = append(sandboxes, e)
				} else if !strings.Contains(e, string(filepath.Separator)) {
					user = append(user, e)
				}
			}
			t.Logf("the user identity's run wrote into its TMPDIR: %q", user)
			if len(sandboxes) > 0 {
				t.Errorf("the isolated identity's sandbox was left behind: %v", sandboxes)
			}
		})
	}
}

// TestIsolateGeminiDoneWhen is issue 14's "done when": `acpprobe probe --isolate --auth-ab --
// gemini --acp` reports, in text, the files gemini wrote, that no browser was opened, that no
// process survived, and an auth status with evidence from both identities.
func TestIsolateGeminiDoneWhen(t *testing.T) {
	requireE2E(t)
	t.Parallel()
	box := newSandbox(t)
	code, stdout, _ := runCLI(t, box, "probe", append([]string{"--isolate", "--auth-ab", "--"}, agentArgv(t, "gemini")...)...)
	check(t, "exit code", code, 4) // auth_required
	for _, re := range []string{
		`(?m)^Side effects$`,
		`(?m)^  isolation: +env\+home$`,
		`(?m)^    created home/\.gemini/installation_id \(file, 36 bytes\)$`,
		`(?m)^    created home/\.gemini/tmp/workspace/chats/session-\S+\.jsonl \(file, \d+ bytes\)$`,
		`(?m)^  browser: +no launch$`,
		`(?m)^  processes: +none survived the teardown$`,
		`(?m)^Authentication, your identity against an empty one \(--auth-ab\)$`,
		`(?m)^  status: +auth_required$`,
		`(?m)^  evidence: +user \(none\): session/new answered an authentication error: -32000 `,
		`(?m)^  evidence: +isolated \(env\+home\): session/new answered an authentication error: -32000 `,
	} {
		if !wrappedText(re).MatchString(stdout) {
			t.Errorf("stdout does not match %s:\n%s", re, stdout)
		}
	}
}

// entriesUnder lists what lies under dir (relative paths).
func entriesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, _ os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

// survivorsUnder lists the live processes whose HOME is under dir (Linux only).
func survivorsUnder(dir string) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	prefix := []byte("HOME=" + dir + "/")
	var left []string
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left = left[:0]
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil {
				continue
			}
			for _, kv := range bytes.Split(env, []byte{0}) {
				if bytes.HasPrefix(kv, prefix) {
					left = append(left, e.Name())
					break
				}
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
	}
}

// clientMethods lists the methods of the client's lines in a transcript.
func clientMethods(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var methods []string
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		var l struct {
			Dir string `json:"dir"`
			Raw string `json:"raw"`
		}
		var m struct {
			Method string `json:"method"`
		}
		if json.Unmarshal(line, &l) == nil && l.Dir == "client" && json.Unmarshal([]byte(l.Raw), &m) == nil && m.Method != "" {
			methods = append(methods, m.Method)
		}
	}
	if len(methods) == 0 {
		t.Errorf("the transcript %s has no client request", path)
	}
	return methods
}
