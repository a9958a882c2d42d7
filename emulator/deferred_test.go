package emulator

import (
	"encoding/json"
	"fmt"
	"os"
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

// exchange posts one request and returns the emulator's answer, as the agent reads it (a
// stream when the request asks for one), and as recorded.
func exchange(t *testing.T, s *Server, rec *recorder, d Dialect, body string) (decoded, string, string) {
	t.Helper()
	wc := wireCases[indexOf(d)]
	var req struct {
		Stream bool `json:"stream"`
	}
	mustDecode(t, body, &req)
	got := wc.decode(t, post(t, s, d, wc.path(req.Stream), body).Body, req.Stream)
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

// codexTurn is the request Codex 0.166 (codex-acp 2.6.0) sends for the mcp scenario's prompt
// (testdata: recorded, trimmed: exec's description keeps its deferred-tools guidance and one
// nested tool), followed by the model's exec calls and their results, each pair a program
// and what it printed, as Codex sends them (the output a list of input_text items).
func codexTurn(t *testing.T, calls ...[3]string) string {
	t.Helper()
	raw, err := os.ReadFile("testdata/codex-0.166-mcp-turn.json")
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	mustDecode(t, string(raw), &body)
	input := body["input"].([]any)
	for _, c := range calls { // call id, program, printed
		input = append(input,
			map[string]any{"type": "custom_tool_call", "status": "completed", "call_id": c[0], "name": "exec", "namespace": "functions", "input": c[1]},
			map[string]any{"type": "custom_tool_call_output", "call_id": c[0], "output": []any{
				map[string]any{"type": "input_text", "text": "Script completed\nWall time 0.0 seconds\nOutput:\n"},
				map[string]any{"type": "input_text", "text": c[2]}}})
	}
	body["input"] = input
	out, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The recorded mcp turn's sentinel tool, as the prompt names it and as Codex names it.
const (
	codexSentinel = "acpprobe_sentinel_stdio_bd46d6a3"
	codexMCPTool  = "mcp__acpprobe_stdio__" + codexSentinel
)

// codexScript is the mcp scenario's script for the recorded turn.
func codexScript() Script {
	return ToolThenText(Containing(codexSentinel), func(Tool) map[string]any { return map[string]any{} }, "done", "missing")
}

// TestCodexDeferredMCPTools: Codex 0.166 offers no MCP tool in its request (the recorded one
// offers exec, wait and clock.sleep, and exec's description declares apply_patch and
// clock__curr_time, not the sentinel's tool) and no search tool; exec's description says the
// omitted tools are listed in ALL_TOOLS. The scripted model prints the names in ALL_TOOLS
// that contain the prompt's name for the tool, then calls the one printed through exec,
// printing its result, then answers text. Before, the first answer was "missing".
func TestCodexDeferredMCPTools(t *testing.T) {
	rec := newRecorder()
	s := start(t, rec.options(codexScript()))
	d, tool, search := exchange(t, s, rec, OpenAIResponses, codexTurn(t))
	wantSearch := `text(ALL_TOOLS.filter(t => t.name.includes("` + codexSentinel + `")).map(t => "found tool: " + t.name).join("\n"));` + "\n"
	if d.tool != "exec" || d.args != wantSearch || tool != "functions.exec" || search != codexSentinel {
		t.Fatalf("first answer %+v (recorded tool %q, search %q), want exec searching ALL_TOOLS for %s: %q", d, tool, search, codexSentinel, wantSearch)
	}
	searched := [3]string{d.callID, d.args, "found tool: " + codexMCPTool}
	d, tool, search = exchange(t, s, rec, OpenAIResponses, codexTurn(t, searched))
	wantCall := "text(await tools." + codexMCPTool + "({}));\n"
	if d.tool != "exec" || d.args != wantCall || tool != "functions.exec/"+codexMCPTool || search != "" {
		t.Fatalf("second answer %+v (recorded tool %q, search %q), want exec calling %s: %q", d, tool, search, codexMCPTool, wantCall)
	}
	if req, _ := rec.last(); len(req.ToolResults) != 1 || !slices.Equal(req.ToolResults[0].Found, []string{codexMCPTool}) {
		t.Errorf("the search's result recorded as %+v, want it to declare %s", req.ToolResults, codexMCPTool)
	}
	called := [3]string{d.callID, d.args, `{"content":[{"type":"text","text":"acpprobe sentinel (stdio) answered. Marker: m"}]}`}
	if d, _, _ = exchange(t, s, rec, OpenAIResponses, codexTurn(t, searched, called)); d.tool != "" || d.text != "done" {
		t.Errorf("third answer %+v, want the text", d)
	}
}

// TestDeferredSearchBounded attacks the deferred round trip with agents that do not play
// along, each request after the first sent 20 times: a search whose result never declares the
// tool (it finds nothing, or echoes the name it did not find), an agent that sends the
// conversation of before the search again and again (the search's result never comes), one
// that sends the search's result again and again; and, for Codex, whose search tool is exec,
// a search result that declares the tool with JavaScript after its name. The script searches
// once and calls the tool once per installation, and answers the rest with its text
// ("missing" when the tool was never found), never a loop of searches; the program of its
// call names only the tool (a JavaScript identifier), never what followed it. A search
// result the script did not ask for (a conversation that already had one) is a tool result
// like any other: answered with the text, no search. Before, it drew a search (qwen), and
// Codex's turns ended in "missing".
func TestDeferredSearchBounded(t *testing.T) {
	qwen := func(string) string { return chatDeferred(qwenTools, "") }
	codex := func(string) string { return codexTurn(t) }
	for _, tc := range []struct {
		name    string
		dialect Dialect
		first   func(callID string) string // the first request (callID is "")
		after   func(callID string) string // the request sent again, after the first answer
		want    []string                   // the recorded tools of the answers that are tool calls
		text    string                     // every other answer's
	}{
		{"the search finds nothing", OpenAIChat, qwen, func(id string) string {
			return chatDeferred(qwenTools, chatResult(id, "tool_search", "No tools found matching 'probe_tool'."))
		}, []string{"tool_search"}, "missing"},
		{"the search's result only echoes the name", OpenAIChat, qwen, func(id string) string {
			return chatDeferred(qwenTools, chatResult(id, "tool_search", "Not found: mcp__srv__probe_tool"))
		}, []string{"tool_search"}, "missing"},
		{"the search's result never comes", OpenAIChat, qwen, qwen, []string{"tool_search"}, "missing"},
		{"the search's result again and again", OpenAIChat, qwen, func(id string) string {
			return chatDeferred(qwenTools, chatResult(id, "tool_search", `<function>{"name":"mcp__srv__probe_tool"}</function>`))
		}, []string{"tool_search", "tool_call/mcp__srv__probe_tool"}, "done"},
		{"a search result it did not ask for", OpenAIChat, func(string) string {
			return chatDeferred(qwenTools, chatResult("old", "tool_search", `<function>{"name":"mcp__srv__probe_tool"}</function>`))
		}, func(string) string {
			return chatDeferred(qwenTools, chatResult("old", "tool_search", `<function>{"name":"mcp__srv__probe_tool"}</function>`))
		}, nil, "done"},
		{"codex: ALL_TOOLS holds nothing of that name", OpenAIResponses, codex, func(id string) string {
			return codexTurn(t, [3]string{id, "text(…)", ""})
		}, []string{"functions.exec"}, "missing"},
		{"codex: the search's result never comes", OpenAIResponses, codex, codex, []string{"functions.exec"}, "missing"},
		{"codex: the search's result again and again, with JavaScript after the name", OpenAIResponses, codex, func(id string) string {
			return codexTurn(t, [3]string{id, "text(…)", "found tool: " + codexMCPTool + `({}));tools.exec_command({"cmd":"false"});//`})
		}, []string{"functions.exec", "functions.exec/" + codexMCPTool}, "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pick := Containing("probe_tool")
			if tc.dialect == OpenAIResponses {
				pick = Containing(codexSentinel)
			}
			rec := newRecorder()
			s := start(t, rec.options(ToolThenText(pick, func(Tool) map[string]any { return map[string]any{} }, "done", "missing")))
			var tools []string
			id, body := "", tc.first("")
			for i := range 21 {
				d, tool, _ := exchange(t, s, rec, tc.dialect, body)
				switch {
				case tool != "":
					tools = append(tools, tool)
					if strings.HasPrefix(d.args, "text(await") && d.args != "text(await tools."+codexMCPTool+"({}));\n" {
						t.Errorf("request %d: the call's program %q runs more than the tool", i+1, d.args)
					}
				case d.text != tc.text:
					t.Fatalf("request %d answered %+v, want %q", i+1, d, tc.text)
				}
				if i == 0 {
					id = d.callID
				}
				body = tc.after(id)
			}
			if got := strings.Join(tools, ","); got != strings.Join(tc.want, ",") {
				t.Errorf("tool calls %s, want %s", got, strings.Join(tc.want, ","))
			}
		})
	}
}
