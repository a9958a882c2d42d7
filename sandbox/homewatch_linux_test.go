package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// smallHome makes a HOME with a few entries in the agents' places, and a directory outside
// them (outside) holding many files, for links to point at.
func smallHome(t *testing.T) (home, outside string) {
	t.Helper()
	home, outside = t.TempDir(), t.TempDir()
	for _, p := range []string{".codex/sessions/a/1.jsonl", ".codex/sessions/a/2.jsonl", ".codex/sessions/a/3.jsonl",
		".codex/sessions/b/9.jsonl", ".codex/config.toml", ".claude/projects/p/x.jsonl", ".claude/projects/p/y.jsonl",
		".gemini/tmp/t/z.json", ".claude.json"} {
		mkfile(t, filepath.Join(home, p), 3)
	}
	for i := range 100 {
		mkfile(t, filepath.Join(outside, fmt.Sprintf("secret%03d", i)), 1)
	}
	// A watched place that is a link (a dotfile manager's), followed.
	mkfile(t, filepath.Join(outside, "cursor-a", "a.json"), 1)
	mkfile(t, filepath.Join(outside, "cursor-b", "b.json"), 1)
	mustDo(t, os.Symlink(filepath.Join(outside, "cursor-a"), filepath.Join(home, ".cursor")))
	sandbox.PastTick()
	return home, outside
}

// watched runs a watch of home's agents' places around during (once every directory is watched
// when wait), and returns its report beside the truth: Diff of snapshots taken before the watch
// started and after it finished, and the watch.
func watched(t *testing.T, home string, wait bool, during func()) (got, truth record.Files, w *sandbox.HomeWatch) {
	t.Helper()
	env := []string{"HOME=" + home}
	paths := sandbox.HomePaths(home, env)
	before, top := sandbox.SnapshotHome(home, paths, 0), sandbox.TopLevel(home)
	w = sandbox.WatchHome(home, paths, 0)
	defer w.Close()
	if wait {
		sandbox.WaitWalk(w)
	}
	during()
	got = w.Finish()
	after := sandbox.SnapshotHome(home, paths, 0)
	if fresh := sandbox.NewTopLevel(home, top, paths); len(fresh) > 0 {
		after = sandbox.Join(after, sandbox.SnapshotHome(home, fresh, 0))
	}
	return got, sandbox.Diff(before, after), w
}

// exact checks that got reports what truth does, change for change, and nothing unseen.
func exact(t *testing.T, got, truth record.Files) {
	t.Helper()
	if !reflect.DeepEqual(got.Changes, truth.Changes) {
		g, w := map[record.FileChange]bool{}, map[record.FileChange]bool{}
		for _, c := range got.Changes {
			g[c] = true
		}
		for _, c := range truth.Changes {
			w[c] = true
		}
		for c := range g {
			if !w[c] {
				t.Errorf("reported, untrue: %+v", c)
			}
		}
		for c := range w {
			if !g[c] {
				t.Errorf("not reported: %+v", c)
			}
		}
	}
	if got.Created != truth.Created || got.Changed != truth.Changed || got.Deleted != truth.Deleted || got.Capped || len(got.Unseen) > 0 {
		t.Errorf("counts %d/%d/%d capped %v unseen %v, want %d/%d/%d", got.Created, got.Changed, got.Deleted, got.Capped, got.Unseen,
			truth.Created, truth.Changed, truth.Deleted)
	}
}

// sound checks that every change got names is true (in truth, or a true creation it names as
// a change where the file system keeps no birth time), and that every true change it does not
// name is beneath a path its Unseen names: never silently missed.
func sound(t *testing.T, got, truth record.Files) {
	t.Helper()
	want := map[string]string{}
	for _, c := range truth.Changes {
		want[c.Path] = c.Change
	}
	named := map[string]bool{}
	for _, c := range got.Changes {
		named[c.Path] = true
		if w := want[c.Path]; w != c.Change && !(w == "created" && c.Change == "changed") {
			t.Errorf("reported %s %s; the truth is %q", c.Change, c.Path, w)
		}
	}
	for _, c := range truth.Changes {
		if named[c.Path] {
			continue
		}
		if !slicesContainsFunc(got.Unseen, func(u record.Unseen) bool { return c.Path == u.Path || strings.HasPrefix(c.Path, u.Path+"/") }) {
			t.Errorf("%s %s neither reported nor beneath an unseen path %v", c.Change, c.Path, got.Unseen)
		}
	}
}

func slicesContainsFunc(us []record.Unseen, f func(record.Unseen) bool) bool {
	for _, u := range us {
		if f(u) {
			return true
		}
	}
	return false
}

// hostileRun is what an agent does to home once watched: every kind of change, a directory
// made deep, one renamed, one removed with what it held, one replaced by a link to a tree
// outside, a watched place made that was not there (in a new top entry of HOME), the link that
// is a watched place pointed elsewhere, and a new top entry of HOME.
func hostileRun(t *testing.T, home, outside string) func() {
	return func() {
		mkfile(t, filepath.Join(home, ".codex/sessions/a/new.jsonl"), 5)
		mkfile(t, filepath.Join(home, ".codex/config.toml"), 11)
		mkfile(t, filepath.Join(home, ".claude.json"), 7)
		mustDo(t, os.Remove(filepath.Join(home, ".codex/sessions/a/2.jsonl")))
		mkfile(t, filepath.Join(home, ".codex/sessions", strings.Repeat("d/", 30), "deep.jsonl"), 1)
		mustDo(t, os.Rename(filepath.Join(home, ".codex/sessions/b"), filepath.Join(home, ".codex/sessions/c")))
		mustDo(t, os.RemoveAll(filepath.Join(home, ".claude/projects/p")))
		mustDo(t, os.RemoveAll(filepath.Join(home, ".gemini/tmp/t")))
		mustDo(t, os.Symlink(outside, filepath.Join(home, ".gemini/tmp/t")))
		mkfile(t, filepath.Join(home, ".qwen/settings.json"), 2)
		mkfile(t, filepath.Join(home, ".newagent/state.json"), 2)
		mkfile(t, filepath.Join(home, ".config/opencode/opencode.json"), 2) // a new top entry holding a watched place
		mustDo(t, os.Remove(filepath.Join(home, ".cursor")))
		mustDo(t, os.Symlink(filepath.Join(outside, "cursor-b"), filepath.Join(home, ".cursor"))) // no event says so
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWatchEachKind: what an agent does once every directory is watched is reported exactly as
// comparing snapshots before and after would, and the link planted is not followed.
func TestWatchEachKind(t *testing.T) {
	home, outside := smallHome(t)
	got, truth, _ := watched(t, home, true, hostileRun(t, home, outside))
	exact(t, got, truth)
	if truth.Created < 6 || truth.Deleted < 4 || truth.Changed != 2 {
		t.Errorf("the run did not do what it should: %+v", truth)
	}
	for _, c := range got.Changes {
		if strings.Contains(c.Path, "secret") {
			t.Errorf("followed the link: %s", c.Path)
		}
	}
}

// TestWatchFallbacks: with the events overflowing (an agent flooding the directories: a bound on
// the names kept) or no watch to be had (max_user_watches reached), every directory is walked
// again at the end, and the report is as exact.
func TestWatchFallbacks(t *testing.T) {
	for _, c := range []struct {
		name  string
		limit func() func()
		taken func(*sandbox.HomeWatch) bool // the fallback was taken
	}{
		{"overflow", func() func() { return sandbox.KeepEvents(8) }, sandbox.Overflowed},
		{"nowatches", sandbox.NoWatchesLeft, func(w *sandbox.HomeWatch) bool { return sandbox.Unwatched(w) > 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer c.limit()()
			home, outside := smallHome(t)
			run := hostileRun(t, home, outside)
			got, truth, w := watched(t, home, true, func() {
				run()
				for i := range 200 {
					mkfile(t, filepath.Join(home, ".codex/sessions/a", fmt.Sprintf("flood%03d", i)), 1)
				}
			})
			exact(t, got, truth)
			if truth.Created < 200 {
				t.Errorf("the flood was not made: %+v", truth)
			}
			if !c.taken(w) {
				t.Error("the fallback was not taken")
			}
		})
	}
}

// TestChangedBeforeWatched: what changes after the start but before the walk watches its
// directory is told by its ctime: a file made (created, or changed where the file system keeps
// no birth time) and one grown are reported; one removed cannot be named, and its directory is
// in Unseen, saying so.
func TestChangedBeforeWatched(t *testing.T) {
	home, _ := smallHome(t)
	dir := filepath.Join(home, ".codex/sessions/a")
	defer sandbox.OnWatchStart(func() {
		mkfile(t, filepath.Join(dir, "new.jsonl"), 5)
		mkfile(t, filepath.Join(dir, "1.jsonl"), 9)
		mustDo(t, os.Remove(filepath.Join(dir, "2.jsonl")))
	})()
	got, truth, _ := watched(t, home, true, func() {})
	sound(t, got, truth)
	var changes []string
	for _, c := range got.Changes {
		changes = append(changes, c.Change+" "+c.Path)
	}
	if len(changes) != 2 || changes[0] != "changed ~/.codex/sessions/a/1.jsonl" || !strings.HasSuffix(changes[1], " ~/.codex/sessions/a/new.jsonl") {
		t.Errorf("changes %q, want 1.jsonl changed and new.jsonl created", changes)
	}
	want := record.Unseen{Path: "~/.codex/sessions/a", Reason: "changed after the start, before it was watched: an entry removed from it then cannot be named"}
	if !slicesContainsFunc(got.Unseen, func(u record.Unseen) bool { return u == want }) {
		t.Errorf("unseen %+v, want %+v", got.Unseen, want)
	}
}

// TestWatchHostileDuringWalk: a directory swapped for another, one replaced by a link to a tree
// outside, and a file removed, each between the listing of their directory and the walk's look
// inside: no link is followed, and no change is missed silently.
func TestWatchHostileDuringWalk(t *testing.T) {
	home, outside := smallHome(t)
	sessions := filepath.Join(home, ".codex/sessions")
	defer sandbox.OnListed(func(label string) {
		switch label {
		case "~/.codex/sessions":
			mustDo(t, os.Rename(filepath.Join(sessions, "a"), filepath.Join(sessions, "gone")))
			mustDo(t, os.Rename(filepath.Join(sessions, "b"), filepath.Join(sessions, "a")))
		case "~/.claude/projects":
			mustDo(t, os.RemoveAll(filepath.Join(home, ".claude/projects/p")))
			mustDo(t, os.Symlink(outside, filepath.Join(home, ".claude/projects/p")))
		case "~/.gemini/tmp/t":
			mustDo(t, os.Remove(filepath.Join(home, ".gemini/tmp/t/z.json")))
		}
	})()
	got, truth, _ := watched(t, home, false, func() {})
	sound(t, got, truth)
	for _, c := range got.Changes {
		if strings.Contains(c.Path, "secret") {
			t.Errorf("followed the link: %s", c.Path)
		}
	}
	if got.Walked > 40 {
		t.Errorf("walked %d entries: a link was followed", got.Walked)
	}
	var created []string
	for _, c := range got.Changes {
		if c.Change == "created" {
			created = append(created, c.Path)
		}
	}
	if want := []string{"~/.claude/projects/p", "~/.codex/sessions/gone/1.jsonl", "~/.codex/sessions/gone/2.jsonl", "~/.codex/sessions/gone/3.jsonl"}; !reflect.DeepEqual(created, want) {
		t.Errorf("created %q, want %q", created, want)
	}
}

// TestWatchResources: a watch holds one inotify instance, closed by Close whether Finish ran or
// not (a run that fails before its agent ends), and a walk capped by its bound ends with it.
func TestWatchResources(t *testing.T) {
	home, _ := smallHome(t)
	paths := sandbox.HomePaths(home, []string{"HOME=" + home})
	base := inotifyFds(t)
	w := sandbox.WatchHome(home, paths, 0)
	if n := inotifyFds(t); n != base+1 {
		t.Errorf("%d inotify instances while watching, want %d", n, base+1)
	}
	w.Close()
	if n := inotifyFds(t); n != base {
		t.Errorf("%d inotify instances after Close without Finish, want %d", n, base)
	}
	w = sandbox.WatchHome(home, paths, 4)
	f := w.Finish()
	w.Close()
	if n := inotifyFds(t); n != base {
		t.Errorf("%d inotify instances after Finish and Close, want %d", n, base)
	}
	if !f.Capped || f.Walked > 8 {
		t.Errorf("walked %d, capped %v: want the bound of 4 (and 4 more at the end) kept", f.Walked, f.Capped)
	}
}

// inotifyFds counts this process's inotify instances.
func inotifyFds(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && l == "anon_inode:inotify" {
			n++
		}
	}
	return n
}
