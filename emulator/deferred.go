package emulator

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Tools an agent defers: it names them (in its system text, a reminder, or its search tool's
// description), or names none of them, but does not offer them in the request's tools, and
// offers a way to search for them instead: a search tool, or a free-form tool that runs a
// program that can list them. The model searches, and then calls the tool it found: directly
// once the agent offers it, through the agent's tool that invokes a deferred tool by name, or
// as a nested tool of the free-form one (Tool.Via). ToolThenText does this for the tool its
// picker wants (Call.deferred).

// toolSearch is one known way of deferring tools, read on the agent's bundled sources and
// on the wire.
type toolSearch struct {
	// search is the search tool's name. exact is its property that takes exact tool names
	// (a list of them, or a string of them after prefix) and keywords the one that takes the
	// words of a keyword search; exact also tells apart two agents' search tools of one name.
	search, exact, prefix, keywords string
	// script, for a free-form search tool (Tool.Custom), is the program it is given to search,
	// a format with one %s, the name searched for as a JSON string; such a tool is known by
	// its description, which contains described.
	script, described string
	// found is how its result declares a tool it found: a regular expression whose first
	// group is the tool's name; "" when it names them in tool_reference blocks instead.
	found string
	// invoke is the tool that calls a deferred tool, with its name in invokeName and its
	// arguments in invokeArgs; "" when the agent offers the tools a search found in its next
	// request instead, or nested says that the tool found is called through the free-form
	// search tool itself (Tool.Via).
	invoke, invokeName, invokeArgs string
	nested                         bool
}

// toolSearches are the known ways, in order of preference.
var toolSearches = []toolSearch{
	// Claude Code 2.1 (claude-agent-acp 0.101.0): ToolSearch {query: "select:NAME" or words,
	// max_results}; the result is a tool_reference, and the tool is in the next request's
	// tools. Its system text lists the deferred tools "before calling them".
	{search: "ToolSearch", exact: "query", prefix: "select:", keywords: "query"},
	// CodeBuddy Code 2.117.0: ToolSearch {tool_names: [NAME]} or {queries: [WORDS]}; the
	// result names the tool ("## NAME", its parameters) and DeferExecuteTool {toolName,
	// params} calls it. The search tool's description lists the deferred tools.
	{search: "ToolSearch", exact: "tool_names", keywords: "queries", found: `(?m)^## ([^\s]+)$`, invoke: "DeferExecuteTool", invokeName: "toolName", invokeArgs: "params"},
	// qwen-code 0.24.4: tool_search {query: "select:NAME" or words}; the result is the tool's
	// declaration (<functions><function>{"name": …}) and tool_call {name, arguments} calls
	// it. A reminder lists the deferred tools, but not the MCP tools of servers it connected
	// after it started (the sentinels): those are found by words.
	{search: "tool_search", exact: "query", prefix: "select:", keywords: "query", found: `<function>\{"name":"([^"\\]+)"`, invoke: "tool_call", invokeName: "name", invokeArgs: "arguments"},
	// Codex 0.166 (codex-acp 2.6.0), in code mode: every tool but a few is a nested tool of
	// its free-form exec tool (JavaScript, see Tool.Via), and its MCP tools are nested tools
	// that exec's description omits, with no search tool: "Some deferred nested tools may be
	// omitted from this description. They are still available on the global `tools` object
	// and listed in `ALL_TOOLS`. To find one, filter `ALL_TOOLS` by `name` and
	// `description`." ALL_TOOLS holds {name, description}, name the tool's JavaScript
	// identifier (mcp__<server>__<tool>). One exec prints the names that contain the user's
	// name for the tool, the next calls the one found: `tools.<name>(args)`.
	{search: "exec", described: "listed in `ALL_TOOLS`",
		script: `text(ALL_TOOLS.filter(t => t.name.includes(%s)).map(t => "found tool: " + t.name).join("\n"));` + "\n",
		found:  `found tool: ([A-Za-z_$][A-Za-z0-9_$]*)`, nested: true},
}

// offeredSearch is a known way of deferring tools whose search tool the request offers.
type offeredSearch struct {
	toolSearch
	tool Tool // the search tool as offered
}

// toolSearch finds the first known way of deferring tools that the request offers.
func (c *Call) toolSearch() (offeredSearch, bool) {
	for _, s := range toolSearches {
		for _, t := range c.Tools {
			if t.Name == s.search && s.offeredAs(t) {
				return offeredSearch{toolSearch: s, tool: t}, true
			}
		}
	}
	return offeredSearch{}, false
}

// offeredAs says whether t, a tool of the search tool's name, is this way's search tool: a
// free-form tool that describes the deferred tools as this way does, or a tool with its
// exact property.
func (s toolSearch) offeredAs(t Tool) bool {
	if s.script != "" {
		return t.Custom && strings.Contains(t.Description, s.described)
	}
	return slices.Contains(propertyNames(t.Schema), s.exact)
}

// foundPatterns are the toolSearches' found expressions, compiled (nil for none).
var foundPatterns = sync.OnceValue(func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(toolSearches))
	for i, s := range toolSearches {
		if s.found != "" {
			out[i] = regexp.MustCompile(s.found)
		}
	}
	return out
})

// foundTools are the tools the result c of a call of the tool name declares (its
// tool_reference blocks, and the names in its text in the form of a known search tool of
// that name), at most maxFound; none when name is no known search tool's.
func foundTools(name string, c content) []string {
	found := slices.Clip(c.refs)
	for i, s := range toolSearches {
		if s.search != name || foundPatterns()[i] == nil {
			continue
		}
		for _, m := range foundPatterns()[i].FindAllStringSubmatch(c.text, maxFound-len(found)) {
			found = append(found, excerptN(m[1], maxName))
		}
	}
	return found
}

// deferred is the call that brings the model closer to the tool pick wants when the request
// does not offer it: before any search of this installation, the search for a name of it
// that the request gives; after it, the call of the tool through the agent's invoke tool,
// with the arguments args gives, once the latest search result declares it
// (record.ToolResult.Found). nil when there is none: the request names no such tool, the
// search did not find it, or the agent has no invoke tool and did not offer the tool found.
func (c *Call) deferred(s offeredSearch, pick ToolPicker, args func(Tool) map[string]any) *ToolUse {
	if c.Searches == 0 {
		return s.searchFor(c, accepted(c.bodyNames(), pick))
	}
	invoke, ok := offered(c.Tools, s.invoke)
	if !ok && !s.nested {
		return nil
	}
	for _, r := range c.Request.ToolResults {
		if !r.Latest || r.Name != s.tool.Name {
			continue
		}
		found := accepted(r.Found, pick)
		if len(found) == 0 {
			continue
		}
		var use *ToolUse
		var err error
		if s.nested {
			t := Tool{Name: found[0], Namespace: s.tool.Namespace, Via: s.tool.Name}
			use, err = Use(t, args(t))
		} else {
			use, err = Use(invoke, map[string]any{s.invokeName: found[0], s.invokeArgs: args(Tool{Name: found[0]})})
		}
		if err != nil {
			return nil
		}
		use.Nested = found[0]
		return use
	}
	return nil
}

// searchFor is the search for the tool the request names with names (shortest first): by its
// exact name when the agent gave it — the shortest that is not in the user's last words,
// where the prompt names the tool as the user knows it (an agent qualifies it:
// mcp__server__tool) — else by the user's name for it, as words.
func (s offeredSearch) searchFor(c *Call, names []string) *ToolUse {
	if len(names) == 0 {
		return nil
	}
	prop, name, value := s.keywords, names[0], names[0]
	for _, n := range names {
		if !strings.Contains(c.Request.LastUserText, n) {
			prop, name, value = s.exact, n, s.prefix+n
			break
		}
	}
	values := map[string]any{prop: value}
	switch {
	case s.script != "":
		quoted, _ := json.Marshal(name) // a JSON string is a JavaScript string literal
		values = map[string]any{"input": fmt.Sprintf(s.script, quoted)}
	case propertyType(s.tool.Schema, prop) == "array":
		values[prop] = []string{name}
	}
	use, err := Use(s.tool, values)
	if err != nil {
		return nil
	}
	use.Search = name
	return use
}

// offered finds the tool named name among tools.
func offered(tools []Tool, name string) (Tool, bool) {
	if name == "" {
		return Tool{}, false
	}
	return Named(name)(tools)
}

// accepted keeps the names that pick would choose as a tool's, shortest first (the tool's
// own name before the names of other tools that contain it: probe before probe_two).
func accepted(names []string, pick ToolPicker) []string {
	var out []string
	one := make([]Tool, 1)
	for _, n := range names {
		one[0].Name = n
		if _, ok := pick(one); ok {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out
}

// bodyNames are the names in the request's text, each once, in order: the runs of the
// characters tool names are made of (letters, digits, _ - .) in its recorded body (the start
// of it, when it was too large to keep whole), without a leading or trailing '.' or '-' (a
// sentence's full stop). The body is read as it is written: such a name is written as it is
// in a JSON string, and an escape (\n, \u0041) ends a name rather than joining one.
func (c *Call) bodyNames() []string {
	body := []byte(c.Request.Body)
	if len(body) == 0 {
		body = []byte(c.Request.BodyText)
	}
	seen := map[string]bool{}
	var out []string
	add := func(run []byte) {
		for len(run) > 0 && (run[0] == '.' || run[0] == '-') {
			run = run[1:]
		}
		for len(run) > 0 && (run[len(run)-1] == '.' || run[len(run)-1] == '-') {
			run = run[:len(run)-1]
		}
		if len(run) > 0 && !seen[string(run)] {
			n := string(run)
			seen[n] = true
			out = append(out, n)
		}
	}
	start := -1
	for i := 0; i < len(body); i++ {
		b := body[i]
		if b == '_' || b == '-' || b == '.' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			add(body[start:i])
			start = -1
		}
		if b == '\\' && i+1 < len(body) {
			i++ // the escaped character
			if body[i] == 'u' {
				i += 4
			}
		}
	}
	if start >= 0 {
		add(body[start:])
	}
	return out
}

// propertyType is the type a top-level property of an object schema declares ("" when it
// declares none, or a list of them).
func propertyType(schema json.RawMessage, name string) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	t, _ := s.Properties[name].Type.(string)
	return t
}
