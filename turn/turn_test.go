package turn_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
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

// An agent no backend profile matches, and that offers no gateway login, runs on the auto
// route: every dialect on one port, every variable the profiles know. An agent that still never
// calls the model has every scenario not run, and the reason names the route and how to choose
// another; the handshake happened, in the sandbox.
func TestNoProfileRunsOnAuto(t *testing.T) {
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
		Scenarios: []record.Scenario{record.ScenarioCompletion, record.ScenarioPermission},
		Sandbox:   sandbox.Options{Parent: t.TempDir()},
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.ProtocolVersion == nil {
		t.Fatalf("no handshake: %+v", r.Error)
	}
	if r.Route == nil || r.Route.Kind != record.RouteAuto || len(r.Route.Dialects) != 0 {
		t.Fatalf("route %+v, want auto, and no dialect used", r.Route)
	}
	if !slices.ContainsFunc(r.Route.Env, func(e record.EnvSetting) bool { return e.Name == "ANTHROPIC_BASE_URL" }) {
		t.Errorf("route env %+v, want every profile's base-URL variable (ANTHROPIC_BASE_URL among them)", r.Route.Env)
	}
	for _, s := range []record.Scenario{record.ScenarioCompletion, record.ScenarioPermission} {
		tr := turnOf(t, r, s)
		if tr.Outcome != report.TurnNotRun || !strings.Contains(tr.Reason, "never called the model emulator in this run: the auto route") || !strings.Contains(tr.Reason, "--backend") {
			t.Errorf("scenario %s: %s %q, want not run: the auto route did not take, and how to choose another", s, tr.Outcome, tr.Reason)
		}
	}
	// The agent ran in the sandbox's workspace, not here.
	if wd, _ := os.Getwd(); r.Agent.Cwd == wd || !strings.Contains(r.Agent.Cwd, "acpprobe-sandbox-") {
		t.Errorf("the agent's cwd %s is not the sandbox's workspace", r.Agent.Cwd)
	}
}

// The side effects of a turn count from one inventory taken before the agent first ran in the
// sandbox: the route's first handshake (which learns the agent's name) is an agent process
// too, and what it wrote is reported; what the backend profile's setup wrote is acpprobe's,
// not the agent's, and is not.
func TestSideEffectsFromBeforeTheFirstHandshake(t *testing.T) {
	// The reference agent's profile, with a file of its own for the setup to write.
	raw, err := os.ReadFile("../emulator/profiles/acptest-model.json")
	if err != nil {
		t.Fatal(err)
	}
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	p["files"] = []map[string]string{{"path": ".acptest-profile/settings.json", "content": "{}"}}
	dir := t.TempDir()
	if raw, err = json.Marshal(p); err == nil {
		err = os.WriteFile(filepath.Join(dir, "acptest-model.json"), raw, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := emulator.LoadProfilesDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{
			Launcher: transport.Command{Argv: []string{exe}, Env: []string{"ACPPROBE_TURN_AGENT=--persona model --side-effects", "GORACE=atexit_sleep_ms=0"}},
			Timeout:  60 * time.Second, Grace: time.Second,
		},
		Scenarios: []record.Scenario{record.ScenarioCompletion}, Profiles: profiles,
		Sandbox: sandbox.Options{Parent: t.TempDir()}, TurnTimeout: 20 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	se := r.SideEffects
	if se == nil || se.Files == nil || r.Route == nil {
		t.Fatalf("sideEffects %+v, route %+v", se, r.Route)
	}
	if !slices.Contains(r.Route.Files, "~/.acptest-profile/settings.json") {
		t.Fatalf("route files %v, want the profile's own", r.Route.Files)
	}
	var got []string
	for _, c := range se.Files.Changes {
		got = append(got, c.Change+" "+c.Path)
	}
	for _, want := range []string{"created home/.acptest/state.json", "created home/.config/acptest/config.json", "created home/.acptest-unlisted/cache.db"} {
		if !slices.Contains(got, want) {
			t.Errorf("side effects %q lack %q", got, want)
		}
	}
	for _, g := range got {
		if strings.Contains(g, ".acptest-profile") {
			t.Errorf("the profile's own file is reported as the agent's: %q", g)
		}
	}
}
