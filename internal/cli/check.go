package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/internal/render"
)

func runCheck(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("check")
	var pf probeFlags
	pf.register(fs, true)
	list := fs.Bool("list", false, "list the checks (id, tier, title) and exit")
	schemaName := fs.String("schema", "", "schema set: "+strings.Join(schema.Names(), ", ")+" (default v1; v2 when protocol 2 was negotiated)")
	deep := fs.Bool("deep", false, fmt.Sprintf("also open a second, short connection asking for protocolVersion %d to check version negotiation", acpprobe.DeepVersion))
	shapes := fs.Bool("prompt-shapes", false, "send session/prompt shapes no agent can start a turn on and infer the accepted content blocks")
	allowPrompt := fs.Bool("allow-prompt", false, "send one valid text prompt and cancel it at once (MAY SPEND MODEL TOKENS)")
	failOn := fs.String("fail-on", "mandatory", "exit 1 when a finding not in the baseline is at or above this tier: mandatory, capability, advisory, info")
	baselinePath := fs.String("baseline", "", "file of known finding ids with a reason each (JSON {\"known\":[{\"id\",\"reason\"}]} or lines \"id reason\")")
	if err := parseFlags(fs, args, "acpprobe check [flags] (AGENT-ID | -- <agent command> [args...])", stdio.Out); err != nil {
		return failUsage(stdio, "check", err)
	}
	if *list {
		return listChecks(pf.json, stdio)
	}
	tier, err := conformance.ParseTier(*failOn)
	if err != nil {
		return failUsage(stdio, "check", usagef("--fail-on: %v", err))
	}
	if *schemaName != "" {
		if _, err := schema.Load(*schemaName); err != nil {
			return failUsage(stdio, "check", usagef("--schema: %v", err))
		}
	}
	spec := &checkSpec{schema: *schemaName, failOn: tier, baselinePath: *baselinePath,
		active: &acpprobe.Check{Deep: *deep, PromptShapes: *shapes, AllowPrompt: *allowPrompt}}
	if *baselinePath != "" {
		if spec.baseline, err = conformance.LoadBaseline(*baselinePath); err != nil {
			return failUsage(stdio, "check", usagef("--baseline: %v", err))
		}
	}
	opts, err := pf.targetOptions(fs, args)
	if err != nil {
		return targetFailed(stdio, "check", err, pf.json)
	}
	return runAndReport(ctx, opts, &pf, stdio, spec)
}

func listChecks(asJSON bool, stdio Stdio) int {
	cs := conformance.Checks()
	if asJSON {
		if err := render.JSON(stdio.Out, cs); err != nil {
			return ExitNotProbed
		}
		return ExitOK
	}
	tw := tabwriter.NewWriter(stdio.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIER\tTITLE")
	for _, c := range cs {
		title := c.Title
		if c.Active {
			title += " (active)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.ID, c.Tier, title)
	}
	tw.Flush()
	return ExitOK
}
