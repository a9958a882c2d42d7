package clientprofile

import (
	"context"
	"testing"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/internal/recordtest"
)

// TestProfilesReachTheOptInRule checks that what a profile declares is what the judge reads
// of the recorded initialize: protocol.update-opt-in fires on a notice sent to the minimal
// client and stays silent for the full profile, which declares session.notices.
func TestProfilesReachTheOptInRule(t *testing.T) {
	for name, want := range map[string]int{"minimal": 1, "zed": 1, "full": 0} {
		p := mustGet(name)
		frames := recordtest.Frames(t, `> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":`+string(p.ClientCapabilities)+`}}
< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"a","version":"1"}}}
< {"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"notice","severity":"warning","title":"MCP server unavailable"}}}
! eof
! exit {"code":0,"signal":"","afterStdinCloseMs":1,"by":"stdin"}
! done
`)
		r, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, f := range r.Findings {
			if f.ID == "protocol.update-opt-in" {
				got++
			}
		}
		if got != want {
			t.Errorf("%s: %d protocol.update-opt-in findings, want %d", name, got, want)
		}
	}
}
