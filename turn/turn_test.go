package turn_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/sentinel"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

func TestMain(m *testing.M) {
	sandbox.Init()
	if len(os.Args) > 1 && os.Args[1] == "mcp-sentinel" { // the stdio sentinel the agent starts
		os.Exit(sentinel.Main(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("ACPPROBE_TURN_AGENT") != "" {
		os.Exit(acptestMain())
	}
	os.Exit(m.Run())
}

// An agent no backend profile matches runs no turn: every scenario is recorded as skipped,
// "no backend profile", never guessed at; the handshake still happened, in the sandbox.
func TestNoProfileIsNotExercised(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := jsonrpc.NewLog()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{
			Launcher: transport.Command{Argv: []string{exe}, Env: []string{"ACPPROBE_TURN_AGENT=--persona minimal", "GORACE=atexit_sleep_ms=0"}},
			Log:      log, Timeout: 20 * time.Second, Grace: time.Second,
		},
		Sandbox: sandbox.Options{Parent: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.ProtocolVersion == nil {
		t.Fatalf("no handshake: %+v", r.Error)
	}
	skipped := map[string]string{}
	for _, f := range log.Frames() {
		if p, ok := record.StepSkipped.Decode(f); ok {
			skipped[p.Name] = p.Reason
		}
	}
	for _, s := range record.DefaultScenarios {
		if why := skipped[s.StepName()]; !strings.Contains(why, "no backend profile") {
			t.Errorf("scenario %s: skipped %q, want not exercised for lack of a profile", s, why)
		}
	}
	// The agent ran in the sandbox's workspace, not here.
	if wd, _ := os.Getwd(); r.Agent.Cwd == wd || !strings.Contains(r.Agent.Cwd, "acpprobe-sandbox-") {
		t.Errorf("the agent's cwd %s is not the sandbox's workspace", r.Agent.Cwd)
	}
}
