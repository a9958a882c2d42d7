package acpprobe_test

import (
	"context"
	"fmt"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/report"
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
