package derive

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// TestInferBranches reads error answers recorded from real agents (testdata/errors) and checks
// what the parser infers about the content blocks session/prompt accepts.
func TestInferBranches(t *testing.T) {
	cases := []struct {
		files    []string
		style    string
		branches string // "type{required}" joined by spaces
		loose    string
	}{
		{[]string{"gemini-cli-0.61.0-empty-object.json"}, "zod-union",
			"text{text,type} image{data,mimeType,type} audio{data,mimeType,type} resource_link{name,type,uri} resource{resource,type}", ""},
		{[]string{"claude-agent-acp-0.23.1-empty-object.json"}, "zod-tree",
			"text{} image{} audio{} resource_link{} resource{}", "data,mimeType,name,resource,text,uri"},
		{[]string{"codex-acp-0.16.0-empty-object.json", "codex-acp-0.16.0-unknown-type.json"}, "serde",
			"text{} image{} audio{} resource_link{} resource{}", "type"},
	}
	for _, tc := range cases {
		inf := newInference()
		for _, f := range tc.files {
			raw, err := os.ReadFile("testdata/errors/" + f)
			if err != nil {
				t.Fatal(err)
			}
			m, err := jsonrpc.Decode(raw)
			if err != nil || m.Err() == nil {
				t.Fatalf("%s: %v", f, err)
			}
			inf.read(m.Err())
		}
		var got []string
		for _, b := range inf.branches() {
			got = append(got, fmt.Sprintf("%s{%s}", b.Type, strings.Join(b.Required, ",")))
		}
		if inf.style != tc.style || strings.Join(got, " ") != tc.branches || strings.Join(inf.requiredFields(), ",") != tc.loose {
			t.Errorf("%v:\n style %q branches %q loose %q\n want %q %q %q", tc.files, inf.style, strings.Join(got, " "), inf.requiredFields(), tc.style, tc.branches, tc.loose)
		}
	}
}
