package derive

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// FuzzInference feeds arbitrary error objects to the zod/serde parser: it never panics, the
// branches it infers are well formed (a non-empty type, sorted unique required fields), and it
// keeps no more names than its bounds (seeds: errors from real agents, and errors naming more
// variants, or nesting deeper, than the bounds).
func FuzzInference(f *testing.F) {
	for _, name := range []string{"gemini-cli-0.61.0-empty-object.json", "claude-agent-acp-0.23.1-empty-object.json", "codex-acp-0.16.0-unknown-type.json"} {
		if b, err := os.ReadFile("testdata/errors/" + name); err == nil {
			if m, err := jsonrpc.Decode(b); err == nil {
				f.Add([]byte(m.Error))
			}
		}
	}
	f.Add([]byte(`{"code":-32602,"message":"unknown variant ` + "`x`" + `, expected one of ` + "`a`, `b`" + `","data":[{"code":"invalid_union","unionErrors":[{"issues":[{"code":"invalid_literal","expected":"text","path":["type"]}]}]}]}`))
	f.Add([]byte(serdeError(maxInferredBranches + 10)))
	f.Add([]byte(zodTree(maxInferredFields + 10)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m := &jsonrpc.Message{Error: json.RawMessage(raw)}
		e := m.Err()
		if e == nil {
			return
		}
		inf := newInference()
		inf.read(e)
		bs := inf.branches()
		if len(bs) > maxInferredBranches || len(inf.requiredFields()) > maxInferredFields {
			t.Fatalf("%d branches, %d fields without a branch: over the bounds", len(bs), len(inf.requiredFields()))
		}
		for _, b := range bs {
			if len(b.Required) > maxInferredFields {
				t.Fatalf("branch %s: %d required fields, over the bound", b.Type, len(b.Required))
			}
			if b.Type == "" {
				t.Fatalf("empty branch type from %s", raw)
			}
			for i := 1; i < len(b.Required); i++ {
				if b.Required[i-1] >= b.Required[i] {
					t.Fatalf("required fields not sorted and unique: %v", b.Required)
				}
			}
		}
	})
}
