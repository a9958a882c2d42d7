package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/drift"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/registry"
)

// CheckList writes the checks of `acpprobe check --list`: id, tier and title, marking the
// active ones.
func CheckList(w io.Writer, checks []conformance.Check) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTIER\tTITLE")
	for _, c := range checks {
		title := c.Title
		if c.Active {
			title += " (active)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.ID, c.Tier, title)
	}
	return tw.Flush()
}

// Agents writes the agents of `acpprobe agents`: the registry snapshot they come from, then
// one row each with how it launches, where it comes from and whether it can run here.
func Agents(w io.Writer, list []registry.Status) error {
	out := &sticky{w: w}
	fmt.Fprintf(out, "ACP registry snapshot %s (%s); %d agents\n\n", registry.SnapshotDate, registry.SnapshotCommit[:12], len(list))
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tVERSION\tLAUNCH\tSOURCE\tRUNS HERE")
	for _, s := range list {
		runs := "yes"
		if !s.CanRun {
			runs = "no: " + s.Reason
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, Cut(s.Name, 32), s.Version, s.Kind, s.Source, runs)
	}
	tw.Flush()
	return out.err
}

// Diff writes the changes of `acpprobe diff`, one sentence each, or "no drift".
func Diff(w io.Writer, changes []drift.Change) error {
	out := &sticky{w: w}
	if len(changes) == 0 {
		fmt.Fprintln(out, "no drift")
		return out.err
	}
	fmt.Fprintf(out, "%d change(s):\n", len(changes))
	for _, c := range changes {
		fmt.Fprintln(out, "  "+c.Text)
	}
	return out.err
}

// ClientFindings writes the findings of `acpprobe lint-client`: what the client sent, each
// with its tier, its transcript line and pointer, and why.
func ClientFindings(w io.Writer, findings []probe.Finding) error {
	out := &sticky{w: w}
	fmt.Fprintf(out, "%d client finding(s)\n", len(findings))
	for _, f := range findings {
		fmt.Fprintf(out, "  %-10s %s [line %d %s]\n      %s\n", f.Tier, f.ID, f.Seq, f.Pointer, f.Message)
	}
	return out.err
}

// TapFinding writes one finding of `acpprobe tap --check` as it happens, on one line: tier,
// id, where, why.
func TapFinding(w io.Writer, f probe.Finding) error {
	where := ""
	if f.Seq != 0 {
		where = " " + strings.TrimSpace(fmt.Sprintf(" [line %d %s", f.Seq, f.Pointer)) + "]"
	}
	_, err := fmt.Fprintf(w, "acpprobe tap: %s %s%s: %s\n", f.Tier, f.ID, where, f.Message)
	return err
}
