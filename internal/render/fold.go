package render

import (
	"fmt"
	"slices"
	"strings"

	"github.com/acpprobe/acpprobe/report"
)

// The text reports fold what repeats, so that a person reads a long session at a glance; the
// JSON keeps every item.
const (
	// listMax is how many items of a list of names (models, config values, extension keys,
	// watched places) a text line shows before it says how many more there were.
	listMax = 10
	// missingMax is how many of the items a replay misses the text names.
	missingMax = 3
	// seqMax is how many lines of identical findings the text names.
	seqMax = 5
	// messageMax is the most columns of a finding's message the text shows (four lines of an
	// 80-column report): a message that lists every id an agent sent is cut, and says so.
	messageMax = 300
)

// foldList joins the first max items with sep, then says how many more there were: "a, b, c
// … and 47 more".
func foldList(items []string, max int, sep string) string {
	if len(items) <= max {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s … and %d more", strings.Join(items[:max], sep), len(items)-max)
}

// toolCallsText counts tool calls by kind and status, in the order first seen: "28 tool calls
// (edit, completed)", "3 tool calls (2 edit, completed; 1 read, failed)"; "" for none.
func toolCallsText(calls []report.ToolCallTruth) string {
	if len(calls) == 0 {
		return ""
	}
	type group struct {
		what string
		n    int
	}
	var groups []group
	for _, tc := range calls {
		what := orDash(tc.Kind) + ", " + orDash(tc.Status)
		if i := slices.IndexFunc(groups, func(g group) bool { return g.what == what }); i >= 0 {
			groups[i].n++
			continue
		}
		groups = append(groups, group{what, 1})
	}
	noun := "tool calls"
	if len(calls) == 1 {
		noun = "tool call"
	}
	if len(groups) == 1 {
		return fmt.Sprintf("%d %s (%s)", len(calls), noun, groups[0].what)
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%d %s", g.n, g.what)
	}
	return fmt.Sprintf("%d %s (%s)", len(calls), noun, foldList(parts, listMax, "; "))
}

// findingGroup is the findings of one check that say the same thing at the same place: the
// first of them (its More the sum of theirs: the findings their check did not list), how many
// they are and the lines they were found on.
type findingGroup struct {
	report.Finding
	n    int
	seqs []int64
}

// groupFindings puts together the findings that differ only in their line (Seq), in the order
// first seen; each group's More is the sum of its findings'.
func groupFindings(findings []report.Finding) []findingGroup {
	type key struct {
		id, message, pointer string
		tier                 report.Tier
		known                bool
		reason               string
	}
	var groups []findingGroup
	index := map[key]int{}
	for _, f := range findings {
		k := key{f.ID, f.Message, f.Pointer, f.Tier, f.Known, f.KnownReason}
		i, ok := index[k]
		if !ok {
			i = len(groups)
			index[k] = i
			g := findingGroup{Finding: f}
			g.More = 0
			groups = append(groups, g)
		}
		groups[i].n++
		groups[i].More += f.More
		if f.Seq != 0 {
			groups[i].seqs = append(groups[i].seqs, f.Seq)
		}
	}
	return groups
}

// where says where the group's findings were found, as Where does for one: "seq 57
// /result/usage", or "/result/usage, 10 times: seq 57, 70, 83, 98, 112 … and 5 more".
func (g findingGroup) where() string {
	if g.n <= 1 {
		return Where(g.Finding)
	}
	times := fmt.Sprintf("%d times", g.n)
	if len(g.seqs) > 0 {
		seqs := make([]string, len(g.seqs))
		for i, s := range g.seqs {
			seqs[i] = fmt.Sprint(s)
		}
		times += ": seq " + foldList(seqs, seqMax, ", ")
	}
	if g.Pointer == "" {
		return times
	}
	return g.Pointer + ", " + times
}

// text is the group's message as Finding.Text gives it, cut at messageMax columns.
func (g findingGroup) text() string {
	f := g.Finding
	if Width(Clean(f.Message)) > messageMax {
		f.Message = Cut(f.Message, messageMax) + " (cut: the whole message is in --json)"
	}
	return f.Text()
}
