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
	bin  string
	args []string
	// writes are the files the agent creates in its sandbox (patterns of their paths as the
	// report shows them): each must be there, and nothing else may be but maybe.
	writes []string
	// maybe are files the agent may or may not write, depending on timing.
	maybe []string
	// auth is the auth oracle's answer; evidence lines it must give (one from each identity
	// at least).
	auth     report.AuthClass
	evidence []string
}

// isolatedAgents are the pinned agents: what each writes when probed (initialize, session/new,
// method detection) in a fresh HOME, and how the oracle classifies it without credentials.
var isolatedAgents = map[string]isolated{
	// Claude Code (bundled by the adapter) writes its config, a backup of it and the log of the
	// `npm root --global` it runs on session/new; and the telemetry it could not send when it
	// tried before the teardown's SIGTERM (missing in one of seven runs on 2026-11-30).
	// session/new works with an empty identity and no auth method is advertised: "no auth
	// needed" is all a probe that sends no prompt can say, and the evidence says so.
	"claude-agent-acp": {
		writes: []string{`home/\.claude/\.claude\.json`, `home/\.claude/backups/\.claude\.json\.backup\.\d+`,
			`home/\.npm/_logs/[0-9TZ_-]+-debug-0\.log`},
		maybe: []string{`home/\.claude/telemetry/1p_failed_events\.[0-9a-f.-]+\.json`},
		auth:  report.AuthClassNoAuthNeeded,
		evidence: []string{"user (none): session/new succeeded", "isolated (env+home): session/new succeeded",
			"session/new works with an empty identity and the agent advertises no login; no prompt was sent, so a login the agent does not advertise would not show"},
	},
	// codex lays out its home: sqlite databases with their WAL files, an installation id, the
	// bundled system skills, and the arg0 links to its own binary (CODEX_HOME is in the
	// sandbox HOME, whose TMPDIR is a sibling, so it creates them).
	"codex-acp": {
		writes: []string{`home/\.codex/(goals|logs|memories|state)_\d+\.sqlite(-shm|-wal)?`, `home/\.codex/installation_id`,
			`home/\.codex/skills/\.system/.+`, `home/\.codex/tmp/arg0/codex-arg0\w+/(\.lock|apply_patch|applypatch|codex-execve-wrapper|codex-linux-sandbox)`},
		auth: report.AuthClassRequired,
		evidence: []string{"user (none): session/new answered an authentication error: -32000 Authentication required",
			"isolated (env+home): session/new answered an authentication error: -32000 Authentication required",
			"isolated (env+home): authMethods chatgpt (agent), codex-api-key (env_var), openai-api-key (env_var)"},
	},
	// gemini-cli records the project and the chat of a session that never started.
	"gemini": {
		args: []string{"--acp"},
		writes: []string{`home/\.gemini/installation_id`, `home/\.gemini/projects\.json`, `home/\.gemini/(history|tmp)/workspace/\.project_root`,
			`home/\.gemini/tmp/workspace/chats/session-[0-9T-]+-[0-9a-f]+\.jsonl`},
		auth: report.AuthClassRequired,
		evidence: []string{"user (none): session/new answered an authentication error: -32000 Gemini API key is missing or not configured.",
			"isolated (env+home): session/new answered an authentication error: -32000 Gemini API key is missing or not configured."},
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
			argv := append([]string{"--json", "--isolate", "--keep-sandbox", kept, "--", agentBin(t, name)}, a.args...)
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
			// group) was killed; it is reported, and nothing runs now.
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
// truthful answers are auth_required for codex and gemini, and for Claude, whose session/new
// works without any login, what a probe without a prompt can say. Neither run logs in; the
// isolated one leaves nothing behind.
func TestIsolateAuthAB(t *testing.T) {
	requireE2E(t)
	for name, a := range isolatedAgents {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tmp := t.TempDir() // where the isolated identity's sandbox goes
			box := newSandbox(t, "TMPDIR="+tmp)
			transcript := filepath.Join(t.TempDir(), "probe.ndjson")
			_, stdout, stderr := runCLI(t, box, "probe", append([]string{"--json", "--auth-ab", "--transcript", transcript, "--", agentBin(t, name)}, a.args...)...)
			r := resultDoc(t, stdout)
			ab := r.AuthAB
			if ab == nil {
				t.Fatalf("no authAB; stderr:\n%s", stderr)
			}
			if ab.Status != a.auth {
				t.Errorf("authAB.status %s, want %s", ab.Status, a.auth)
			}
			for _, e := range a.evidence {
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
			if got := entriesUnder(t, tmp); len(got) > 0 {
				t.Errorf("the isolated identity's sandbox was left behind: %v", got)
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
	code, stdout, _ := runCLI(t, box, "probe", "--isolate", "--auth-ab", "--", agentBin(t, "gemini"), "--acp")
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
		if !regexp.MustCompile(re).MatchString(stdout) {
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
