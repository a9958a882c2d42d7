package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// These tests build a command's options by hand and call its run function: no flag parsing,
// the reference agent in-process.

// counted is a launcher that counts its launches.
type counted struct {
	transport.Launcher
	launches atomic.Int32
}

func (c *counted) Launch(ctx context.Context, stderr io.Writer) (transport.Agent, error) {
	c.launches.Add(1)
	return c.Launcher.Launch(ctx, stderr)
}

func inProcess(t *testing.T, cfg acptest.Config) probe.Options {
	return probe.Options{Launcher: acptest.Launcher(cfg), Cwd: t.TempDir(), Timeout: 30 * time.Second, Grace: 100 * time.Millisecond}
}

func TestProbeRun(t *testing.T) {
	cases := []struct {
		name  string
		cfg   acptest.Config
		check *acpprobe.Check
		code  int
	}{
		{"probe", acptest.Config{Persona: "claude"}, nil, ExitOK},
		{"check", acptest.Config{Persona: "claude"}, &acpprobe.Check{}, ExitOK},
		{"auth required", acptest.Config{Persona: "codex"}, nil, ExitAuth},
		{"crash", acptest.Config{Persona: "claude", Faults: acptest.Faults{ExitBefore: "session/new"}}, nil, ExitNotProbed},
		{"failed verdict", acptest.Config{Persona: "gemini", Faults: acptest.Faults{GarbageStdout: true}}, &acpprobe.Check{}, ExitFindings},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := &ProbeOptions{IO: Stdio{Out: &out}, Target: inProcess(t, c.cfg), Check: c.check, JSON: true}
			if c.check != nil {
				opts.Report.Verdict = &acpprobe.Verdict{FailOn: report.TierMandatory}
			}
			err := probeRun(t.Context(), opts)
			if got := exitCode(err); got != c.code {
				t.Errorf("exit %d (%v), want %d", got, err, c.code)
			}
			var r report.Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("stdout is not a result: %v", err)
			}
			if r.AgentInfo == nil || r.AgentInfo.Name != "acptest-"+c.cfg.Persona {
				t.Errorf("agentInfo %+v, want acptest-%s", r.AgentInfo, c.cfg.Persona)
			}
			if (r.Verdict != nil) != (c.check != nil) {
				t.Errorf("verdict %+v for check %v", r.Verdict, c.check)
			}
		})
	}
}

// TestProbeRunTranscriptNotWritable: a transcript that cannot be created is an output error,
// and the agent is never launched.
func TestProbeRunTranscriptNotWritable(t *testing.T) {
	l := &counted{Launcher: acptest.Launcher(acptest.Config{Persona: "claude"})}
	target := inProcess(t, acptest.Config{})
	target.Launcher = l
	var out bytes.Buffer
	err := probeRun(t.Context(), &ProbeOptions{IO: Stdio{Out: &out}, Target: target,
		Recording: Recording{Transcript: filepath.Join(t.TempDir(), "missing", "t.ndjson")}})
	if exitCode(err) != ExitIO || !strings.HasPrefix(err.Error(), "cannot write the transcript: ") {
		t.Errorf("error %v (exit %d), want a transcript that cannot be written (exit %d)", err, exitCode(err), ExitIO)
	}
	if n := l.launches.Load(); n != 0 || out.Len() != 0 {
		t.Errorf("%d launches and %d bytes of output, want none", n, out.Len())
	}
}

// TestTapRunCatalogue: the tap judges the session with the catalogue it is given.
func TestTapRunCatalogue(t *testing.T) {
	dir := t.TempDir()
	vendor := `{"schema": "acpprobe.extensions/v1", "namespace": "example.org", "name": "Example", "namespaced": true,
  "forms": ["flat"], "source": "a test", "metaKeys": [{"name": "grant", "direction": "client-to-agent", "class": "private",
  "where": ["session/new params._meta"], "description": "A grant only the vendor's own client may send."}]}`
	if err := os.WriteFile(filepath.Join(dir, "example.org.json"), []byte(vendor), 0o644); err != nil {
		t.Fatal(err)
	}
	cat, err := extensions.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	editor := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[],"_meta":{"example.org/grant":"g"}}}
`
	for _, c := range []struct {
		name string
		cat  *extensions.Catalogue
		want bool
	}{{"with the catalogue", cat, true}, {"built-in catalogue", nil, false}} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := tapRun(t.Context(), &TapOptions{IO: Stdio{In: strings.NewReader(editor), Out: &out, Err: &errOut},
				Target: inProcess(t, acptest.Config{Persona: "claude"}), Recording: Recording{NoRedact: true}, Catalogue: c.cat, Check: true})
			if exitCode(err) != ExitOK {
				t.Errorf("exit %d (%v), want the agent's 0", exitCode(err), err)
			}
			if !strings.Contains(out.String(), `"sessionId"`) {
				t.Errorf("the editor did not get the session/new answer: %q", out.String())
			}
			found := strings.Contains(errOut.String(), "acpprobe tap: ADVISORY client.private-key [seq 4 /params/_meta/example.org~1grant]")
			if found != c.want {
				t.Errorf("private key found %v, want %v; stderr:\n%s", found, c.want, errOut.String())
			}
		})
	}
}

// TestTapTranscriptAnalyzed (issue 25, item 6): analyze --json of a tap transcript names the
// agent as the tap did (command, cwd, the time it started) and is a result that matches the
// result schema. Before, the tap's spawn event had only the argv: command, cwd and probedAt
// were empty, and the empty probedAt failed the schema (not a date-time).
func TestTapTranscriptAnalyzed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tap.ndjson")
	target := inProcess(t, acptest.Config{Persona: "claude"})
	target.Command = "acpprobe agent --persona claude"
	editor := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}
`
	before := time.Now().UTC()
	var agentOut bytes.Buffer
	if err := tapRun(t.Context(), &TapOptions{IO: Stdio{In: strings.NewReader(editor), Out: &agentOut, Err: io.Discard},
		Target: target, Recording: Recording{Transcript: file}}); exitCode(err) != ExitOK {
		t.Fatalf("tap: exit %d (%v)", exitCode(err), err)
	}
	var out bytes.Buffer
	aerr := analyzeRun(t.Context(), &AnalyzeOptions{IO: Stdio{Out: &out}, Transcript: file, JSON: true})
	if err := report.ValidateResult(out.Bytes()); err != nil {
		t.Fatalf("analyze --json of a tap transcript (exit %d, %v): %v", exitCode(aerr), aerr, err)
	}
	var r report.Result
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if r.Agent.Command != target.Command || r.Agent.Cwd != target.Cwd {
		t.Errorf("agent command %q, cwd %q; want %q, %q", r.Agent.Command, r.Agent.Cwd, target.Command, target.Cwd)
	}
	at, perr := time.Parse(time.RFC3339Nano, r.Agent.ProbedAt)
	if perr != nil || at.Before(before.Add(-time.Second)) || at.After(time.Now().Add(time.Second)) {
		t.Errorf("probedAt %q (%v): want the time the tap started, about %v", r.Agent.ProbedAt, perr, before)
	}
	// The record itself names the agent, as a probe's does: the library's Analyze reads no
	// header (analyze falls back on it for tap transcripts recorded before).
	_, frames, err := readTranscript(file)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := acpprobe.Analyze(t.Context(), frames, acpprobe.AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lib.Agent.Command != target.Command || lib.Agent.Cwd != target.Cwd || lib.Agent.ProbedAt != r.Agent.ProbedAt {
		t.Errorf("the record's agent: %+v; want the command, cwd and probedAt analyze printed", lib.Agent)
	}
}
