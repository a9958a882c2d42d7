package acptest

// The DeferMCPTools fault's ToolSearch, after Claude Code 2.1's: the MCP tools are named in
// the system prompt and offered to the model only once a search has found them.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// toolSearchName is the search tool's name; maxSearchResults bounds what one search finds.
const (
	toolSearchName   = "ToolSearch"
	maxSearchResults = 5
)

// toolSearchTool is the search tool as the model sees it.
var toolSearchTool = map[string]any{"name": toolSearchName,
	"description": "Fetches the schemas of deferred tools so that they can be called. Query forms: \"select:A,B\" fetches these exact tools; other words match tools by name.",
	"input_schema": map[string]any{"type": "object", "required": []string{"query"}, "properties": map[string]any{
		"query":       map[string]string{"type": "string", "description": "\"select:<tool_name>[,<tool_name>…]\", or words to search for"},
		"max_results": map[string]string{"type": "number", "description": "The most tools to return (default 5)"}}}}

// deferredNotice is what the system prompt says of the deferred tools.
func deferredNotice(deferred map[string]mcpTool) string {
	names := make([]string, 0, len(deferred))
	for n := range deferred {
		names = append(names, n)
	}
	sort.Strings(names)
	return "\n\nThe following deferred tools are available via " + toolSearchName +
		". Their schemas are not loaded: use it with query \"select:<name>\" before calling them:\n" + strings.Join(names, "\n")
}

// search runs a ToolSearch call: the deferred tools it names ("select:") or whose names
// contain one of its words, at most max_results of them, are found (offered from the next
// request on) and returned with their schemas.
func (t *turn) search(u toolUse) any {
	var in struct {
		Query      string  `json:"query"`
		MaxResults float64 `json:"max_results"`
	}
	_ = json.Unmarshal(u.input, &in)
	t.announce(u, toolSearchName+" "+in.Query, "search", "")
	limit := maxSearchResults
	if in.MaxResults >= 1 && in.MaxResults < maxSearchResults {
		limit = int(in.MaxResults)
	}
	names := make([]string, 0, len(t.deferred))
	for n := range t.deferred {
		names = append(names, n)
	}
	sort.Strings(names)
	match := func(name string) bool {
		for _, w := range strings.Fields(strings.ToLower(in.Query)) {
			if strings.Contains(strings.ToLower(name), w) {
				return true
			}
		}
		return false
	}
	if sel, ok := strings.CutPrefix(in.Query, "select:"); ok {
		wanted := strings.Split(sel, ",")
		match = func(name string) bool {
			for _, w := range wanted {
				if strings.TrimSpace(w) == name {
					return true
				}
			}
			return false
		}
	}
	var lines []string
	if t.found == nil {
		t.found = map[string]bool{}
	}
	for _, n := range names {
		if len(lines) == limit || !match(n) {
			continue
		}
		tool := t.deferred[n].tool
		decl, _ := json.Marshal(map[string]any{"name": n, "description": tool.Description, "parameters": tool.InputSchema})
		lines = append(lines, "<function>"+string(decl)+"</function>")
		t.found[n] = true
	}
	text := "No deferred tool matches " + in.Query
	if len(lines) > 0 {
		text = "<functions>\n" + strings.Join(lines, "\n") + "\n</functions>"
	}
	t.send(map[string]any{"sessionUpdate": "tool_call_update", "toolCallId": u.id, "status": "completed",
		"content": []any{map[string]any{"type": "content", "content": map[string]string{"type": "text", "text": fmt.Sprintf("%d tool(s) found", len(lines))}}}}, true)
	return toolResult(u.id, text, false)
}
