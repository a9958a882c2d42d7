package render

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/acpprobe/acpprobe/conformance"
	"github.com/acpprobe/acpprobe/drift"
	"github.com/acpprobe/acpprobe/registry"
	"github.com/acpprobe/acpprobe/report"
)

// CheckList writes the checks of `acpprobe check --list`: id, tier and title, marking the
// active ones.
func CheckList(w io.Writer, checks []conformance.Check) error {
	rows := [][]string{{"ID", "TIER", "TITLE"}}
	for _, c := range checks {
		title := c.Title
		if c.Active {
			title += " (active)"
		}
		rows = append(rows, []string{c.ID, string(c.Tier), title})
	}
	return writeTable(w, rows, screenOf(w).lineWidth())
}

// Agents writes the agents of `acpprobe agents`: index, the registry index they come from
// (which, and how old), then one row each with how it launches, where it comes from and
// whether it can run here.
func Agents(w io.Writer, index string, list []registry.Status) error {
	width := screenOf(w).lineWidth()
	t := &textWriter{w: w, width: width}
	t.hang(fmt.Sprintf("%s; %d agents", index, len(list)), 2)
	t.hang("", 0)
	// The name is cut to 32 columns, or fewer (down to 10) to leave the last column 16 on a
	// narrow terminal.
	nameMax := 32
	if width > 0 {
		id, version, kind, source := len("ID"), len("VERSION"), len("LAUNCH"), len("SOURCE")
		for _, s := range list {
			id, version = max(id, Width(Clean(s.ID))), max(version, Width(Clean(s.Version)))
			kind, source = max(kind, Width(Clean(string(s.Kind)))), max(source, Width(Clean(string(s.Source))))
		}
		nameMax = max(10, min(nameMax, width-(id+version+kind+source)-5*2-16))
	}
	rows := [][]string{{"ID", "NAME", "VERSION", "LAUNCH", "SOURCE", "RUNS HERE"}}
	for _, s := range list {
		rows = append(rows, []string{s.ID, Cut(s.Name, nameMax), s.Version, string(s.Kind), string(s.Source), s.RunsHere()})
	}
	if t.err != nil {
		return t.err
	}
	return writeTable(w, rows, width)
}

// Diff writes the changes of `acpprobe diff`, one sentence each, or "no drift".
func Diff(w io.Writer, changes []drift.Change) error {
	t := &textWriter{w: w, width: screenOf(w).lineWidth()}
	if len(changes) == 0 {
		t.hang("no drift", 0)
		return t.err
	}
	t.hang(fmt.Sprintf("%d change(s):", len(changes)), 0)
	for _, c := range changes {
		t.line(c.Text)
	}
	return t.err
}

// ClientFindings writes the findings of `acpprobe lint-client`: what the client sent, each
// with its tier, where it was found (Where) and why; the findings that differ only in their
// line are one entry.
func ClientFindings(w io.Writer, findings []report.Finding) error {
	t := &textWriter{w: w, width: screenOf(w).lineWidth()}
	t.hang(fmt.Sprintf("%d client finding(s)", len(findings)), 0)
	for _, g := range groupFindings(findings) {
		where := g.where()
		if where != "" {
			where = " [" + where + "]"
		}
		t.line(fmt.Sprintf("%-10s %s%s", g.Tier, g.ID, where))
		t.hang("      "+g.text(), 6)
	}
	return t.err
}

// TapFinding writes one finding of `acpprobe tap --check` as it happens, on one line (never
// wrapped: the editor's log takes it as is): tier, id, where (Where), why.
func TapFinding(w io.Writer, f report.Finding) error {
	where := Where(f)
	if where != "" {
		where = " [" + where + "]"
	}
	_, err := io.WriteString(w, Clean(fmt.Sprintf("acpprobe tap: %s %s%s: %s", f.Tier, f.ID, where, f.Text()))+"\n")
	return err
}

// TapOmitted writes the last lines of `acpprobe tap --check`: for each check, in id order, how
// many of its findings were not printed (beyond the ones printed, or saying again what one
// said).
func TapOmitted(w io.Writer, omitted map[string]int) error {
	for _, id := range slices.Sorted(maps.Keys(omitted)) {
		if _, err := io.WriteString(w, Clean(fmt.Sprintf("acpprobe tap: %s: %d more like this, not shown", id, omitted[id]))+"\n"); err != nil {
			return err
		}
	}
	return nil
}
