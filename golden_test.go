package acpprobe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/transcript"
)

var update = flag.Bool("update", false, "rewrite the golden transcripts")

// TestGoldenTranscripts records a check of each reference persona and compares the transcript,
// with times blanked, with testdata/golden/<persona>.ndjson (-update rewrites them). A
// transcript must also read back into the same frames and analyze into the same result.
func TestGoldenTranscripts(t *testing.T) {
	// The transcripts hold clientInfo.version: pin it, whichever build runs the test.
	defer func(v string) { probe.Version = v }(probe.Version)
	probe.Version = "0.1.0-dev"
	for _, persona := range acptest.PersonaNames() {
		t.Run(persona, func(t *testing.T) {
			log := jsonrpc.NewLog()
			var buf bytes.Buffer
			tw, err := transcript.NewWriter(&buf, transcript.Header{Version: "golden", Tool: "check", Command: "acpprobe agent --persona " + persona,
				Argv: []string{"pipe:acptest-" + persona}, Cwd: "/work", Start: "2026-01-01T00:00:00Z", Redacted: true})
			if err != nil {
				t.Fatal(err)
			}
			log.Observe(tw.Frame)
			live, err := acpprobe.Run(context.Background(), acpprobe.Options{
				Probe: probe.Options{Launcher: acptest.Launcher(acptest.Config{Persona: persona}), Cwd: "/work", Log: log},
				Check: &acpprobe.Check{PromptShapes: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			got := normalize(buf.Bytes())
			path := filepath.Join("testdata", "golden", persona+".ndjson")
			if *update {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("transcript differs from %s (-update if intended):\n%s", path, got)
			}
			_, frames, err := transcript.Read(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.Bytes())
			}
			analyzed, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(analyzed)
			first, _ := json.Marshal(live)
			if !bytes.Equal(again, first) {
				t.Errorf("the transcript analyzes to a different result:\n%s\n%s", again, first)
			}
		})
	}
}

var (
	volatile  = regexp.MustCompile(`"(seq|t|afterStdinCloseMs)":[0-9.e+-]+|"probedAt":"[^"]*"`)
	exitEvent = regexp.MustCompile(`("kind":"exit","data":).*}\n$`)
	// leftBudget is the budget of an extra connection: what the run's budget left it.
	leftBudget = regexp.MustCompile(`"timeoutMs":[0-9.]+(,.*"purpose":")`)
)

// normalize blanks times and sequence numbers and groups the lines by direction: within a
// direction the order is fixed, across directions it depends on scheduling (requests are
// pipelined while answers come back). It also blanks how the agent of an extra connection
// ended (every exit event after the first): that connection is ended at once, so whether the
// agent left on EOF or on the signal is a race, and it is not judged. And the budget of an extra
// connection, which is what the run's budget had left when it opened.
func normalize(b []byte) []byte {
	b = volatile.ReplaceAllFunc(b, func(m []byte) []byte {
		key, _, _ := bytes.Cut(m, []byte(":"))
		return append(append([]byte{}, key...), `:0`...)
	})
	lines := bytes.SplitAfter(b, []byte("\n"))
	exits := 0
	for i, l := range lines {
		lines[i] = leftBudget.ReplaceAll(l, []byte(`"timeoutMs":"(what the run left: varies)"${1}`))
		l = lines[i]
		if exitEvent.Match(l) {
			if exits++; exits > 1 {
				lines[i] = exitEvent.ReplaceAll(l, []byte(`${1}"(ended at once: varies)"}`+"\n"))
			}
		}
	}
	var out []byte
	for _, dir := range []string{"", `"dir":"client"`, `"dir":"agent"`, `"dir":"stderr"`, `"dir":"event"`} {
		for _, l := range lines {
			isDir := bytes.Contains(l, []byte(`"dir":"`))
			if (dir == "" && !isDir) || (dir != "" && bytes.Contains(l, []byte(dir))) {
				out = append(out, l...)
			}
		}
	}
	return out
}
