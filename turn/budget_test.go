package turn_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
	"github.com/acpprobe/acpprobe/turn"
)

// runBudgeted runs every default scenario against the model persona with faults, under a whole
// budget, and returns the report and how long the run took.
func runBudgeted(t *testing.T, budget time.Duration, faults ...string) (*report.Result, time.Duration) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"--persona", "model"}, faults...)
	start := time.Now()
	r, err := turn.Run(context.Background(), turn.Options{
		Probe: probe.Options{
			Launcher: transport.Command{Argv: []string{exe}, Env: []string{"ACPPROBE_TURN_AGENT=" + strings.Join(args, " "), "GORACE=atexit_sleep_ms=0"}},
			Grace:    500 * time.Millisecond,
		},
		Sandbox:     sandbox.Options{Parent: t.TempDir()},
		TurnTimeout: time.Second,
		Budget:      budget,
	})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	validate(t, r)
	return r, took
}

// everyScenario fails the test unless each default scenario is in the report, with a reason
// when it did not run.
func everyScenario(t *testing.T, r *report.Result) {
	t.Helper()
	for _, s := range record.DefaultScenarios {
		tr := turnOf(t, r, s)
		if tr.Outcome == report.TurnNotRun && tr.Reason == "" {
			t.Errorf("%s: not run without a reason", s)
		}
	}
}

// TestBudgetBoundsTheWholeRun (issue 24): an agent that never answers a prompt, even after
// session/cancel, under a budget of 5 s with turns of 1 s. The run ends within the budget and
// the graces of its teardowns, every scenario is in the report (those the budget left no room
// for not run, saying so), and the unanswered prompt is a MANDATORY finding. Before, the budget
// was silently raised to the startup budget + 3 x scenarios x --turn-timeout (74 s for
// --timeout 20s --turn-timeout 3s), and the report said "pass": the unanswered prompt read as a
// route that did not take effect.
func TestBudgetBoundsTheWholeRun(t *testing.T) {
	const budget = 5 * time.Second
	r, took := runBudgeted(t, budget, "--hang-on", "session/prompt")
	if took > budget+5*time.Second {
		t.Errorf("the run took %v with a budget of %v", took, budget)
	}
	everyScenario(t, r)
	if tr := turnOf(t, r, record.ScenarioCompletion); tr.Outcome != report.TurnFailed {
		t.Errorf("completion: %s (%s), want failed: the agent kept its prompt", tr.Outcome, tr.Reason)
	}
	if ids := findingIDs(r); !slices.Contains(ids, "turn.prompt-unanswered") {
		t.Errorf("findings %v, want turn.prompt-unanswered", ids)
	}
	spent := slices.ContainsFunc(r.Turns, func(tr report.Turn) bool {
		return tr.Outcome == report.TurnNotRun && strings.Contains(tr.Reason, "budget (--timeout) was spent")
	})
	if !spent {
		t.Errorf("no scenario says the budget was spent: %+v", r.Turns)
	}
}

// TestCrashMidScenario (issue 24): an agent that exits on its first prompt. The scenarios the
// main connection had not reached yet are not run because the agent had exited, not missing
// from the report (the engine stopped its steps without a word).
func TestCrashMidScenario(t *testing.T) {
	r, _ := runBudgeted(t, 60*time.Second, "--exit-before", "session/prompt")
	everyScenario(t, r)
	gone := 0
	for _, tr := range r.Turns {
		if tr.Outcome == report.TurnNotRun && strings.Contains(tr.Reason, "exited") {
			gone++
		}
	}
	if gone < 2 {
		t.Errorf("%d scenarios not run because the agent exited, want every one after the crash: %+v", gone, r.Turns)
	}
}
