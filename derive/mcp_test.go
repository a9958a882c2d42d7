package derive

import (
	"fmt"
	"testing"

	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/record"
)

// TestMCPVisibleThroughSearch: an agent that defers the sentinel's tool never offers it in a
// request's tools; the tool is visible to the model when the result of the model's search
// declares it (record.ToolResult.Found), as qwen-code's and CodeBuddy Code's do, and then
// asked for through their invoke tool. A search result that only names it (it did not find
// it) leaves it invisible. Before, both were reported invisible: stopped at visible.
func TestMCPVisibleThroughSearch(t *testing.T) {
	for _, tc := range []struct {
		name, result, want string
	}{
		{"declared", `"found":["mcp__s__probe_tool"],"content":"<functions>…"`, ""},
		{"only named", `"content":"Not found: mcp__s__probe_tool"`, "visible"},
	} {
		frames := recordtest.Frames(t, fmt.Sprintf(`! mcp-sentinels {"sentinels":[{"transport":"stdio","name":"s","tool":"probe_tool","marker":"mark-1"}]}
! mcp {"transport":"stdio","kind":"message","method":"initialize"}
! mcp {"transport":"stdio","kind":"message","method":"tools/list"}
! mcp {"transport":"stdio","kind":"message","method":"tools/call","tool":"probe_tool"}
! model-request {"seq":1,"endpoint":"generate","tools":["tool_search","tool_call"]}
! model-response {"seq":1,"answer":"toolCall","tool":"tool_search","toolCallId":"c1","search":"probe_tool"}
! model-request {"seq":2,"endpoint":"generate","tools":["tool_search","tool_call"],"toolResults":[{"callId":"c1","name":"tool_search","latest":true,%s}]}
! model-response {"seq":2,"answer":"toolCall","tool":"tool_call/mcp__s__probe_tool","toolCallId":"c2"}
! model-request {"seq":3,"endpoint":"generate","toolResults":[{"callId":"c2","name":"tool_call","latest":true,"content":"answered: mark-1"}]}
`, tc.result))
		truths := mcpTruths(record.New(frames), frames)
		if len(truths) != 1 {
			t.Fatalf("%s: truths %+v", tc.name, truths)
		}
		m := truths[0]
		if m.Visible == nil || *m.Visible != (tc.want == "") || m.Asked == nil || !*m.Asked || m.StoppedAt != tc.want {
			t.Errorf("%s: visible %v asked %v stopped at %q, want stopped at %q", tc.name, show(m.Visible), show(m.Asked), m.StoppedAt, tc.want)
		}
	}
}

func show(b *bool) string {
	if b == nil {
		return "?"
	}
	return fmt.Sprint(*b)
}
