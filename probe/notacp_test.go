package probe_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transport"
)

// TestNotAnACPAgent (issue 25, item 8): a program whose stdout is plainly not JSON-RPC ends the
// probe early, and the error says it is not an ACP agent. yes writes "y" lines for ever:
// before, the probe waited the whole startup budget (20 s by default, 368 MB of record) and
// said only initialize_timeout; cat echoes acpprobe's own messages, and its echo of acpprobe's
// refusal was reported as the agent's error (unknown: -32601 ... grants no client capability).
func TestNotAnACPAgent(t *testing.T) {
	const budget = 20 * time.Second
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"yes"}, "wrote 1000 lines on stdout and not one JSON-RPC message: not an ACP agent"},
		{[]string{"cat"}, "the program echoes the client's messages"},
	} {
		t.Run(c.argv[0], func(t *testing.T) {
			path, err := exec.LookPath(c.argv[0])
			if err != nil {
				t.Skipf("no %s here", c.argv[0])
			}
			start := time.Now()
			r, err := driveAndDerive(context.Background(), probe.Options{
				Launcher: transport.Command{Argv: append([]string{path}, c.argv[1:]...)},
				Cwd:      t.TempDir(), StartupTimeout: budget, Timeout: 2 * budget, Grace: time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took > budget/4 {
				t.Errorf("the probe took %v: it waited on the startup budget (%v)", took, budget)
			}
			if r.Error == nil || r.Error.Code != report.ErrProtocolMismatch || r.Error.Stage != record.StageInitialize ||
				!strings.Contains(r.Error.Message, c.want) || r.Error.AgentError != nil {
				t.Errorf("error %+v, want protocol_mismatch at initialize saying %q, and no agent error", r.Error, c.want)
			}
		})
	}
}

// TestNotJSONRPCLinesIsTheBound: an agent that writes NotJSONRPCLines-1 lines of banner on
// stdout before its first message is probed as usual; one more line and it is not an agent.
func TestNotJSONRPCLinesIsTheBound(t *testing.T) {
	for _, c := range []struct {
		lines int
		code  report.ErrorCode
	}{{probe.NotJSONRPCLines - 1, ""}, {probe.NotJSONRPCLines, report.ErrProtocolMismatch}} {
		agent := agentProcess(t, acptest.Config{Persona: "gemini"})
		banner := fmt.Sprintf(`yes "a banner, not JSON" | head -n %d; exec "$0" "$@"`, c.lines)
		agent.Argv = append([]string{"/bin/sh", "-c", banner}, agent.Argv...)
		r, err := driveAndDerive(context.Background(), probe.Options{Launcher: agent, Cwd: t.TempDir(), SkipMethods: true, Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		got := report.ErrorCode("")
		if r.Error != nil {
			got = r.Error.Code
		}
		if got != c.code {
			t.Errorf("%d lines of banner: error %+v, want %q", c.lines, r.Error, c.code)
		}
	}
}
