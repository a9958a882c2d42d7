package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/acpprobe/acpprobe/emulator"
)

// TestProfileKeysSaySource: an agent named by an agents config entry chooses its backend
// profile by config name, one named by a registry id by registry id; so the route a report
// shows ("matched by config name codex") says which of the two it was.
func TestProfileKeysSaySource(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(config, []byte(`{"agents": {"codex": {"command": "sh", "args": ["-c", "exit 1"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want emulator.Keys
	}{
		{[]string{"--config", config, "codex"}, emulator.Keys{ConfigName: "codex"}},
		{[]string{"acptest-claude"}, emulator.Keys{RegistryID: "acptest-claude"}},
		{[]string{"--", "sh", "-c", "exit 1"}, emulator.Keys{}},
	} {
		opts, err := newTurnOptions(tc.args, Stdio{})
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		if opts.Turn.Keys != tc.want {
			t.Errorf("%q: keys %+v, want %+v", tc.args, opts.Turn.Keys, tc.want)
		}
	}
}
