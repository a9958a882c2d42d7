package acpprobe_test

import (
	"context"
	"fmt"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/report"
	"github.com/acpprobe/acpprobe/transcript"
)

// Probe the built-in reference agent in-process and get the whole report, as
// `acpprobe check --json` prints it. For a real agent, use a
// transport.Command{Argv: []string{"npx", "-y", "@zed-industries/claude-agent-acp"}} launcher.
func ExampleRun() {
	r, err := acpprobe.Run(context.Background(), acpprobe.Options{
		Probe:   probe.Options{Launcher: acptest.Launcher(acptest.Config{Persona: "codex"})},
		Check:   &acpprobe.Check{},
		Analyze: acpprobe.AnalyzeOptions{Verdict: &acpprobe.Verdict{FailOn: report.TierMandatory}},
	})
	if err != nil {
		panic(err) // only unusable options end up here
	}
	fmt.Println("agent:", r.AgentInfo.Name)
	fmt.Println("auth:", r.Auth.Status)
	fmt.Println("session/load:", r.Methods["session/load"].Support)
	for _, f := range r.Findings {
		fmt.Println("finding:", f.Tier, f.ID)
	}
	fmt.Println("vendor auth types:", r.Extensions.UnknownVariants[0].Value)
	fmt.Println("verdict failed:", r.Verdict.Failed)
	// Output:
	// agent: acptest-codex
	// auth: auth_required
	// session/load: supported
	// finding: INFO schema.legacy-field
	// finding: INFO schema.legacy-field
	// finding: INFO schema.unstable
	// vendor auth types: env_var
	// verdict failed: false
}

// Analyze a recorded session offline: a transcript of `acpprobe check` on the reference agent's
// codebuddy persona, read back, derived and judged exactly as the live run was. The same
// function judges a tap's recording of an editor's session, and Live judges one as it is
// recorded.
func ExampleAnalyze() {
	_, frames, err := transcript.ReadFile("testdata/v1/check-codebuddy.ndjson", transcript.ReadOptions{})
	if err != nil {
		panic(err) // a transcript that cannot be read
	}
	r, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{
		Verdict: &acpprobe.Verdict{FailOn: report.TierMandatory},
	})
	if err != nil {
		panic(err) // only unusable options end up here
	}
	fmt.Println("agent:", r.AgentInfo.Name, r.AgentInfo.Version)
	fmt.Println("auth:", r.Auth.Status)
	fmt.Println("findings:", len(r.Findings), "of which MANDATORY:", r.Verdict.Counts[report.TierMandatory])
	for _, k := range r.Extensions.MetaKeys[:2] {
		fmt.Println("vendor key:", k.Key, k.Class)
	}
	fmt.Println("verdict failed:", r.Verdict.Failed)
	// Output:
	// agent: acptest-codebuddy 0.1.0
	// auth: authenticated
	// findings: 2 of which MANDATORY: 0
	// vendor key: codebuddy.ai/agentPhase public
	// vendor key: codebuddy.ai/requestId public
	// verdict failed: false
}
