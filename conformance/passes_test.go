package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// TestChecksDeclaredOnce: every check is declared by exactly one pass, completely, and the
// check list and Lookup are built from those declarations.
func TestChecksDeclaredOnce(t *testing.T) {
	owner := map[string]string{}
	n := 0
	for _, p := range passes {
		if p.name == "" || p.scope == 0 || p.scope&^anyScope != 0 || len(p.checks) == 0 {
			t.Errorf("pass %q: incomplete declaration (scope %b, %d checks)", p.name, p.scope, len(p.checks))
		}
		for _, c := range p.checks {
			n++
			if prev, dup := owner[c.ID]; dup {
				t.Errorf("%s is declared by both %q and %q", c.ID, prev, p.name)
			}
			owner[c.ID] = p.name
			if c.ID == "" || c.Title == "" || c.SpecRef == "" || !slices.Contains(report.Tiers, c.Tier) {
				t.Errorf("incomplete check %+v", *c)
			}
			if c.Side != SideAgent && c.Side != SideClient {
				t.Errorf("%s: side %q", c.ID, c.Side)
			}
			if got, ok := Lookup(c.ID); !ok || got != *c {
				t.Errorf("Lookup(%s) = %+v, %v", c.ID, got, ok)
			}
		}
	}
	if got := len(Checks()); got != n || n != len(owner) {
		t.Errorf("Checks() has %d checks, the passes declare %d (%d distinct)", got, n, len(owner))
	}
	if _, ok := Lookup("client.no-such-check"); ok {
		t.Error("Lookup found an undeclared id")
	}
}

// TestPassesReportOnlyTheirChecks runs each pass alone over every scenario: a pass reports only
// the checks it declares (so the per-check bound, kept per pass, holds).
func TestPassesReportOnlyTheirChecks(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.txtar")
	for _, file := range files {
		facts, _, _ := loadScenario(t, file)
		in := &inputs{ctx: context.Background(), Facts: facts}
		for _, p := range passes {
			var out findings
			p.run(in, &out)
			for _, f := range out.list {
				if !slices.ContainsFunc(p.checks, func(c *Check) bool { return c.ID == f.ID }) {
					t.Errorf("%s: pass %q reported %s, which it does not declare", file, p.name, f.ID)
				}
			}
		}
	}
}

// TestPassesDoNotWriteTheResult: evaluating leaves the derived result as it was.
func TestPassesDoNotWriteTheResult(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.txtar")
	for _, file := range files {
		facts, _, _ := loadScenario(t, file)
		before := marshal(t, facts.Result)
		Evaluate(context.Background(), facts)
		if after := marshal(t, facts.Result); after != before {
			t.Errorf("%s: Evaluate changed the result:\n%s\n%s", file, before, after)
		}
	}
}

// placesOf lists each finding's check, tier, line and pointer.
func placesOf(fs []report.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%s %s %d %s\n", f.ID, f.Tier, f.Seq, f.Pointer)
	}
	return b.String()
}

func marshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTapScope evaluates every scenario twice, as a session acpprobe drove and as the same
// frames recorded by acpprobe tap: the tap gives exactly the findings of the checks that judge
// tapped sessions (Check.InTap), and none of the others. (A scenario recorded by a tap is
// evaluated twice as a tap.)
func TestTapScope(t *testing.T) {
	files, _ := filepath.Glob("testdata/scenarios/*.txtar")
	dropped := 0
	for _, file := range files {
		facts, _, conns := loadScenario(t, file)
		tapFacts := factsOf(t, record.Split(asTap(t, conns.All)), derive.Options{})
		if !tapFacts.Main.IsTap() {
			t.Fatalf("%s: the record is not marked as a tap", file)
		}
		// A scenario recorded by a tap stays one: all its findings must be of InTap checks.
		driven := Evaluate(context.Background(), facts)
		tap := Evaluate(context.Background(), tapFacts)
		var want []report.Finding
		for _, f := range driven.Findings {
			if c, _ := Lookup(f.ID); c.InTap() {
				want = append(want, f)
				continue
			}
			dropped++
			// A finding folded into this one (mergeOverlaps) stands alone in a tap.
			var ev struct{ Related []related }
			_ = json.Unmarshal(f.Evidence, &ev)
			for _, rel := range ev.Related {
				if c, _ := Lookup(rel.ID); c.InTap() {
					want = append(want, report.Finding{ID: rel.ID, Tier: rel.Tier, Seq: f.Seq, Pointer: rel.Pointer})
				}
			}
		}
		// The words may differ by scope (protocol.stderr-volume says which session it was).
		if got, want := placesOf(tap.Findings), placesOf(sortFindings(facts.Main, want)); got != want {
			t.Errorf("%s as a tap:\n got %s\nwant %s", file, got, want)
		}
	}
	// The scenarios of the capability-truth, active-step, prompt and --deep checks.
	if dropped < 15 {
		t.Errorf("only %d findings of driven-only checks in all scenarios: the test shows little", dropped)
	}
	for id, inTap := range map[string]bool{
		"capability.unadvertised-method": false, "capability.advertised-unsupported": false, "capability.legacy-method": false,
		"protocol.version-negotiation": false, "protocol.unknown-method-request": false, "prompt.shape-accepted": false,
		"client.private-key": true, "client.unknown-method": true, "framing.bom": true, "extensions.private-key": true, "schema.invalid": true,
	} {
		if c, ok := Lookup(id); !ok || c.InTap() != inTap {
			t.Errorf("%s: InTap() = %v, want %v", id, c.InTap(), inTap)
		}
	}
}

// TestStderrVolumeSaysWhichSession: the stderr finding names the session it counted, a probe's
// short one or a whole editor session seen by the tap.
func TestStderrVolumeSaysWhichSession(t *testing.T) {
	facts, _, conns := loadScenario(t, "testdata/scenarios/protocol-stderr-volume.txtar")
	for _, c := range []struct {
		facts *derive.Facts
		want  string
	}{
		{facts, "100000 bytes of stderr during a session acpprobe drove (handshake, method detection and its checks, no prompt turn)"},
		{factsOf(t, record.Split(asTap(t, conns.All)), derive.Options{}), "100000 bytes of stderr during the session between the editor and the agent"},
	} {
		out := Evaluate(context.Background(), c.facts)
		if len(out.Findings) != 1 || out.Findings[0].Message != c.want {
			t.Errorf("tap %v: %+v, want the message %q", c.facts.Main.IsTap(), out.Findings, c.want)
		}
	}
}

// TestOneLineOneFinding: a line that breaks two rules for one reason (codex answers a
// notification with an error without an id) gives the more specific finding, with the other
// one's message as related evidence.
func TestOneLineOneFinding(t *testing.T) {
	facts, _, _ := loadScenario(t, "testdata/scenarios/protocol-notification-answered.txtar")
	out := Evaluate(context.Background(), facts)
	if len(out.Findings) != 1 || out.Findings[0].ID != "protocol.notification-answered" {
		t.Fatalf("findings %+v, want protocol.notification-answered alone", out.Findings)
	}
	want := `{"related":[{"id":"envelope.invalid-message","tier":"MANDATORY","pointer":"","message":"a response (result or error) without an id"}]}`
	if got := string(out.Findings[0].Evidence); got != want {
		t.Errorf("evidence %s, want %s", got, want)
	}
}

// TestPerCheckBoundCountsTheRest: a check lists at most maxPerCheck findings; the last one
// listed counts the rest as data (Finding.More), its message as the check wrote it.
func TestPerCheckBoundCountsTheRest(t *testing.T) {
	var out findings
	for i := range maxPerCheck + 3 {
		out.add(framingNonJSON, int64(i+1), "", fmt.Sprintf("line %d", i+1), nil)
	}
	if len(out.list) != maxPerCheck {
		t.Fatalf("%d findings listed, want %d", len(out.list), maxPerCheck)
	}
	last := out.list[maxPerCheck-1]
	if last.More != 3 || last.Message != fmt.Sprintf("line %d", maxPerCheck) || out.list[0].More != 0 {
		t.Errorf("last finding %+v, first %+v: want the last to count 3 more and keep its message", last, out.list[0])
	}
	if got := last.Text(); got != fmt.Sprintf("line %d (and 3 more like this)", maxPerCheck) {
		t.Errorf("Text() = %q", got)
	}
}
