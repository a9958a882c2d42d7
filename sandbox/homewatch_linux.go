package sandbox

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/internal/safefs"
	"github.com/acpprobe/acpprobe/record"
)

// HomeWatch is the inventory of the places agents keep their state under a real HOME over one
// run, off its critical path: WatchHome reads the clock and returns at once, a walk runs beside
// the agent, and Finish (once the agent and all it started are gone) says what changed, as
// Diff of a snapshot before and one after would.
//
// The walk arms an inotify watch on each directory (on the very directory it opened, through
// /proc/self/fd) before listing it, then takes one statx of each entry. What changed from the
// start (T0, the coarse clock the kernel stamps ctime with) to a directory's watch is told by
// the ctime no process can set (created, where the birth time is kept, when that is after T0
// too); what changed after, by the events. What cannot be named (an entry removed from a
// directory before its watch) is said in Unseen. A directory without a watch (no watch left:
// max_user_watches), or every one when the events overflowed, is walked again at the end and
// compared with the names the walk kept: slower, as exact. An entry changed in the few
// milliseconds before WatchHome is reported as changed too: the coarse clock lags the time the
// kernel stamps a change with by up to two ticks (8 ms at 250 Hz), and it is the one whose
// reading before anything makes every later change seen.
type HomeWatch struct {
	home  string
	paths []string
	max   int
	top   map[string]bool // TopLevel(home) at the start
	roots []root
	t0    int64 // CLOCK_REALTIME_COARSE at the start, in ns

	ifd, wake int         // the inotify instance and the eventfd that ends its drain
	stop      atomic.Bool // set by Close: the walk ends at its next directory
	walked    chan struct{}
	drained   chan struct{}
	removed   chan struct{} // the watches are removed
	released  sync.Once
	closed    sync.Once

	// Written by the walk, read once walked is closed.
	kept      *Snapshot           // the names the walk saw, and their metadata
	children  map[string][]string // what the walk met in each directory, by label
	born      map[string]bool     // born after T0 (the file system keeps birth times)
	touched   map[string]bool     // ctime at or after T0 when the walk looked
	wds       map[int32][]string  // each watch's directories
	unwatched []string            // directories without a watch: walked again by Finish
	rootIDs   []fileID            // each root directory's identity (zero: not a directory)
	noted     []record.Unseen     // directories changed before their watch

	// Written by the drain, read once drained is closed.
	events   map[watchEvent]uint32 // what happened to a name, by watch
	overflow bool                  // some events were lost: every directory is walked again
}

// watchEvent is one name of one watched directory ("" for the directory itself).
type watchEvent struct {
	wd   int32
	name string
}

// fileID is an inode's identity.
type fileID struct{ dev, ino uint64 }

// watchMask is what a directory's watch reports: any name made, removed, renamed or written,
// and the directory's own removal or move. IN_ONLYDIR: only a directory is watched;
// IN_EXCL_UNLINK: nothing of a name once it is unlinked.
const watchMask = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MODIFY | unix.IN_ATTRIB | unix.IN_MOVED_FROM |
	unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR | unix.IN_EXCL_UNLINK

// Test hooks: afterT0 runs after the start's clock is read, before the walk; onListed with each
// directory the walk has listed, before it looks into what it holds; addWatch arms one watch;
// maxEvents bounds the names the drain keeps before it calls it an overflow.
var (
	afterT0   func()
	onListed  func(label string)
	addWatch  = unix.InotifyAddWatch
	maxEvents = DefaultMaxEntries
)

// Why a watch's Unseen names a path: a directory changed before its watch, or an entry that
// went between the listing of its directory and the walk's look at it.
const (
	unseenBeforeWatch = "changed after the start, before it was watched: an entry removed from it then cannot be named"
	unseenWhileWalked = "removed after the start, while the walk looked at it: what it was or held cannot be named"
)

// WatchHome starts watching paths (from HomePaths) under home, each shown relative to home
// ("~/.codex/…") when it is under it, and HOME's new top entries (TopLevel), at most max
// entries (DefaultMaxEntries when 0). Call it before the agent starts, and Finish or Close
// after: it holds an inotify instance and runs two goroutines until then.
func WatchHome(home string, paths []string, max int) *HomeWatch {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_REALTIME_COARSE, &ts) // cannot fail with this clock
	w := &HomeWatch{home: home, paths: paths, max: orDefault(max), t0: ts.Nano(), roots: homeRoots(home, paths),
		ifd: -1, wake: -1, walked: make(chan struct{}), drained: make(chan struct{}), removed: make(chan struct{}),
		born: map[string]bool{}, touched: map[string]bool{}, wds: map[int32][]string{}, events: map[watchEvent]uint32{},
		children: map[string][]string{}}
	w.top = TopLevel(home)
	if ifd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC); err == nil {
		if wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err == nil {
			w.ifd, w.wake = ifd, wake
		} else {
			unix.Close(ifd)
		}
	}
	if w.ifd < 0 { // no inotify: every root is walked again at the end
		w.overflow = true
		close(w.drained)
	} else {
		go w.drain()
	}
	go w.walk()
	return w
}

// walk takes the first inventory, arming the watches (hook).
func (w *HomeWatch) walk() {
	defer close(w.walked)
	if afterT0 != nil {
		afterT0()
	}
	w.kept = &Snapshot{roots: w.roots, entries: map[string]meta{}, hook: (*armHook)(w)}
	w.rootIDs = make([]fileID, len(w.roots))
	for i, r := range w.roots {
		if fd, err := r.open(); err == nil {
			w.rootIDs[i] = idOf(fd)
			unix.Close(fd)
		}
	}
	w.kept.take(w.max)
}

// idOf is the identity of the open file fd (zero when it cannot be told).
func idOf(fd int) fileID {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fileID{}
	}
	return fileID{uint64(st.Dev), st.Ino}
}

// armHook is the first walk's hook: each directory is watched before it is listed, and the
// entries changed since T0 are marked.
type armHook HomeWatch

func (h *armHook) dir(fd int, label string) bool {
	w := (*HomeWatch)(h)
	if w.stop.Load() {
		return false
	}
	w.met(label)
	wd := -1
	if w.ifd >= 0 {
		wd, _ = addWatch(w.ifd, "/proc/self/fd/"+strconv.Itoa(fd), watchMask)
	}
	if wd < 0 {
		w.unwatched = append(w.unwatched, label)
	} else {
		w.wds[int32(wd)] = append(w.wds[int32(wd)], label)
	}
	return true
}

func (h *armHook) listed(fd int, label string) {
	w := (*HomeWatch)(h)
	if onListed != nil {
		onListed(label)
	}
	var stx unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_CTIME|unix.STATX_BTIME, &stx) == nil {
		ctime, born := nanos(stx.Ctime), stx.Mask&unix.STATX_BTIME != 0 && nanos(stx.Btime) >= w.t0
		if ctime < w.t0 || born {
			return // unchanged since T0 (its listing is what it held then), or born since
		}
	}
	if len(w.noted) < maxUnseen {
		w.noted = append(w.noted, record.Unseen{Path: label, Reason: unseenBeforeWatch})
	}
}

func (h *armHook) entry(label string, st entryStat) {
	w := (*HomeWatch)(h)
	w.met(label)
	if st.ctime >= w.t0 {
		w.touched[label] = true
		if st.btime >= w.t0 {
			w.born[label] = true
		}
	}
}

func (h *armHook) gone(label string) {
	w := (*HomeWatch)(h)
	if len(w.noted) < maxUnseen {
		w.noted = append(w.noted, record.Unseen{Path: label, Reason: unseenWhileWalked})
	}
}

// met records that the walk met label in its directory (a root is in none).
func (w *HomeWatch) met(label string) {
	if i := strings.LastIndexByte(label, '/'); i > 0 {
		w.children[label[:i]] = append(w.children[label[:i]], label)
	}
}

// markHook is the hook of the walks at the end: it marks the entries changed since T0.
type markHook struct {
	t0      int64
	touched map[string]bool
}

func (h *markHook) dir(int, string) bool { return true }
func (h *markHook) listed(int, string)   {}
func (h *markHook) gone(string)          {} // a walk at the end judges what is there
func (h *markHook) entry(label string, st entryStat) {
	if st.ctime >= h.t0 {
		h.touched[label] = true
	}
}

// drain reads the events as they come, so that the kernel's queue does not overflow under an
// agent's normal use, until the eventfd says to read what is left and end.
func (w *HomeWatch) drain() {
	defer close(w.drained)
	buf := make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(w.ifd), Events: unix.POLLIN}, {Fd: int32(w.wake), Events: unix.POLLIN}}
	for {
		w.read(buf)
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			w.overflow = true // cannot wait for events: say they may be lost
			return
		}
		if fds[1].Revents != 0 {
			w.read(buf)
			return
		}
	}
}

// read reads the events queued, keeping each name once with all that happened to it, at most
// maxEvents names: past them (an agent flooding the directories), or when the kernel's queue
// overflowed, they are dropped and every directory is walked again at the end.
func (w *HomeWatch) read(buf []byte) {
	for {
		n, err := unix.Read(w.ifd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n <= 0 {
			return
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:min(n, off+unix.SizeofInotifyEvent+int(ev.Len))]), "\x00")
			off += unix.SizeofInotifyEvent + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 || len(w.events) >= maxEvents {
				w.overflow, w.events = true, map[watchEvent]uint32{}
			}
			if !w.overflow {
				w.events[watchEvent{ev.Wd, name}] |= ev.Mask
			}
		}
	}
}

// release ends the drain once what is queued is read, and starts removing the watches, off
// the critical path; removed is closed once they are. The kernel frees a removed watch a few
// milliseconds later, after a grace period of its own; closing an instance that still has
// watches waits for that grace (about 15 ms here, even for one watch), which Close, called
// as late as may be, no longer has to. The walk must be over.
func (w *HomeWatch) release() {
	w.released.Do(func() {
		if w.ifd < 0 {
			close(w.removed)
			return
		}
		_, _ = unix.Write(w.wake, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		<-w.drained
		go func() {
			defer close(w.removed)
			for wd := range w.wds {
				_, _ = unix.InotifyRmWatch(w.ifd, uint32(wd)) // EINVAL: its directory is gone
			}
		}()
	})
}

// Close ends the watch, with no report unless Finish gave one: the walk stops at its next
// directory, and the inotify instance is closed, once.
func (w *HomeWatch) Close() {
	w.stop.Store(true)
	<-w.walked
	w.release()
	<-w.removed
	w.closed.Do(func() {
		if w.ifd >= 0 {
			unix.Close(w.ifd)
			unix.Close(w.wake)
		}
	})
}

// Finish ends the watch and says what was created, changed and deleted since WatchHome, as Diff
// would of a snapshot taken then and one taken now (the new top entries of HOME and its XDG
// directories walked too: everything in them is created). Call it once the agent and all it
// started are gone, and once; then Close, as late as may be.
func (w *HomeWatch) Finish() record.Files {
	<-w.walked
	w.release()
	again := map[string]bool{} // walked again: every name beneath is judged as it is now
	names := map[string]bool{} // looked at again, one statx each
	for i, r := range w.roots {
		if w.overflow || w.rootIDs[i] == (fileID{}) || !w.sameRoot(i) {
			again[r.label] = true
		}
	}
	for _, l := range w.unwatched {
		again[l] = true
	}
	for ev, mask := range w.events {
		for _, d := range w.wds[ev.wd] {
			switch {
			case ev.name == "":
				if mask&(unix.IN_DELETE_SELF|unix.IN_MOVE_SELF|unix.IN_IGNORED|unix.IN_UNMOUNT) != 0 {
					again[d] = true
				}
			case mask&unix.IN_ISDIR != 0:
				// A directory made, removed or renamed: what is beneath is walked again (its
				// mode or times changing says nothing of what it holds).
				if mask&(unix.IN_CREATE|unix.IN_DELETE|unix.IN_MOVED_FROM|unix.IN_MOVED_TO) != 0 {
					again[d+"/"+ev.name] = true
				}
			default:
				names[d+"/"+ev.name] = true
			}
		}
	}
	now := w.lookAgain(names, again) // may add to again
	after := &Snapshot{entries: map[string]meta{}, hook: &markHook{t0: w.t0, touched: map[string]bool{}}}
	tops := topmost(again)
	for _, l := range tops {
		w.walkAgain(after, l)
	}
	againTouched := after.hook.(*markHook).touched

	var all []record.FileChange
	judged := map[string]bool{}
	judge := func(p string, m *meta, touched bool) {
		if judged[p] {
			return
		}
		judged[p] = true
		k, inKept := w.kept.entries[p]
		pre := inKept && !w.born[p]
		switch {
		case m == nil && pre:
			all = append(all, record.FileChange{Path: p, Change: "deleted", Kind: k.kind, Size: k.size, Target: k.target})
		case m == nil:
		case !pre:
			all = append(all, record.FileChange{Path: p, Change: "created", Kind: m.kind, Size: m.size, Target: m.target})
		case touched || w.touched[p]:
			all = append(all, record.FileChange{Path: p, Change: "changed", Kind: m.kind, Size: m.size, Target: m.target})
		}
	}
	for p, m := range after.entries {
		judge(p, &m, againTouched[p])
	}
	for _, l := range tops {
		for _, p := range w.beneath(l) {
			judge(p, nil, false) // not there any more: after.entries had it otherwise
		}
	}
	for p, n := range now {
		if !under(p, again) {
			judge(p, n.m, n.touched)
		}
	}
	for p := range w.touched {
		if !under(p, again) {
			m := w.kept.entries[p]
			judge(p, &m, true)
		}
	}

	f := record.Files{Watched: []string{}, Walked: w.kept.walked + after.walked, Capped: w.kept.capped || after.capped,
		Unreadable: w.kept.unreadable + after.unreadable}
	for _, r := range w.roots {
		f.Watched = append(f.Watched, r.label)
	}
	if fresh := NewTopLevel(w.home, w.top, w.paths); len(fresh) > 0 {
		s := SnapshotHome(w.home, fresh, w.max)
		for _, r := range s.roots {
			f.Watched = append(f.Watched, r.label)
		}
		for p, m := range s.entries {
			if _, _, watched := w.rootOf(p); !watched { // a new top entry can hold a watched file (~/.config/x/y.json)
				all = append(all, record.FileChange{Path: p, Change: "created", Kind: m.kind, Size: m.size, Target: m.target})
			}
		}
		f.Walked, f.Capped, f.Unreadable = f.Walked+s.walked, f.Capped || s.capped, f.Unreadable+s.unreadable
		after.unseen = append(after.unseen, s.unseen...)
	}
	for _, c := range all {
		switch c.Change {
		case "created":
			f.Created++
		case "changed":
			f.Changed++
		default:
			f.Deleted++
		}
	}
	f.Changes, f.Truncated = listChanges(all)
	seen := map[string]bool{}
	for _, u := range slices.Concat(w.kept.unseen, w.noted, after.unseen) {
		if !seen[u.Path+"\x00"+u.Reason] && len(f.Unseen) < maxUnseen {
			seen[u.Path+"\x00"+u.Reason] = true
			f.Unseen = append(f.Unseen, u)
		}
	}
	return f
}

// sameRoot tells whether root i is still the directory the walk watched (a link to it may have
// been pointed elsewhere, or it may have been replaced).
func (w *HomeWatch) sameRoot(i int) bool {
	fd, err := w.roots[i].open()
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return idOf(fd) == w.rootIDs[i]
}

// nowStat is an entry as Finish found it: nil m when it is gone.
type nowStat struct {
	m       *meta
	touched bool
}

// lookAgain stats each of names (not beneath one of again) once, from its directory opened
// afresh. A name that is now a directory, or whose directory cannot be opened, is added to
// again instead.
func (w *HomeWatch) lookAgain(names, again map[string]bool) map[string]nowStat {
	byDir := map[string][]string{}
	for p := range names {
		if !under(p, again) {
			i := strings.LastIndexByte(p, '/')
			byDir[p[:i]] = append(byDir[p[:i]], p[i+1:])
		}
	}
	out := map[string]nowStat{}
	for dir, ns := range byDir {
		fd, _, _, err := w.openLabel(dir)
		if err != nil {
			again[dir] = true
			continue
		}
		for _, n := range ns {
			p := dir + "/" + n
			st, err := statEntry(fd, n, false)
			switch {
			case err != nil:
				out[p] = nowStat{}
			case st.mode&unix.S_IFMT == unix.S_IFDIR:
				again[p] = true
			default:
				m := metaOf(fd, n, st)
				out[p] = nowStat{m: &m, touched: st.ctime >= w.t0}
			}
		}
		unix.Close(fd)
	}
	return out
}

// openLabel opens the directory shown as label (a root or beneath one), as the walk reached
// it: from the root, one name at a time, never through a link nor across a mount. It returns
// its depth below the root and the root's mount.
func (w *HomeWatch) openLabel(label string) (fd, depth int, mnt uint64, err error) {
	r, rel, ok := w.rootOf(label)
	if !ok {
		return -1, 0, 0, unix.ENOENT
	}
	if fd, err = r.open(); err != nil {
		return -1, 0, 0, err
	}
	mnt, _ = safefs.MountOf(fd)
	if rel == "" {
		return fd, 0, mnt, nil
	}
	for _, name := range strings.Split(rel, "/") {
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, 0, 0, err
		}
		if m, _ := safefs.MountOf(sub); m != mnt {
			unix.Close(sub)
			return -1, 0, 0, errMount
		}
		fd, depth = sub, depth+1
	}
	return fd, depth, mnt, nil
}

// rootOf is the root label is shown beneath, and its path below it.
func (w *HomeWatch) rootOf(label string) (root, string, bool) {
	for _, r := range w.roots {
		if label == r.label {
			return r, "", true
		}
		if rel, ok := strings.CutPrefix(label, r.label+"/"); ok {
			return r, rel, true
		}
	}
	return root{}, "", false
}

// walkAgain walks what is shown as label now into s: a directory, an entry of another kind,
// or nothing.
func (w *HomeWatch) walkAgain(s *Snapshot, label string) {
	r, rel, ok := w.rootOf(label)
	if !ok {
		return
	}
	if rel == "" {
		s.roots = []root{r}
		s.take(w.max)
		return
	}
	i := strings.LastIndexByte(label, '/')
	dir, name := label[:i], label[i+1:]
	fd, depth, mnt, err := w.openLabel(dir)
	if err != nil {
		return // its directory is gone (or not one any more): so is it
	}
	defer unix.Close(fd)
	st, err := statEntry(fd, name, false)
	if err != nil || !s.count(w.max) {
		return
	}
	s.visit(fd, name, label, st, mnt, depth, w.max)
}

// beneath is the paths the walk kept that are label or beneath it.
func (w *HomeWatch) beneath(label string) []string {
	var out []string
	for next := []string{label}; len(next) > 0; {
		l := next[len(next)-1]
		next = next[:len(next)-1]
		if _, ok := w.kept.entries[l]; ok {
			out = append(out, l)
		}
		next = append(next, w.children[l]...)
	}
	return out
}

// topmost is the labels of set that are beneath no other, sorted.
func topmost(set map[string]bool) []string {
	var out []string
	for l := range set {
		if i := strings.LastIndexByte(l, '/'); i < 0 || !under(l[:i], set) {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return out
}

// under tells whether p or a directory above it is in set.
func under(p string, set map[string]bool) bool {
	for {
		if set[p] {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
}
