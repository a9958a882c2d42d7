//go:build unix && !linux

package sandbox

import "github.com/acpprobe/acpprobe/record"

// HomeWatch is the inventory of the places agents keep their state under a real HOME over one
// run. Without inotify it is two snapshots, one taken by WatchHome and one by Finish, compared.
type HomeWatch struct {
	home   string
	paths  []string
	max    int
	top    map[string]bool
	before *Snapshot
}

// WatchHome takes the first snapshot of paths (from HomePaths) under home and HOME's top
// entries (TopLevel), at most max entries (DefaultMaxEntries when 0).
func WatchHome(home string, paths []string, max int) *HomeWatch {
	return &HomeWatch{home: home, paths: paths, max: max, top: TopLevel(home), before: SnapshotHome(home, paths, max)}
}

// Close ends the watch without a report (it holds nothing).
func (w *HomeWatch) Close() {}

// Finish takes the second snapshot, HOME's new top entries walked too (everything in them is
// created), and says what changed since WatchHome.
func (w *HomeWatch) Finish() record.Files {
	after := SnapshotHome(w.home, w.paths, w.max)
	if fresh := NewTopLevel(w.home, w.top, w.paths); len(fresh) > 0 {
		after = Join(after, SnapshotHome(w.home, fresh, w.max))
	}
	return Diff(w.before, after)
}
