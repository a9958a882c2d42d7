package main

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadShimReport: one pair of lines per agent process, in any order when the agents ran
// at once; a shim that was killed before its usage line leaves its run not ok.
func TestReadShimReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report")
	report := "agent 100\nagent 200\nshim 200 1500 500 2048 9000\nshim 100 3000 1000 1024 12000\nagent 300\n"
	if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []shimRun{
		{agentPID: 100, user: 3, sys: 1, rssKB: 1024, lifeMs: 12, ok: true},
		{agentPID: 200, user: 1.5, sys: 0.5, rssKB: 2048, lifeMs: 9, ok: true},
		{agentPID: 300},
	}
	if got := readShimReport(path); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if got := readShimReport(filepath.Join(t.TempDir(), "none")); got != nil {
		t.Fatalf("no report: got %+v, want nil", got)
	}
}
