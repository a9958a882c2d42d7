package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// interruptAtTeardown launches agents whose teardown begins with interrupt: Ctrl-C arriving
// while check waits for the agent to leave after its stdin closed.
type interruptAtTeardown struct {
	transport.Launcher
	interrupt context.CancelFunc
}

func (l interruptAtTeardown) Launch(ctx context.Context, stderr io.Writer) (transport.Agent, error) {
	a, err := l.Launcher.Launch(ctx, stderr)
	if err != nil {
		return nil, err
	}
	return interruptedAgent{a, l.interrupt}, nil
}

type interruptedAgent struct {
	transport.Agent
	interrupt context.CancelFunc
}

func (a interruptedAgent) Shutdown(ctx context.Context, l transport.Ladder) record.ExitInfo {
	a.interrupt()
	return a.Agent.Shutdown(ctx, l)
}

// TestCheckInterruptedAtTeardown (issue 25, item 4): Ctrl-C while check waits for an agent
// that ignores its stdin's close exits 130, whatever else the report says (an agent that needs
// authentication, a failed verdict), and the cut wait is not judged: no protocol.stdin-exit
// saying the agent ran the whole grace. Before, codex-acp exited 4 (auth_required) or 1, with
// "still running 10000 ms after its stdin closed" after ~100 ms.
func TestCheckInterruptedAtTeardown(t *testing.T) {
	const grace = 10 * time.Second
	for _, c := range []struct {
		name string
		cfg  acptest.Config
	}{
		{"clean", acptest.Config{Persona: "claude"}},
		{"auth required", acptest.Config{Persona: "codex"}},
		{"failed verdict", acptest.Config{Persona: "gemini", Faults: acptest.Faults{GarbageStdout: true}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Faults.IgnoreStdinEOF = true
			ctx, interrupt := context.WithCancel(t.Context())
			defer interrupt()
			target := inProcess(t, c.cfg)
			target.Launcher = interruptAtTeardown{target.Launcher, interrupt}
			target.Grace = grace
			var out bytes.Buffer
			opts := &ProbeOptions{IO: Stdio{Out: &out}, Target: target, Check: &acpprobe.Check{}, JSON: true,
				Report: acpprobe.AnalyzeOptions{Verdict: &acpprobe.Verdict{FailOn: report.TierMandatory}}}
			start := time.Now()
			err := probeRun(ctx, opts)
			if took := time.Since(start); took > grace/2 {
				t.Errorf("the interrupted check took %v: the grace (%v) was not cut", took, grace)
			}
			if code := exitCode(err); code != ExitInterrupted {
				t.Errorf("exit %d (%v), want %d", code, err, ExitInterrupted)
			}
			var r report.Result
			if err := json.Unmarshal(out.Bytes(), &r); err != nil {
				t.Fatalf("stdout is not a result: %v", err)
			}
			if r.Exit == nil || !r.Exit.By.Signalled() {
				t.Fatalf("exit %+v: the agent was meant to be signalled (it ignores its stdin's close)", r.Exit)
			}
			for _, f := range r.Findings {
				if f.ID == "protocol.stdin-exit" {
					t.Errorf("a finding of the interrupted wait: %s", f.Message)
				}
			}
		})
	}
}
