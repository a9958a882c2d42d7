package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A replay the teardown stops ends as the recorded agent did then: with the status its signal
// handler exited with (0 here), not killed by the signal.
func TestReplayEndsAsRecordedOnSignal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t.ndjson")
	lines := `{"acpprobeTranscript":1,"acpprobeVersion":"test","tool":"probe","command":"x","argv":["x"],"cwd":"/","start":"2026-12-01T00:00:00Z"}
{"seq":1,"t":0,"dir":"event","kind":"teardown","data":{"step":"ladder"}}
{"seq":2,"t":1,"dir":"event","kind":"eof"}
{"seq":3,"t":2,"dir":"event","kind":"exit","data":{"code":0,"signal":"","afterStdinCloseMs":null,"by":"sigterm"}}
`
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the teardown's signal
	if err := replayRun(ctx, &ReplayOptions{IO: Stdio{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, Transcript: path}); err != nil {
		t.Errorf("replay stopped by the signal: %v, want the recorded status 0", err)
	}
}
