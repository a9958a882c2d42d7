package schema

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func mustLoad(t *testing.T, name string) *Set {
	t.Helper()
	s, err := Load(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestTypeFor(t *testing.T) {
	s := mustLoad(t, V1)
	cases := []struct {
		method string
		side   Side
		part   Part
		want   string
	}{
		{"initialize", HandledByAgent, Result, "InitializeResponse"},
		{"initialize", HandledByAgent, Params, "InitializeRequest"},
		{"session/new", HandledByAgent, Result, "NewSessionResponse"},
		{"session/update", HandledByClient, Notification, "SessionNotification"},
		{"session/request_permission", HandledByClient, Params, "RequestPermissionRequest"},
		{"session/request_permission", HandledByClient, Result, "RequestPermissionResponse"},
		{"session/cancel", HandledByAgent, Notification, "CancelNotification"},
	}
	for _, tc := range cases {
		if got, ok := s.TypeFor(tc.method, tc.side, tc.part); !ok || got != tc.want {
			t.Errorf("TypeFor(%s, %s, %s) = %q, %v; want %q", tc.method, tc.side, tc.part, got, ok, tc.want)
		}
	}
	if _, ok := s.TypeFor("session/fork", HandledByAgent, Result); ok {
		t.Error("session/fork is unstable: not in the stable set")
	}
	u := mustLoad(t, V1Unstable)
	if got, ok := u.TypeFor("session/fork", HandledByAgent, Result); !ok || got != "ForkSessionResponse" {
		t.Errorf("unstable fork = %q %v", got, ok)
	}
	if _, err := Load("v9"); err == nil || !strings.Contains(err.Error(), "v1, v1-unstable, v2") {
		t.Errorf("unknown set error = %v", err)
	}
}

func TestValidate(t *testing.T) {
	s := mustLoad(t, V1)
	ok := `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true}},"authMethods":[{"id":"a","name":"A"}],"agentInfo":{"name":"x","version":"1"}}`
	if v, err := s.Validate("InitializeResponse", json.RawMessage(ok)); err != nil || v != nil {
		t.Errorf("valid initialize: %v %v", v, err)
	}
	bad := `{"protocolVersion":"1","agentCapabilities":{"loadSession":"yes"}}`
	v, err := s.Validate("InitializeResponse", json.RawMessage(bad))
	if err != nil || len(v) == 0 {
		t.Fatalf("invalid initialize accepted: %v %v", v, err)
	}
	pointers := map[string]bool{}
	for _, x := range v {
		pointers[x.Pointer] = true
		if x.Message == "" {
			t.Errorf("violation without message: %+v", x)
		}
	}
	if !pointers["/protocolVersion"] || !pointers["/agentCapabilities/loadSession"] {
		t.Errorf("violations point at %v", pointers)
	}
	if v, _ := s.Validate("NewSessionResponse", json.RawMessage(`{}`)); len(v) == 0 || !strings.Contains(v[0].Message, "sessionId") {
		t.Errorf("missing sessionId not reported: %v", v)
	}
	if v, _ := s.Validate("Error", json.RawMessage(`{"code":-32601,"message":"Method not found"}`)); v != nil {
		t.Errorf("valid error object rejected: %v", v)
	}
	if v, _ := s.Validate("Error", json.RawMessage(`{"code":"x"}`)); len(v) == 0 {
		t.Error("invalid error object accepted")
	}
}

func TestUnknownKeys(t *testing.T) {
	s := mustLoad(t, V1)
	cases := []struct {
		def, instance string
		want          []UnknownKey
	}{
		{"InitializeResponse", `{"protocolVersion":1,"agentCapabilities":{"_meta":{"x":{"deep":1}},"loadSession":true,"streaming":true},"authMethods":[{"id":"a","name":"A","vars":[]}],"extra":1}`,
			[]UnknownKey{{"", "extra"}, {"/agentCapabilities", "streaming"}, {"/authMethods/0", "vars"}}},
		{"NewSessionResponse", `{"sessionId":"s","models":{"currentModelId":"m","availableModels":[]},"modes":{"currentModeId":"a","availableModes":[{"id":"a","name":"A","icon":"x"}]}}`,
			[]UnknownKey{{"", "models"}, {"/modes/availableModes/0", "icon"}}},
		{"SessionNotification", `{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi","lang":"en"},"_meta":{"a":1}}}`,
			[]UnknownKey{{"/update/content", "lang"}}},
		{"SessionNotification", `{"sessionId":"s","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"c","description":"d","input":{"hint":"h"}}]}}`,
			nil},
		// An invalid variant is still judged by its discriminator.
		{"SessionNotification", `{"sessionId":"s","update":{"sessionUpdate":"current_mode_update","bogus":true}}`,
			[]UnknownKey{{"/update", "bogus"}}},
		// Free-form values (rawInput) and maps are not judged.
		{"SessionNotification", `{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","title":"x","rawInput":{"anything":1}}}`,
			nil},
	}
	for _, tc := range cases {
		got, err := s.UnknownKeys(tc.def, json.RawMessage(tc.instance))
		if err != nil {
			t.Fatalf("%s: %v", tc.def, err)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s %s:\n got %v\nwant %v", tc.def, tc.instance, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: got %v want %v", tc.def, got, tc.want)
				break
			}
		}
	}
}

func TestDiscriminatorValues(t *testing.T) {
	s := mustLoad(t, V1)
	if got := strings.Join(s.DiscriminatorValues("ContentBlock", "type"), ","); got != "text,image,audio,resource_link,resource" {
		t.Errorf("content types = %s", got)
	}
	updates := strings.Join(s.DiscriminatorValues("SessionUpdate", "sessionUpdate"), ",")
	for _, u := range []string{"agent_message_chunk", "tool_call", "plan", "config_option_update", "usage_update"} {
		if !strings.Contains(updates, u) {
			t.Errorf("session updates %s lack %s", updates, u)
		}
	}
	if strings.Contains(updates, "notice") {
		t.Error("notice is not in stable 1.21")
	}
	next := mustLoad(t, V1Next)
	if !strings.Contains(strings.Join(next.DiscriminatorValues("SessionUpdate", "sessionUpdate"), ","), "notice") {
		t.Error("notice is in the newer schema")
	}
	if got := strings.Join(s.DiscriminatorValues("AuthMethod", "type"), ","); got != "terminal" {
		t.Errorf("auth types = %s", got)
	}
}

// TestPinnedSetsAreValidSchemas compiles every pinned set with jsonschema/v6 under an
// ordinary URL, where it validates the document against the JSON Schema metaschema (the
// generator reads the documents as they are).
func TestPinnedSetsAreValidSchemas(t *testing.T) {
	for _, s := range sets {
		name, path := s.Name, s.s.file
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("file:///"+name+".json", doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, err := c.Compile("file:///" + name + ".json#/$defs/InitializeResponse"); err != nil {
			t.Errorf("%s does not pass the metaschema: %v", path, err)
		}
	}
	// And the check can fail: a type with a keyword of the wrong type is refused.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"X":{"type":5}}}`))
	c := jsonschema.NewCompiler()
	_ = c.AddResource("file:///bad.json", bad)
	if _, err := c.Compile("file:///bad.json#/$defs/X"); err == nil {
		t.Error("an invalid schema compiled")
	}
}
