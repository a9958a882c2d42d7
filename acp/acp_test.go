package acp

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

func TestIsAuthError(t *testing.T) {
	cases := []struct {
		err  *jsonrpc.Error
		want bool
	}{
		{&jsonrpc.Error{Code: -32000, Message: "Authentication required"}, true},
		{&jsonrpc.Error{Code: -32000, Message: "anything"}, true},
		{&jsonrpc.Error{Code: -32603, Message: "Gemini API key is missing or not configured."}, true},
		{&jsonrpc.Error{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"details":"Please run /login"}`)}, true},
		{&jsonrpc.Error{Code: -32603, Message: "not logged in"}, true},
		{&jsonrpc.Error{Code: -32603, Message: "Unauthorized"}, true},
		{&jsonrpc.Error{Code: -32603, Message: "Internal error", Data: json.RawMessage(`{"details":"Query closed before response received"}`)}, false},
		{&jsonrpc.Error{Code: -32602, Message: "Invalid params: author is required"}, false},
		{&jsonrpc.Error{Code: -32603, Message: "blogin failed"}, false},
		{nil, false},
	}
	for _, tc := range cases {
		if got := IsAuthError(tc.err); got != tc.want {
			t.Errorf("IsAuthError(%+v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestParseInitializeResultLenient(t *testing.T) {
	r := ParseInitializeResult(json.RawMessage(`{"protocolVersion":"1","agentCapabilities":[],"authMethods":{},"agentInfo":{"title":"no name"}}`))
	if r.VersionOK || r.Capabilities != nil || r.AuthMethods != nil || r.AgentInfo != nil {
		t.Errorf("wrong types should read as absent: %+v", r)
	}
	r = ParseInitializeResult(json.RawMessage(`{"protocolVersion":1.0,"agentInfo":{"name":"a","version":"2"}}`))
	if !r.VersionOK || r.ProtocolVersion != 1 || r.AgentInfo.Name != "a" || r.AgentInfo.Version != "2" {
		t.Errorf("got %+v", r)
	}
	if r := ParseInitializeResult(json.RawMessage(`{"protocolVersion":1.5}`)); r.VersionOK {
		t.Error("1.5 accepted as a version")
	}
	if r := ParseInitializeResult(nil); r.VersionOK {
		t.Error("nil accepted")
	}
}

func TestParseSessionResult(t *testing.T) {
	raw := json.RawMessage(`{"sessionId":"s1",
		"modes":{"currentModeId":"b","availableModes":[{"id":"a","name":"A"},7,{"id":"b","name":"B","description":"bee"}]},
		"models":{"currentModelId":"m1","availableModels":[{"modelId":"m1","name":"One"},{"modelId":"gpt/high","name":"High"}]},
		"configOptions":[
			{"id":"model","name":"Model","category":"model","type":"select","currentValue":"m1","options":[
				{"group":"fast","name":"Fast","options":[{"value":"m1","name":"One"}]},
				{"group":"smart","name":"Smart","options":[{"value":"m2","name":"Two","description":"d"}]}]},
			{"id":"effort","name":"Effort","category":"thought_level","type":"select","currentValue":"low","options":[{"value":"low","name":"Low"},{"value":"high","name":"High"}]},
			{"id":"web","name":"Web","type":"boolean","currentValue":true},
			"garbage"]}`)
	s := ParseSessionResult(raw)
	if s.SessionID != "s1" || s.CurrentModeID != "b" || len(s.Modes) != 2 || s.Modes[1].Description != "bee" {
		t.Errorf("modes: %+v", s)
	}
	if !s.HasLegacyModels || s.LegacyCurrentModel != "m1" || len(s.LegacyModels) != 2 || s.LegacyModels[1].ID != "gpt/high" {
		t.Errorf("legacy models: %+v", s.LegacyModels)
	}
	if len(s.ConfigOptions) != 3 {
		t.Fatalf("config options: %+v", s.ConfigOptions)
	}
	model := ModelOption(s.ConfigOptions)
	if model == nil || !slices.Equal(model.Values(), []string{"m1", "m2"}) || model.Options[1].Group != "Smart" || model.Current() != "m1" {
		t.Errorf("model option: %+v", model)
	}
	if tl := ThoughtLevelOption(s.ConfigOptions); tl == nil || tl.ID != "effort" || !slices.Equal(tl.Values(), []string{"low", "high"}) {
		t.Errorf("thought level: %+v", tl)
	}
	if b := s.ConfigOptions[2]; b.Type != "boolean" || string(b.CurrentValue) != "true" || b.Current() != "" {
		t.Errorf("boolean option: %+v", b)
	}
	if ModeOption(s.ConfigOptions) != nil {
		t.Error("found a mode option that is not there")
	}
}

func TestObject(t *testing.T) {
	o := ParseObject(json.RawMessage(`{"t":true,"f":false,"s":"x","n":null,"i":3,"fl":2.5,"o":{"k":1},"a":[1,2]}`))
	if !o.Bool("t") || o.Bool("f") || o.Bool("s") || o.String("s") != "x" || o.String("i") != "" {
		t.Error("bool/string")
	}
	if o.Has("n") || !o.Has("f") || o.Has("missing") {
		t.Error("Has")
	}
	if n, ok := o.Int("i"); !ok || n != 3 {
		t.Error("Int")
	}
	if _, ok := o.Int("fl"); ok {
		t.Error("2.5 read as an int")
	}
	if o.Object("o") == nil || o.Object("a") != nil || len(o.Array("a")) != 2 || o.Array("o") != nil {
		t.Error("Object/Array")
	}
	if !slices.Equal(o.Keys(), []string{"a", "f", "fl", "i", "n", "o", "s", "t"}) {
		t.Errorf("Keys = %v", o.Keys())
	}
	if ParseObject(json.RawMessage(`[1]`)) != nil || ParseObject(nil) != nil {
		t.Error("non-objects parsed")
	}
}

// The modes of today's agents, as they describe themselves: those that promise to ask before a
// write in the workspace, and those that do not.
func TestPromisesToAsk(t *testing.T) {
	for _, c := range []struct {
		id, name, description string
		asks                  bool
	}{
		{"default", "Manual", "Always ask before making changes", true},                              // claude-agent-acp 0.101.0
		{"auto", "Auto", "Claude handles permission decisions", false},                               // its default
		{"acceptEdits", "Accept edits", "Automatically accept all file edits", false},                //
		{"plan", "Plan", "Create a plan before making changes", false},                               //
		{"default", "Default", "Prompts for approval", true},                                         // gemini-cli 0.61.0
		{"autoEdit", "Auto Edit", "Auto-approves edit tools", false},                                 //
		{"yolo", "YOLO", "Auto-approves all tools", false},                                           //
		{"read-only", "Read-only", "Requires approval to edit files and access the internet.", true}, // codex-acp 2.6.0
		{"workspace-write", "Workspace access", "Edit workspace files; ask before writing outside the workspace or accessing the network.", false},
		{"agent", "Auto review", "Only ask for actions detected as potentially unsafe", false}, //
		{"agent-full-access", "Full access", "Unrestricted access to the internet and any file on your computer", false},
		{"read-only", "Read Only", "Codex can read files in the current workspace. Approval is required to edit files or access the internet.", true}, // codex-acp 0.16.0
		{"default", "Default", "Require approval for file edits or shell commands", true},                                                             // qwen-code 0.24.4
		{"auto-edit", "Auto Edit", "Automatically approve file edits", false},                                                                         //
		{"auto", "Auto", "LLM classifier auto-approves safe actions, blocks risky ones", false},                                                       //
		{"default", "Always Ask", "Prompts for permission on first use of each tool", true},                                                           // CodeBuddy Code 2.117.0
		{"dontAsk", "Don't Ask", "Never shows permission prompts; runs pre-approved and safe actions, denies anything that would require approval", false},
		{"bypassPermissions", "Bypass Permissions", "Skips all permission prompts", false},              //
		{"build", "build", "The default agent. Executes tools based on configured permissions.", false}, // opencode 1.18.33
		{"plan", "plan", "Plan mode. Disallows all edit tools.", false},                                 //
		{"default", "", "", false}, // a bare id promises nothing
	} {
		if got := PromisesToAsk(c.id, c.name, c.description); got != c.asks {
			t.Errorf("%s %q %q: promises to ask %v, want %v", c.id, c.name, c.description, got, c.asks)
		}
	}
}
