package emulator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/record"
)

// The file tools of the three verified agents, as they offer them (schemas trimmed).
var (
	claudeTools = []Tool{
		{Name: "Bash", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
		{Name: "Edit", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["file_path","old_string","new_string"]}`)},
		{Name: "Write", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"],"additionalProperties":false}`)},
	}
	geminiTools = []Tool{
		{Name: "replace", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"}},"required":["file_path","old_string","new_string"]}`)},
		{Name: "write_file", Schema: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}`)},
	}
	codexTools = []Tool{
		{Name: "exec_command", Schema: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}`)},
		{Name: "apply_patch", Custom: true},
	}
)

func TestWritesFiles(t *testing.T) {
	for _, tc := range []struct {
		tools []Tool
		want  string
	}{
		{claudeTools, "Write"},
		{geminiTools, "write_file"},
		{codexTools, "apply_patch"},
		{claudeTools[:2], "Edit"},
		{[]Tool{{Name: "save", Schema: json.RawMessage(`{"properties":{"path":{},"contents":{}}}`)}, {Name: "edit"}}, "save"},
		{[]Tool{{Name: "Bash"}}, ""},
	} {
		got, ok := WritesFiles()(tc.tools)
		if got.Name != tc.want || ok != (tc.want != "") {
			t.Errorf("WritesFiles picked %q (%v), want %q", got.Name, ok, tc.want)
		}
	}
	if got, _ := Named("nope", "Edit", "Write")(claudeTools); got.Name != "Edit" {
		t.Errorf("Named picked %q, want the first name offered", got.Name)
	}
}

func TestFileArgs(t *testing.T) {
	use, err := Use(claudeTools[2], FileArgs(claudeTools[2], "/w/f.txt", "a\nb\n"))
	if err != nil || string(use.Input) != `{"content":"a\nb\n","file_path":"/w/f.txt"}` {
		t.Errorf("Write call %s %v", use.Input, err)
	}
	use, err = Use(codexTools[1], FileArgs(codexTools[1], "/w/f.txt", "a\nb\n"))
	want := "*** Begin Patch\n*** Add File: /w/f.txt\n+a\n+b\n*** End Patch\n"
	if err != nil || !use.IsCustom || use.Custom != want || use.Input != nil {
		t.Errorf("apply_patch call %+v %v, want custom input %q", use, err, want)
	}
	fn := Tool{Name: "apply_patch", Schema: json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)}
	use, _ = Use(fn, FileArgs(fn, "f", "x"))
	var args map[string]string
	_ = json.Unmarshal(use.Input, &args)
	if !strings.HasPrefix(args["input"], "*** Begin Patch\n*** Add File: f\n+x\n") {
		t.Errorf("function apply_patch call %s", use.Input)
	}
	if _, err := Use(Tool{Name: "bad", Schema: json.RawMessage(`{"type":`)}, nil); err == nil {
		t.Errorf("a tool with an invalid schema gave no error")
	}
}

func TestToolThenText(t *testing.T) {
	script := WriteFile("/w/f", "x", "done")
	reply := script(&Call{Request: &record.ModelRequestInfo{}, Tools: geminiTools})
	if reply.Tool == nil || reply.Tool.Name != "write_file" {
		t.Fatalf("first reply %+v", reply)
	}
	reply = script(&Call{Request: &record.ModelRequestInfo{ToolResults: []record.ToolResult{{Name: "write_file", Latest: true}}}, Tools: geminiTools})
	if reply.Tool != nil || reply.Text != "done" {
		t.Errorf("reply after the result %+v", reply)
	}
	reply = script(&Call{Request: &record.ModelRequestInfo{ToolResults: []record.ToolResult{{Name: "write_file"}}}, Tools: geminiTools})
	if reply.Tool == nil {
		t.Errorf("an older result (not latest) must not end the round trip: %+v", reply)
	}
	reply = script(&Call{Request: &record.ModelRequestInfo{}, Tools: codexTools[:1]})
	if reply.Tool != nil || !strings.Contains(reply.Text, "no file-writing tool") {
		t.Errorf("no write tool: %+v", reply)
	}
}

// codex-acp offers an MCP server's tools inside a Responses "namespace" tool: they are read
// with their namespace, Containing finds them by the tool's own name, and the call names the
// namespace (without it codex runs no MCP tool).
func TestResponsesNamespaceTools(t *testing.T) {
	body := []byte(`{"model":"m","tools":[{"type":"function","name":"exec_command","parameters":{"type":"object"}},
		{"type":"namespace","name":"mcp__srv","description":"Tools in mcp__srv","tools":[{"type":"function","name":"probe_tool","parameters":{"type":"object","properties":{}}}]}],
		"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]}`)
	tr, err := parseResponses(body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tr.tools {
		names = append(names, tl.QualifiedName())
	}
	if strings.Join(names, ",") != "exec_command,mcp__srv.probe_tool" {
		t.Fatalf("tools %v, want exec_command and mcp__srv.probe_tool", names)
	}
	tool, ok := Containing("probe_tool")(tr.tools)
	if !ok || tool.Name != "probe_tool" || tool.Namespace != "mcp__srv" {
		t.Fatalf("Containing picked %+v, %v", tool, ok)
	}
	use, err := Use(tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	item := responsesToolItem(&answer{tool: use, toolID: "call_1"}, "completed", true)
	if item["name"] != "probe_tool" || item["namespace"] != "mcp__srv" || item["type"] != "function_call" {
		t.Errorf("function_call item %v, want name probe_tool in namespace mcp__srv", item)
	}
}

// TestResponsesAdditionalTools: codex-acp 2.6 offers its tools in an additional_tools item of
// the input, not in the request's tools, and declares the tools its free-form exec tool can
// call in that tool's description. They are all offered tools: the file-writing script finds
// apply_patch through exec, and its call is an exec call of the JavaScript that calls it.
func TestResponsesAdditionalTools(t *testing.T) {
	desc := "Run JavaScript code to orchestrate/compose tool calls\n### `apply_patch`\nexec tool declaration:\n```ts\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n```\n" +
		"### `exec_command`\nexec tool declaration:\n```ts\ndeclare const tools: { exec_command(args: {\n  cmd: string;\n}): Promise<unknown>; };\n```\n"
	body, _ := json.Marshal(map[string]any{"model": "gpt-6.1-sol", "stream": true, "input": []any{
		map[string]any{"type": "additional_tools", "role": "developer", "tools": []any{
			map[string]any{"type": "namespace", "name": "functions", "tools": []any{
				map[string]any{"type": "custom", "name": "exec", "description": desc},
				map[string]any{"type": "function", "name": "wait", "parameters": map[string]any{"type": "object"}}}}}},
		map[string]any{"type": "message", "role": "user", "content": []any{map[string]any{"type": "input_text", "text": "write it"}}},
	}})
	tr, err := parseResponses(body)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tr.tools {
		names = append(names, tl.QualifiedName())
	}
	if want := "functions.exec,functions.exec/apply_patch,functions.exec/exec_command,functions.wait"; strings.Join(names, ",") != want {
		t.Fatalf("tools %v, want %s", names, want)
	}
	tool, ok := WritesFiles()(tr.tools)
	if !ok || tool.Name != "apply_patch" || tool.Via != "exec" || !tool.Custom {
		t.Fatalf("WritesFiles picked %+v, %v", tool, ok)
	}
	use, err := Use(tool, FileArgs(tool, "/w/f.txt", "one line\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := "text(await tools.apply_patch(\"*** Begin Patch\\n*** Add File: /w/f.txt\\n+one line\\n*** End Patch\\n\"));\n"
	if use.Name != "exec" || !use.IsCustom || use.Namespace != "functions" || use.Nested != "apply_patch" || use.Custom != want {
		t.Errorf("call %+v, want exec calling apply_patch with %q", use, want)
	}
	obj, _ := Use(Tool{Name: "exec_command", Via: "exec", Namespace: "functions"}, map[string]any{"cmd": "true"})
	if obj.Custom != "text(await tools.exec_command({\"cmd\":\"true\"}));\n" {
		t.Errorf("an object-taking nested tool: %q", obj.Custom)
	}
}

// TestLatestToolResultPastSystemEntries: a system entry after the tool result (claude-agent-acp
// 0.101.0 adds a token count there) leaves the result the latest; only something the model
// said after it makes it older. Before, the write script saw no latest result and asked for
// the write again on every request.
func TestLatestToolResultPastSystemEntries(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tail   string
		latest bool
	}{
		{"last", ``, true},
		{"a system entry after it", `,{"role":"system","content":[{"type":"text","text":"<total_tokens>1 tokens left</total_tokens>"}]}`, true},
		{"an assistant answer after it", `,{"role":"assistant","content":[{"type":"text","text":"done"}]}`, false},
	} {
		body := []byte(`{"model":"m","messages":[{"role":"user","content":"write"},
			{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"File created"}]}` + tc.tail + `]}`)
		tr, err := parseAnthropic(body)
		if err != nil {
			t.Fatal(err)
		}
		if len(tr.results) != 1 || tr.results[0].Latest != tc.latest {
			t.Errorf("%s: results %+v, want one, latest %v", tc.name, tr.results, tc.latest)
		}
	}
}
