package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// longUsedHome makes a HOME shaped like a long-used machine's: files spread over the places
// agents keep their state (most under ~/.claude/projects, as a long-used Claude Code has
// them), and top entries of HOME and ~/.config that are no agent's.
func longUsedHome(tb testing.TB, files, top int) string {
	tb.Helper()
	home := tb.TempDir()
	places := []string{".claude/projects", ".claude/projects", ".claude/projects", ".codex/sessions", ".gemini/tmp", ".qwen/tmp", ".local/share/opencode/storage"}
	made := map[string]bool{}
	for i := range files {
		dir := filepath.Join(home, places[i%len(places)], fmt.Sprintf("p%03d", i/100%500))
		if !made[dir] {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				tb.Fatal(err)
			}
			made[dir] = true
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%05d.jsonl", i)), []byte("{}\n"), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	for i := range top {
		for _, d := range []string{"", ".config"} {
			if err := os.MkdirAll(filepath.Join(home, d, fmt.Sprintf(".tool-%03d", i)), 0o755); err != nil {
				tb.Fatal(err)
			}
		}
	}
	sandbox.PastTick() // made before the probe, as a long-used HOME's files are
	return home
}

// probeInventory is what a probe without a sandbox does to the real HOME: the watch of the
// agents' places and of HOME's top entries started before the agent, finished after it. With
// between, the changes are made once every directory is watched (the window before a watch is
// TestChangedBeforeWatched's).
func probeInventory(home string, between func()) record.Files {
	environ := []string{"HOME=" + home}
	w := sandbox.WatchHome(home, sandbox.HomePaths(home, environ), 0)
	defer w.Close()
	if between != nil {
		sandbox.WaitWalk(w)
		between()
	}
	return w.Finish()
}

// BenchmarkRealHome is the inventory a default probe takes of the real HOME (issue 26, item
// 3): an empty HOME beside one shaped like a long-used machine's (50,000 files under the
// agents' places, 300 top entries in HOME and in ~/.config), in the same run. Target: the
// large HOME adds at most 3 ms to a probe.
//
// ns/op of /worst is the worst case, WatchHome then Finish with no agent between (the walk
// cannot overlap anything), and Close at once (which then waits for the kernel to free the
// watches, ~15 ms, where Run closes last). critical-ms/op is what a probe waits for when its
// agent outlasts the walk (WatchHome, and Finish once the walk is over); cpu-ms/op is the CPU
// of the whole watch.
func BenchmarkRealHome(b *testing.B) {
	for _, c := range []struct {
		name       string
		files, top int
	}{{"empty", 0, 0}, {"50000files", 50_000, 300}} {
		b.Run(c.name, func(b *testing.B) {
			home := longUsedHome(b, c.files, c.top)
			paths := sandbox.HomePaths(home, []string{"HOME=" + home})
			var critical time.Duration
			cpu := cpuTime()
			for b.Loop() {
				t := time.Now()
				w := sandbox.WatchHome(home, paths, 0)
				critical += time.Since(t)
				sandbox.WaitWalk(w) // the agent's time
				t = time.Now()
				f := w.Finish()
				critical += time.Since(t)
				w.Close() // as Run does, last
				if f.Created+f.Changed+f.Deleted != 0 || f.Capped {
					b.Fatalf("%+v", f)
				}
			}
			b.ReportMetric(float64(critical.Microseconds())/1000/float64(b.N), "critical-ms/op")
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
		b.Run(c.name+"/worst", func(b *testing.B) {
			home := longUsedHome(b, c.files, c.top)
			for b.Loop() {
				if f := probeInventory(home, nil); f.Created+f.Changed+f.Deleted != 0 || f.Capped {
					b.Fatalf("%+v", f)
				}
			}
		})
	}
}

// cpuTime is the CPU this process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestLongUsedHomeStillSeen: in a HOME of 50,000 files under the agents' places and 300 top
// entries, every kind of change is still reported: a file created, one changed, one deleted,
// one created 200 levels deep, and a new top entry of HOME and of ~/.config; nothing is
// capped, and nothing else is reported.
func TestLongUsedHomeStillSeen(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50,000 files")
	}
	home := longUsedHome(t, 50_000, 300)
	deep := filepath.Join(home, ".codex", "sessions", strings.Repeat("d/", 200), "deep.jsonl")
	f := probeInventory(home, func() {
		mkfile(t, filepath.Join(home, ".claude", "projects", "p001", "new.jsonl"), 5)
		mkfile(t, filepath.Join(home, ".gemini", "tmp", "p000", "s00004.jsonl"), 9) // changed: 3 -> 9 bytes
		if err := os.Remove(filepath.Join(home, ".qwen", "tmp", "p000", "s00005.jsonl")); err != nil {
			t.Fatal(err)
		}
		mkfile(t, deep, 1)
		mkfile(t, filepath.Join(home, ".newagent", "state.json"), 2)
		mkfile(t, filepath.Join(home, ".config", "newagent", "config.json"), 3)
	})
	var got []string
	for _, c := range f.Changes {
		if c.Kind == "file" {
			got = append(got, c.Change+" "+c.Path)
		}
	}
	want := []string{
		"changed ~/.gemini/tmp/p000/s00004.jsonl",
		"created ~/.claude/projects/p001/new.jsonl",
		"created ~/" + strings.TrimPrefix(deep, home+"/"),
		"created ~/.config/newagent/config.json",
		"created ~/.newagent/state.json",
		"deleted ~/.qwen/tmp/p000/s00005.jsonl",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("file changes:\n got %q\nwant %q", got, want)
	}
	if f.Capped || f.Walked < 50_000 {
		t.Errorf("walked %d entries, capped %v: want every file looked at", f.Walked, f.Capped)
	}
}
