package probe_test

import (
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestFaultSuite tries the probe against every way an agent can misbehave and checks, for
// each: the error class, the end within the budget plus the teardown graces, an empty process
// group afterwards, bounded memory, no panic (a panic fails the test binary).
func TestFaultSuite(t *testing.T) {
	const (
		timeout = 6 * time.Second
		startup = 4 * time.Second
		request = 500 * time.Millisecond
		grace   = 300 * time.Millisecond
	)
	claude := func(f acptest.Faults, s acptest.Stress) acptest.Config {
		return acptest.Config{Persona: "claude", Faults: f, Stress: s}
	}
	cases := []struct {
		name   string
		cfg    acptest.Config
		code   report.ErrorCode // "" = success
		stage  record.Stage
		exitBy record.ExitCause
		check  func(t *testing.T, r *report.Result, frames []jsonrpc.Frame)
		// budget replaces the total budget for floods that take long under -race.
		budget time.Duration
		// maxRecord replaces the record's memory budget.
		maxRecord int64
	}{
		{name: "crash at initialize", cfg: claude(acptest.Faults{ExitBefore: "initialize"}, acptest.Stress{}), code: report.ErrAgentCrashed, stage: record.StageInitialize, exitBy: "self"},
		{name: "crash at session/new", cfg: claude(acptest.Faults{ExitBefore: "session/new"}, acptest.Stress{}), code: report.ErrAgentCrashed, stage: record.StageSessionNew, exitBy: "self"},
		{name: "crash during method detection", cfg: claude(acptest.Faults{ExitBefore: "session/resume"}, acptest.Stress{}), code: report.ErrAgentCrashed, stage: record.StageMethods, exitBy: "self"},
		{name: "hang at initialize", cfg: claude(acptest.Faults{HangOn: "initialize"}, acptest.Stress{}), code: report.ErrInitializeTimeout, stage: record.StageInitialize, exitBy: "sigterm"},
		{name: "hang at session/new", cfg: claude(acptest.Faults{HangOn: "session/new"}, acptest.Stress{}), code: report.ErrSessionNewTimeout, stage: record.StageSessionNew, exitBy: "sigterm"},
		{name: "hang during method detection", cfg: claude(acptest.Faults{HangOn: "session/list"}, acptest.Stress{}), exitBy: "sigterm",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				if r.Methods["session/list"].Support != report.Unknown {
					t.Errorf("session/list = %+v", r.Methods["session/list"])
				}
			}},
		{name: "hang and ignore SIGTERM", cfg: claude(acptest.Faults{HangOn: "session/new"}, acptest.Stress{IgnoreSIGTERM: true}), code: report.ErrSessionNewTimeout, stage: record.StageSessionNew, exitBy: "sigkill"},
		{name: "grandchild keeps stdout open", cfg: claude(acptest.Faults{}, acptest.Stress{Grandchild: true}), exitBy: "stdin",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				if !r.Exit.GroupKilled {
					t.Errorf("exit = %+v, want the leftover grandchild killed", r.Exit)
				}
			}},
		{name: "a daemon that leaves the session", cfg: claude(acptest.Faults{}, acptest.Stress{SetsidDaemon: true}), exitBy: "stdin",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				s := r.Exit.Survivors
				if len(s) != 1 || s[0].Command != "sleep" || !s[0].LeftGroup || !s[0].Killed || r.Exit.GroupKilled {
					t.Fatalf("exit = %+v, want the daemon alone killed and listed", r.Exit)
				}
				if err := syscall.Kill(s[0].PID, 0); err != syscall.ESRCH {
					t.Errorf("daemon %d: kill 0 = %v, want it gone and reaped", s[0].PID, err)
				}
			}},
		{name: "50 MiB of stderr before answering", cfg: claude(acptest.Faults{}, acptest.Stress{StderrFlood: 50 << 20}), exitBy: "stdin",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				if r.StderrBytes != 50<<20 || len(r.StderrTail) != record.DefaultStderrTail {
					t.Errorf("stderr bytes %d tail %d", r.StderrBytes, len(r.StderrTail))
				}
			}},
		{name: "a 5 MiB line", cfg: claude(acptest.Faults{}, acptest.Stress{HugeLine: 5 << 20}), exitBy: "stdin",
			check: func(t *testing.T, r *report.Result, frames []jsonrpc.Frame) {
				if r.Notifications.BySessionUpdate["agent_message_chunk"] != 1 {
					t.Errorf("the 5 MiB notification was not read whole: %+v", r.Notifications)
				}
			}},
		{name: "response with a wrong id", cfg: claude(acptest.Faults{}, acptest.Stress{WrongID: true}), code: report.ErrInitializeTimeout, stage: record.StageInitialize, exitBy: "stdin"},
		{name: "duplicate response", cfg: claude(acptest.Faults{}, acptest.Stress{DuplicateID: true}), exitBy: "stdin"},
		{name: "invalid UTF-8 and NUL bytes", cfg: claude(acptest.Faults{}, acptest.Stress{InvalidBytes: true}), exitBy: "stdin",
			check: func(t *testing.T, _ *report.Result, frames []jsonrpc.Frame) {
				for _, f := range frames {
					if f.Dir == jsonrpc.DirAgent && string(f.Raw) == acptest.InvalidLine {
						return
					}
				}
				t.Error("the invalid line is not in the log byte for byte")
			}},
		{name: "a protocol version the probe cannot speak", cfg: claude(acptest.Faults{AnswerVersion: 3}, acptest.Stress{}), code: report.ErrProtocolMismatch, stage: record.StageInitialize, exitBy: "stdin"},
		{name: "agent to client requests are all refused", cfg: claude(acptest.Faults{ClientRequests: []string{"fs/read_text_file", "fs/write_text_file",
			"terminal/create", "session/request_permission", "elicitation/create"}}, acptest.Stress{}), exitBy: "stdin",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				if len(r.AgentRequests) != 5 {
					t.Errorf("agent requests = %v", r.AgentRequests)
				}
			}},
		{name: "100k notifications", cfg: claude(acptest.Faults{}, acptest.Stress{Notifications: 100_000}), exitBy: "stdin", budget: 90 * time.Second,
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				if r.Notifications.BySessionUpdate["agent_thought_chunk"] != 100_000 {
					t.Errorf("notifications = %+v", r.Notifications.BySessionUpdate)
				}
			}},
		{name: "100k notifications through a 1 MiB record", cfg: claude(acptest.Faults{}, acptest.Stress{Notifications: 100_000}), exitBy: "stdin",
			budget: 90 * time.Second, maxRecord: 1 << 20,
			check: func(t *testing.T, r *report.Result, frames []jsonrpc.Frame) {
				// Every notification is counted, few are kept, and the report says so.
				if r.Notifications.BySessionUpdate["agent_thought_chunk"] != 100_000 {
					t.Errorf("notifications = %+v", r.Notifications.BySessionUpdate)
				}
				var kept int64
				for _, f := range frames {
					if f.Dir != jsonrpc.DirFolded {
						kept += int64(len(f.Raw)) + 256
					}
				}
				if kept > 2<<20 {
					t.Errorf("the record kept %d bytes whole, over twice its 1 MiB budget", kept)
				}
				if c := r.Coverage; c == nil || c.FoldedFrames < 90_000 || c.FoldedBytes < c.FoldedFrames*50 || !strings.Contains(c.Note, "not kept") {
					t.Errorf("coverage = %+v, want most of the flood folded and said", c)
				}
			}},
		{name: "a byte every 10 ms", cfg: acptest.Config{Persona: "minimal", Stress: acptest.Stress{Drip: 10 * time.Millisecond}}, exitBy: "sigterm",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				// The handshake arrives, slowly; method answers that take longer than the
				// request budget are unknown, none is lost or invented.
				if r.ProtocolVersion == nil || r.Auth.Status != report.AuthAuthenticated {
					t.Errorf("handshake not read: %+v", r)
				}
				for m, s := range r.Methods {
					if s.Support == report.Supported {
						t.Errorf("%s = %+v: the minimal persona implements no method", m, s)
					}
				}
			}},
		{name: "stdout closed while the process lives on", cfg: claude(acptest.Faults{}, acptest.Stress{CloseStdoutBefore: "session/new"}), code: report.ErrAgentCrashed, stage: record.StageSessionNew, exitBy: "sigterm",
			check: func(t *testing.T, r *report.Result, _ []jsonrpc.Frame) {
				if !strings.Contains(r.Error.Message, "still running") {
					t.Errorf("message = %q", r.Error.Message)
				}
			}},
		{name: "immediate exit 0", cfg: claude(acptest.Faults{}, acptest.Stress{ExitImmediately: true}), code: report.ErrAgentCrashed, stage: record.StageInitialize, exitBy: "self"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			budget := timeout
			if tc.budget != 0 {
				budget = tc.budget
			}
			r, frames := run(t, tc.cfg, func(o *probe.Options) {
				o.Timeout, o.StartupTimeout, o.RequestTimeout, o.Grace = budget, startup, request, grace
				o.MaxRecord = tc.maxRecord
			})
			elapsed := time.Since(start)
			// The budget plus the teardown ladder (session/close, stdin, SIGTERM, SIGKILL and
			// the drain of a stdout held by a process that left the group), with room for a
			// loaded machine. A hang would be far beyond.
			if limit := budget + 6*grace + 10*time.Second; elapsed > limit {
				t.Errorf("the probe took %s, more than its budget and graces (%s)", elapsed, limit)
			}
			if tc.code == "" {
				if r.Error != nil {
					t.Errorf("error = %+v, want none", r.Error)
				}
			} else if r.Error == nil || r.Error.Code != tc.code || r.Error.Stage != tc.stage {
				t.Errorf("error = %+v, want %s at %s", r.Error, tc.code, tc.stage)
			}
			if r.Exit.By != tc.exitBy {
				t.Errorf("exit = %+v, want by %s", r.Exit, tc.exitBy)
			}
			if tc.check != nil {
				tc.check(t, r, frames)
			}
			var after runtime.MemStats
			frames = nil
			runtime.GC()
			runtime.ReadMemStats(&after)
			// What the probe holds afterwards is its result and log: a stderr flood must not be in
			// it (only the recent bytes are kept).
			if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 256<<20 {
				t.Errorf("heap grew by %d MiB", grown>>20)
			}
		})
	}
}
