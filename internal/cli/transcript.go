package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transcript"
)

// runAnalyze rebuilds the result and findings of a recorded session, through the same code
// as a live probe.
func runAnalyze(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("analyze")
	asJSON := fs.Bool("json", false, "print the result as JSON on stdout")
	schemaName := fs.String("schema", "", "schema set: "+strings.Join(schema.Names(), ", "))
	failOn := fs.String("fail-on", "", "judge the findings: exit 1 when one not in the baseline is at or above this tier (default for check transcripts: mandatory)")
	baselinePath := fs.String("baseline", "", "file of known finding ids with a reason each")
	catalogueDir := fs.String("catalogue", "", "directory of extra vendor catalogue files merged over the built-in catalogue")
	if err := parseFlags(fs, args, "acpprobe analyze [flags] TRANSCRIPT", stdio.Out); err != nil {
		return failUsage(stdio, "analyze", err)
	}
	if fs.NArg() != 1 {
		return failUsage(stdio, "analyze", usagef("want one transcript file, got %d arguments", fs.NArg()))
	}
	cat, err := loadCatalogue(*catalogueDir)
	if err != nil {
		return failUsage(stdio, "analyze", err)
	}
	header, frames, err := readTranscript(fs.Arg(0))
	if err != nil {
		return failUsage(stdio, "analyze", err)
	}
	var spec *checkSpec
	if *schemaName != "" || *failOn != "" || *baselinePath != "" || header.Tool == "check" {
		spec = &checkSpec{schema: *schemaName, failOn: probe.TierMandatory, baselinePath: *baselinePath}
		if *schemaName != "" {
			if _, err := schema.Load(*schemaName); err != nil {
				return failUsage(stdio, "analyze", usagef("--schema: %v", err))
			}
		}
		if *failOn != "" {
			if spec.failOn, err = conformance.ParseTier(*failOn); err != nil {
				return failUsage(stdio, "analyze", usagef("--fail-on: %v", err))
			}
		}
		if *baselinePath != "" {
			if spec.baseline, err = conformance.LoadBaseline(*baselinePath); err != nil {
				return failUsage(stdio, "analyze", usagef("--baseline: %v", err))
			}
		}
	}
	r, err := acpprobe.Analyze(frames, analyzeOptions(spec, cat))
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe analyze:", err)
		return ExitNotProbed
	}
	return report(r, *asJSON, stdio)
}

// runReplay acts as the recorded agent on stdio.
func runReplay(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("replay")
	timing := fs.Bool("timing", false, "reproduce the recorded delays")
	if err := parseFlags(fs, args, "acpprobe replay [--timing] TRANSCRIPT", stdio.Out); err != nil {
		return failUsage(stdio, "replay", err)
	}
	if fs.NArg() != 1 {
		return failUsage(stdio, "replay", usagef("want one transcript file, got %d arguments", fs.NArg()))
	}
	_, frames, err := readTranscript(fs.Arg(0))
	if err != nil {
		return failUsage(stdio, "replay", err)
	}
	main, _ := record.Split(frames)
	err = transcript.NewReplayer(main).Serve(ctx, stdio.In, stdio.Out, stdio.Err, *timing)
	var exit *transcript.ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &exit):
		return exit.Code
	case ctx.Err() != nil:
		dieBySignal(syscall.SIGTERM) // as the recorded agent, stopped by the ladder, did
		return 128 + 15
	}
	fmt.Fprintln(stdio.Err, "acpprobe replay:", err)
	return 1
}

func readTranscript(path string) (transcript.Header, []jsonrpc.Frame, error) {
	f, err := os.Open(path)
	if err != nil {
		return transcript.Header{}, nil, usagef("%v", err)
	}
	defer f.Close()
	h, frames, err := transcript.Read(f)
	if err != nil {
		return h, nil, usagef("%s: %v", path, err)
	}
	return h, frames, nil
}

// runLintClient judges what the client (an editor, recorded by acpprobe tap) sent: private
// vendor keys and methods (rules 6.1–6.4 of the CodeBuddy reference, for every catalogued
// vendor) and non-ACP methods without the _ prefix.
func runLintClient(_ context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("lint-client")
	asJSON := fs.Bool("json", false, "print the findings as JSON")
	catalogueDir := fs.String("catalogue", "", "directory of extra vendor catalogue files merged over the built-in catalogue")
	if err := parseFlags(fs, args, "acpprobe lint-client [--json] TRANSCRIPT", stdio.Out); err != nil {
		return failUsage(stdio, "lint-client", err)
	}
	if fs.NArg() != 1 {
		return failUsage(stdio, "lint-client", usagef("want one transcript file, got %d arguments", fs.NArg()))
	}
	cat, err := loadCatalogue(*catalogueDir)
	if err != nil {
		return failUsage(stdio, "lint-client", err)
	}
	_, frames, err := readTranscript(fs.Arg(0))
	if err != nil {
		return failUsage(stdio, "lint-client", err)
	}
	r, err := acpprobe.Analyze(frames, acpprobe.AnalyzeOptions{Catalogue: cat})
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe lint-client:", err)
		return ExitNotProbed
	}
	client := []probe.Finding{}
	for _, f := range r.Findings {
		if c, ok := conformance.Lookup(f.ID); ok && c.Side == conformance.SideClient {
			client = append(client, f)
		}
	}
	if *asJSON {
		_ = render.JSON(stdio.Out, client)
	} else {
		fmt.Fprintf(stdio.Out, "%d client finding(s)\n", len(client))
		for _, f := range client {
			fmt.Fprintf(stdio.Out, "  %-10s %s [line %d %s]\n      %s\n", f.Tier, f.ID, f.Seq, f.Pointer, f.Message)
		}
	}
	for _, f := range client {
		if f.Tier != probe.TierInfo {
			return ExitFindings
		}
	}
	return ExitOK
}
