package emulator

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// The three known ways of deferring tools, as the agents put them on the wire (trimmed):
// each request is an agent's, the answers are the emulator's. The script wants the tool
// probe_tool, named so in the prompt; the agents call it mcp__srv__probe_tool.

// A Claude Code request: the deferred tools listed in a system entry, ToolSearch offered.
func claudeDeferred(tools, tail string) string {
	return `{"model":"claude-test","stream":false,"max_tokens":100,"tools":[{"name":"Bash","input_schema":{"type":"object"}},
		{"name":"ToolSearch","input_schema":{"type":"object","properties":{"query":{"type":"string"},"max_results":{"default":5,"type":"number"}},"required":["query","max_results"]}},
		{"name":"DeferredToolPlaceholder","input_schema":{"type":"object","properties":{}},"defer_loading":true}` + tools + `],
		"messages":[{"role":"system","content":[{"type":"text","text":"The following deferred tools are now available via ToolSearch. Use ToolSearch with query \"select:<name>\" to load tool schemas before calling them:\nCronCreate\nmcp__srv__probe_tool\nmcp__srv__probe_tool_two\n"}]},
		{"role":"user","content":[{"type":"text","text":"Call the tool probe_tool once."}]}` + tail + `]}`
}

// A Chat Completions request of qwen-code's or CodeBuddy Code's, with their search and invoke
// tools, and tail after the prompt.
func chatDeferred(tools, tail string) string {
	return `{"model":"m","stream":false,"tools":[` + tools + `],"messages":[{"role":"system","content":"You are a coding agent."},
		{"role":"user","content":[{"type":"text","text":"<system-reminder>The following tools are reachable through tool_search and tool_call: cron_create</system-reminder>"},{"type":"text","text":"Call the tool probe_tool once."}]}` + tail + `]}`
}

const (
	codebuddyTools = `{"type":"function","function":{"name":"Read","parameters":{"type":"object"}}},
		{"type":"function","function":{"name":"ToolSearch","description":"Load tool schemas before invoking deferred tools.\n<available_deferred_tools>\nCronCreate: Schedule a prompt\n\nmcp__srv\nmcp__srv__probe_tool\n</available_deferred_tools>\n",
			"parameters":{"type":"object","properties":{"queries":{"type":"array","items":{"type":"string"}},"tool_names":{"type":"array","items":{"type":"string"}},"top_k":{"type":"integer","default":3}},"additionalProperties":false}}},
		{"type":"function","function":{"name":"DeferExecuteTool","parameters":{"type":"object","properties":{"toolName":{"type":"string"},"params":{"type":"object","additionalProperties":{}}},"required":["toolName","params"],"additionalProperties":false}}}`
	qwenTools = `{"type":"function","function":{"name":"read_file","parameters":{"type":"object"}}},
		{"type":"function","function":{"name":"tool_call","parameters":{"type":"object","properties":{"name":{"type":"string","minLength":1},"arguments":{"type":"object"}},"required":["name","arguments"],"additionalProperties":false}}},
		{"type":"function","function":{"name":"tool_search","parameters":{"type":"object","properties":{"query":{"type":"string","minLength":1},"max_results":{"type":"integer","minimum":1,"maximum":20,"default":5}},"required":["query"]}}}`
)

// chatResult continues a Chat Completions conversation with the model's call of tool and its
// result.
func chatResult(id, tool, result string) string {
	r, _ := json.Marshal(result)
	return fmt.Sprintf(`,{"role":"assistant","content":"","tool_calls":[{"id":%q,"type":"function","function":{"name":%q,"arguments":"{}"}}]},{"role":"tool","tool_call_id":%q,"content":%s}`, id, tool, id, r)
}

// claudeResult continues a Claude Code conversation with the model's call of tool and its
// result (ToolSearch's is a tool_reference, without text).
func claudeResult(id, tool, result string) string {
	content := `[{"type":"tool_reference","tool_name":"mcp__srv__probe_tool"}]`
	if result != "" {
		r, _ := json.Marshal(result)
		content = string(r)
	}
	return fmt.Sprintf(`,{"role":"assistant","content":[{"type":"tool_use","id":%q,"name":%q,"input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":%q,"content":%s}]}`, id, tool, id, content)
}

// probeScript is the mcp scenario's script for probe_tool.
func probeScript() Script {
	return ToolThenText(Containing("probe_tool"), func(Tool) map[string]any { return map[string]any{} }, "done", "missing")
}

// exchange posts one request and returns the emulator's answer, as the agent reads it, and
// as recorded.
func exchange(t *testing.T, s *Server, rec *recorder, d Dialect, body string) (decoded, string, string) {
	t.Helper()
	wc := wireCases[indexOf(d)]
	got := wc.decode(t, post(t, s, d, wc.path(false), body).Body, false)
	res := <-rec.answered
	return got, res.Tool, res.Search
}

// TestDeferredTools: the scripted model finds a tool the agent defers the way that agent
// expects, then calls it, then answers text. Claude Code: select: by the name its system
// entry gives, then the tool it offers from then on. CodeBuddy Code: tool_names, then
// DeferExecuteTool. qwen-code, whose reminder does not name the tool: words (the prompt's
// name), then tool_call with the name the search's result declares. The recorded answers say
// which call was the search and which tool a meta-call invoked, the recorded result which
// tool the search found. Before, each answered "missing".
func TestDeferredTools(t *testing.T) {
	probe := `,{"name":"mcp__srv__probe_tool","input_schema":{"type":"object","properties":{}}}`
	for _, tc := range []struct {
		name       string
		dialect    Dialect
		first      string
		second     func(callID string) string
		third      func(callID string) string
		searchArgs string
		search     string
		call       string // the recorded tool of the second answer
		callArgs   string
	}{
		{"claude", Anthropic, claudeDeferred("", ""),
			func(id string) string { return claudeDeferred(probe, claudeResult(id, "ToolSearch", "")) },
			func(id string) string {
				return claudeDeferred(probe, claudeResult(id, "mcp__srv__probe_tool", "probed"))
			},
			`{"max_results":1,"query":"select:mcp__srv__probe_tool"}`, "mcp__srv__probe_tool", "mcp__srv__probe_tool", `{}`},
		{"codebuddy", OpenAIChat, chatDeferred(codebuddyTools, ""),
			func(id string) string {
				return chatDeferred(codebuddyTools, chatResult(id, "ToolSearch", "Found 1 tool(s). Use DeferExecuteTool to invoke them.\n\n## mcp__srv__probe_tool\nA probe"))
			},
			func(id string) string {
				return chatDeferred(codebuddyTools, chatResult(id, "DeferExecuteTool", "probed"))
			},
			`{"tool_names":["mcp__srv__probe_tool"]}`, "mcp__srv__probe_tool", "DeferExecuteTool/mcp__srv__probe_tool", `{"params":{},"toolName":"mcp__srv__probe_tool"}`},
		{"qwen", OpenAIChat, chatDeferred(qwenTools, ""),
			func(id string) string {
				return chatDeferred(qwenTools, chatResult(id, "tool_search", `<functions>`+"\n"+`<function>{"name":"mcp__srv__probe_tool","description":"A probe"}</function>`+"\n</functions>"))
			},
			func(id string) string { return chatDeferred(qwenTools, chatResult(id, "tool_call", "probed")) },
			`{"query":"probe_tool"}`, "probe_tool", "tool_call/mcp__srv__probe_tool", `{"arguments":{},"name":"mcp__srv__probe_tool"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			s := start(t, rec.options(probeScript()))
			d, tool, search := exchange(t, s, rec, tc.dialect, tc.first)
			if d.args != tc.searchArgs || tool == "" || search != tc.search {
				t.Fatalf("first answer %+v (recorded tool %q, search %q), want a search %s for %s", d, tool, search, tc.searchArgs, tc.search)
			}
			d, tool, search = exchange(t, s, rec, tc.dialect, tc.second(d.callID))
			if tool != tc.call || search != "" || d.args != tc.callArgs {
				t.Fatalf("second answer %+v (recorded tool %q, search %q), want %s %s", d, tool, search, tc.call, tc.callArgs)
			}
			if req, _ := rec.last(); len(req.ToolResults) != 1 || !slices.Equal(req.ToolResults[0].Found, []string{"mcp__srv__probe_tool"}) {
				t.Errorf("the search's result recorded as %+v, want it to declare mcp__srv__probe_tool", req.ToolResults)
			}
			if d, _, _ = exchange(t, s, rec, tc.dialect, tc.third(d.callID)); d.tool != "" || d.text != "done" {
				t.Errorf("third answer %+v, want the text", d)
			}
		})
	}
}

// TestDeferredSearchBounded attacks the deferred round trip with agents that do not play
// along, each request sent 20 times: a search whose result never declares the tool (it finds
// nothing, or echoes the name it did not find), an agent
// that sends the conversation of before the search again and again (the search's result
// never comes), one that sends the search's result again and again. The script searches once
// and calls the tool once per installation, and answers the rest with its text ("missing"
// when the tool was never found), never a loop of searches.
func TestDeferredSearchBounded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after func(callID string) string // the request sent again, after the first answer
		want  []string                   // the first answers' recorded tools, then text
		text  string
	}{
		{"the search finds nothing", func(id string) string {
			return chatDeferred(qwenTools, chatResult(id, "tool_search", "No tools found matching 'probe_tool'."))
		}, []string{"tool_search"}, "missing"},
		{"the search's result only echoes the name", func(id string) string {
			return chatDeferred(qwenTools, chatResult(id, "tool_search", "Not found: mcp__srv__probe_tool"))
		}, []string{"tool_search"}, "missing"},
		{"the search's result never comes", func(string) string { return chatDeferred(qwenTools, "") }, []string{"tool_search"}, "missing"},
		{"the search's result again and again", func(id string) string {
			return chatDeferred(qwenTools, chatResult(id, "tool_search", `<function>{"name":"mcp__srv__probe_tool"}</function>`))
		}, []string{"tool_search", "tool_call/mcp__srv__probe_tool"}, "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder()
			s := start(t, rec.options(probeScript()))
			d, tool, _ := exchange(t, s, rec, OpenAIChat, chatDeferred(qwenTools, ""))
			if tool != tc.want[0] {
				t.Fatalf("first answer %+v (recorded %q), want a search", d, tool)
			}
			body := tc.after(d.callID)
			var tools []string
			for i := range 20 {
				d, tool, _ := exchange(t, s, rec, OpenAIChat, body)
				switch {
				case tool != "":
					tools = append(tools, tool)
				case d.text != tc.text:
					t.Fatalf("request %d answered %+v, want %q", i+2, d, tc.text)
				}
			}
			if got := strings.Join(append([]string{tc.want[0]}, tools...), ","); got != strings.Join(tc.want, ",") {
				t.Errorf("tool calls %s, want %s", got, strings.Join(tc.want, ","))
			}
		})
	}
}
