package acptest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/transport"
)

// agentProcess launches this test binary as `acpprobe agent` with cfg's flags, in m's
// environment (as the lead's CLI runs it: a child process with the profile's env).
func agentProcess(t *testing.T, m *model, cfg acptest.Config) transport.Command {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clone(m.env), asAgent+"=1", "GORACE=atexit_sleep_ms=0")
	return transport.Command{Argv: append([]string{exe}, cfg.Args()...), Env: env}
}

// groupSize counts the live processes of process group pgid.
func groupSize(t *testing.T, pgid int) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …: comm may hold spaces, so read after its ")".
		fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(fields) > 2 && fields[0] != "Z" && fields[2] == strconv.Itoa(pgid) {
			n++
		}
	}
	return n
}

// The continuity check with real processes: a turn in one agent process, then a
// fresh process in the same HOME loads the session (through the file store) five times,
// each time with a stdio MCP server, and closes it. The process group does not grow;
// with LeakOnLoad it grows by one process per load.
func TestModelProcessesOverLoadClose(t *testing.T) {
	for _, leak := range []bool{false, true} {
		name := map[bool]string{false: "passing", true: "LeakOnLoad"}[leak]
		t.Run(name, func(t *testing.T) {
			m := newModel(t, emulator.WriteFile("out.txt", "x", "done"))
			first := connect(t, agentProcess(t, m, m.config(acptest.ModelFaults{})), "allow")
			sid := first.newSession(m.cwd)
			if got := first.stopReason(sid, text("write the file")); got != "end_turn" {
				t.Fatalf("stopReason %q", got)
			}
			first.stop()

			c := connect(t, agentProcess(t, m, m.config(acptest.ModelFaults{LeakOnLoad: leak})), "allow")
			exe, _ := os.Executable()
			server := map[string]any{"name": "stdio", "command": exe, "args": []string{},
				"env": []map[string]string{{"name": asMCP, "value": "stdio"}, noRaceSleep}}
			base := groupSize(t, c.agent.PID())
			for i := 1; i <= 5; i++ {
				c.result(acp.MethodSessionLoad, map[string]any{"sessionId": sid, "cwd": m.cwd, "mcpServers": []any{server}})
				if got := kinds(c.updates(sid, 0)); len(got) != 4*i || got[1] != "tool_call" {
					t.Fatalf("load %d replayed %v", i, got)
				}
				leaked := 0
				if leak {
					leaked = i
				}
				// Loaded: the MCP server runs; closed: it is gone.
				if got := groupSize(t, c.agent.PID()); got != base+1+leaked {
					t.Fatalf("after load %d: %d processes in the agent's group, want %d; %s", i, got, base+1+leaked, c.agent.StderrTail())
				}
				c.result(acp.MethodSessionClose, map[string]any{"sessionId": sid})
				if got := groupSize(t, c.agent.PID()); got != base+leaked {
					t.Fatalf("after close %d: %d processes in the agent's group, want %d", i, got, base+leaked)
				}
			}
		})
	}
}
