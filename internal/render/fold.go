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
