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
