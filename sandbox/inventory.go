//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/internal/safefs"
	"github.com/acpprobe/acpprobe/record"
)

// DefaultMaxEntries is how many entries a snapshot looks at, at most, unless told otherwise.
const DefaultMaxEntries = 100_000

// maxChanges is how many changes a record.Files report lists; the counts cover all of them.
const maxChanges = 2000

// Snapshot is the metadata of everything under a set of trees at one moment: kind, size,
// mode, modification time, inode and symlink target. It is taken without reading any file,
// following any symbolic link, crossing a mount point or opening anything but directories,
// each one opened from its parent's descriptor, so that a tree of any depth is walked
// whatever the length of its paths (as deep as maxWalkDepth).
type Snapshot struct {
	roots      []root
	entries    map[string]meta
	walked     int
	capped     bool
	unreadable int
	unseen     []record.Unseen
	// hook, when set, is told of every directory and entry the walk meets (a HomeWatch's
	// watches and marks); nil for a plain snapshot.
	hook walkHook
}

// walkHook is what a walk tells the one watching it.
type walkHook interface {
	// dir is told of the directory fd (label) as soon as it is opened, before it is listed;
	// false stops the walk.
	dir(fd int, label string) bool
	// listed is told of the directory fd (label) once it is listed.
	listed(fd int, label string)
	// entry is told of every entry that is not a directory, with its stat.
	entry(label string, st entryStat)
	// gone is told of an entry that was listed but was gone when the walk looked at it.
	gone(label string)
}

// root is one tree of a snapshot: where it is and the label its entries are shown under.
type root struct {
	label string
	// within, when set, holds the tree: path is then relative to it and resolved beneath it
	// (no link, no mount point on the way); otherwise path is absolute.
	within *safefs.Dir
	path   string
	follow bool // follow the root itself if it is a symbolic link (never what is inside)
}

type meta struct {
	kind   string
	size   int64
	mtime  int64
	mode   uint32
	ino    uint64
	target string
}

// Bounds of a walk: how deep it goes (a descriptor is held per level), and how many of the
// directories it could not look into it names.
const (
	maxWalkDepth = 512
	maxUnseen    = 64
)

// takeSnapshot walks roots, looking at max entries at most.
func takeSnapshot(roots []root, max int) *Snapshot {
	max = orDefault(max)
	s := &Snapshot{roots: roots, entries: map[string]meta{}}
	s.take(max)
	return s
}

// take walks the snapshot's roots, looking at max entries at most.
func (s *Snapshot) take(max int) {
	for _, r := range s.roots {
		if s.capped {
			break
		}
		fd, err := r.open()
		if err == errNotDir { // a file root (~/.claude.json), or a link to one
			if st, err := statEntry(unix.AT_FDCWD, r.path, r.follow); err == nil && s.count(max) {
				s.entries[r.label] = metaOf(unix.AT_FDCWD, r.path, st)
				if s.hook != nil {
					s.hook.entry(r.label, st)
				}
			}
			continue
		}
		if err != nil {
			if !os.IsNotExist(err) {
				s.unseenDir(r.label, err)
			}
			continue
		}
		mnt, _ := safefs.MountOf(fd) // as statEntry's (a statx mount id on Linux)
		s.walk(fd, r.label, mnt, 0, max)
		unix.Close(fd)
	}
}

// orDefault is max, or DefaultMaxEntries when it is not set.
func orDefault(max int) int {
	if max <= 0 {
		return DefaultMaxEntries
	}
	return max
}

// errNotDir: a root is not a directory (its entry is taken as it is).
var errNotDir = errors.New("not a directory")

// open opens the root's directory (errNotDir when it is something else).
func (r root) open() (int, error) {
	if r.within != nil {
		d, err := r.within.Open(r.path)
		if err != nil {
			return -1, err
		}
		defer d.Close()
		return unix.FcntlInt(uintptr(d.Fd()), unix.F_DUPFD_CLOEXEC, 0)
	}
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NONBLOCK | unix.O_CLOEXEC
	if !r.follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Open(r.path, flags, 0)
	if err == unix.ENOTDIR || err == unix.ELOOP {
		return -1, errNotDir
	}
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: r.path, Err: err}
	}
	return fd, nil
}

// count counts one more entry; it returns false (and marks the snapshot capped) past max.
func (s *Snapshot) count(max int) bool {
	if s.walked >= max {
		s.capped = true
		return false
	}
	s.walked++
	return true
}

// unseenDir records a directory the walk could not look into.
func (s *Snapshot) unseenDir(label string, err error) {
	s.unreadable++
	if len(s.unseen) < maxUnseen {
		s.unseen = append(s.unseen, record.Unseen{Path: label, Reason: reason(err)})
	}
}

// errTooDeep and errMount are why a directory was not walked into.
var (
	errTooDeep = fmt.Errorf("deeper than %d levels: not looked into", maxWalkDepth)
	errMount   = errors.New("a mount point: not crossed")
)

func reason(err error) string {
	var errno syscall.Errno
	var pe *os.PathError
	switch {
	case errors.As(err, &pe):
		return reason(pe.Err)
	case errors.As(err, &errno):
		return errno.Error()
	}
	return err.Error()
}

// walk records the entries of the directory fd (shown as label, depth levels below its
// root, on mount mnt) and of every directory below it.
func (s *Snapshot) walk(fd int, label string, mnt uint64, depth, max int) {
	if s.hook != nil && !s.hook.dir(fd, label) {
		return
	}
	names, err := safefs.ListNames(fd)
	if err != nil {
		s.unseenDir(label, err)
		return
	}
	if s.hook != nil {
		s.hook.listed(fd, label)
	}
	for _, name := range names {
		if !s.count(max) {
			return
		}
		child := label + "/" + name
		st, err := statEntry(fd, name, false)
		if err != nil {
			if s.hook != nil {
				s.hook.gone(child)
			}
			continue // gone since it was listed
		}
		s.visit(fd, name, child, st, mnt, depth, max)
		if s.capped {
			return
		}
	}
}

// visit records the entry name of the directory fd (shown as label, that directory depth
// levels below its root, on mount mnt), statted as st, and walks it when it is a directory on
// the same mount, not too deep.
func (s *Snapshot) visit(fd int, name, label string, st entryStat, mnt uint64, depth, max int) {
	if st.mode&unix.S_IFMT != unix.S_IFDIR {
		s.entries[label] = metaOf(fd, name, st)
		if s.hook != nil {
			s.hook.entry(label, st)
		}
		return
	}
	if st.mnt != mnt { // the stat of a mount point is the mounted tree's root's
		s.unseenDir(label, errMount)
		return
	}
	if depth+1 >= maxWalkDepth {
		s.unseenDir(label, errTooDeep)
		return
	}
	sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		if err != unix.ENOENT {
			s.unseenDir(label, err)
		} else if s.hook != nil {
			s.hook.gone(label)
		}
		return
	}
	s.walk(sub, label, mnt, depth+1, max)
	unix.Close(sub)
}

// entryStat is what the inventory keeps of an entry's stat, and the mount it is on.
type entryStat struct {
	mode  uint32
	size  int64
	mtime int64
	ino   uint64
	mnt   uint64
	// ctime is when the entry's inode last changed (ns since the epoch): no process can set
	// it. btime is when it was made, 0 where the file system does not say.
	ctime, btime int64
}

// metaOf is the metadata of the entry name of the directory dirfd.
func metaOf(dirfd int, name string, st entryStat) meta {
	m := meta{size: st.size, mtime: st.mtime, mode: st.mode, ino: st.ino}
	switch st.mode & unix.S_IFMT {
	case unix.S_IFREG:
		m.kind = "file"
	case unix.S_IFLNK:
		m.kind = "symlink"
		buf := make([]byte, 4096)
		if n, err := unix.Readlinkat(dirfd, name, buf); err == nil {
			m.target = string(buf[:n])
		}
	case unix.S_IFIFO:
		m.kind = "fifo"
	case unix.S_IFSOCK:
		m.kind = "socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		m.kind = "device"
	default:
		m.kind = "other"
	}
	return m
}

// Diff lists what was created, changed or deleted from before to after, by path.
func Diff(before, after *Snapshot) record.Files {
	f := record.Files{
		Watched:    []string{},
		Walked:     after.walked,
		Capped:     before.capped || after.capped,
		Unreadable: after.unreadable,
		Unseen:     unseenOf(before, after),
	}
	for _, r := range after.roots {
		f.Watched = append(f.Watched, r.label)
	}
	var all []record.FileChange
	for p, a := range after.entries {
		b, ok := before.entries[p]
		switch {
		case !ok:
			f.Created++
			all = append(all, record.FileChange{Path: p, Change: "created", Kind: a.kind, Size: a.size, Target: a.target})
		case a != b:
			f.Changed++
			all = append(all, record.FileChange{Path: p, Change: "changed", Kind: a.kind, Size: a.size, Target: a.target})
		}
	}
	for p, b := range before.entries {
		if _, ok := after.entries[p]; !ok {
			f.Deleted++
			all = append(all, record.FileChange{Path: p, Change: "deleted", Kind: b.kind, Size: b.size, Target: b.target})
		}
	}
	f.Changes, f.Truncated = listChanges(all)
	return f
}

// listChanges sorts all by path and keeps the first maxChanges of them (never nil), saying
// whether there were more.
func listChanges(all []record.FileChange) ([]record.FileChange, bool) {
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	truncated := len(all) > maxChanges
	if truncated {
		all = all[:maxChanges]
	}
	return append([]record.FileChange{}, all...), truncated
}

// Merge is one report of the files of a and b, whose labels differ (a sandbox's, and the
// real HOME's of a HomeWatch): their counts added, their changes listed together.
func Merge(a, b record.Files) record.Files {
	f := record.Files{
		Watched: slices.Concat(a.Watched, b.Watched), Created: a.Created + b.Created, Changed: a.Changed + b.Changed,
		Deleted: a.Deleted + b.Deleted, Walked: a.Walked + b.Walked, Capped: a.Capped || b.Capped,
		Unreadable: a.Unreadable + b.Unreadable,
	}
	var truncated bool
	f.Changes, truncated = listChanges(slices.Concat(a.Changes, b.Changes))
	f.Truncated = truncated || a.Truncated || b.Truncated
	for _, u := range slices.Concat(a.Unseen, b.Unseen) {
		if len(f.Unseen) < maxUnseen {
			f.Unseen = append(f.Unseen, u)
		}
	}
	return f
}

// Without is s without the entries of the given labels (as Diff shows paths: "home/.codex/
// config.toml"): what acpprobe itself wrote after the snapshot, which is no side effect of
// the agent.
func (s *Snapshot) Without(labels []string) *Snapshot {
	out := *s
	out.entries = make(map[string]meta, len(s.entries))
	for k, v := range s.entries {
		if !slices.Contains(labels, k) {
			out.entries[k] = v
		}
	}
	return &out
}

// Join is one snapshot of the trees of a and b (b may be nil), whose labels differ: a
// sandbox's and those of the places agents keep their state under the real HOME.
func Join(a, b *Snapshot) *Snapshot {
	if b == nil {
		return a
	}
	j := &Snapshot{roots: slices.Concat(a.roots, b.roots), entries: make(map[string]meta, len(a.entries)+len(b.entries)),
		walked: a.walked + b.walked, capped: a.capped || b.capped, unreadable: a.unreadable + b.unreadable}
	for _, s := range []*Snapshot{a, b} {
		for k, v := range s.entries {
			j.entries[k] = v
		}
		for _, u := range s.unseen {
			if len(j.unseen) < maxUnseen {
				j.unseen = append(j.unseen, u)
			}
		}
	}
	return j
}

// unseenOf is what either snapshot could not look into, the later first, each path once.
func unseenOf(before, after *Snapshot) []record.Unseen {
	var out []record.Unseen
	seen := map[string]bool{}
	for _, u := range append(slices.Clone(after.unseen), before.unseen...) {
		if !seen[u.Path] && len(out) < maxUnseen {
			seen[u.Path] = true
			out = append(out, u)
		}
	}
	return out
}

// topLevelDirs are where, under HOME, an agent acpprobe does not know makes a place of its
// own: HOME itself and the defaults of the XDG base directories.
var topLevelDirs = []string{"", ".config", ".cache", ".local/share", ".local/state"}

// maxTopLevel bounds the entries of one of topLevelDirs that TopLevel lists.
const maxTopLevel = 4096

// TopLevel lists the entries directly in topLevelDirs under home (absolute paths), at most
// maxTopLevel of each: taken before a run, it lets NewTopLevel tell what appeared.
func TopLevel(home string) map[string]bool {
	out := map[string]bool{}
	for _, d := range topLevelDirs {
		dir := filepath.Join(home, d)
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(maxTopLevel)
		f.Close()
		for _, n := range names {
			out[filepath.Join(dir, n)] = true
		}
	}
	return out
}

// maxNewTopLevel bounds the new entries NewTopLevel returns (an agent could make thousands).
const maxNewTopLevel = 64

// NewTopLevel returns, sorted, the entries of TopLevel(home) that were not in before and that
// are not one of the watched places nor inside one (those are walked already): the state of
// an agent no table knows (CodeBuddy Code's ~/.codebuddy), to be walked too. At most
// maxNewTopLevel.
func NewTopLevel(home string, before map[string]bool, watched []string) []string {
	var out []string
	for p := range TopLevel(home) {
		if before[p] || slices.ContainsFunc(watched, func(w string) bool { return p == w || strings.HasPrefix(p, w+string(filepath.Separator)) }) {
			continue
		}
		out = append(out, p)
	}
	slices.Sort(out)
	return out[:min(len(out), maxNewTopLevel)]
}

// HomePaths returns the places under a real HOME that the agents of env.json write to,
// resolved against environ (the agent's environment: CODEX_HOME, CLAUDE_CONFIG_DIR, the XDG
// variables… count when set). Duplicates and places inside another are left out.
func HomePaths(home string, environ []string) []string {
	vars := map[string]string{}
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	lookup := func(name string) string {
		if v := vars[name]; v != "" {
			return v
		}
		if d, ok := xdgDefault[name]; ok {
			return filepath.Join(home, d)
		}
		return ""
	}
	var paths []string
	for _, a := range table().Agents {
		for _, expr := range a.RealHome {
			if p := expand(expr, home, lookup); p != "" && filepath.IsAbs(p) {
				paths = append(paths, filepath.Clean(p))
			}
		}
	}
	sort.Strings(paths)
	var out []string
next:
	for _, p := range paths {
		for _, q := range out {
			if p == q || strings.HasPrefix(p, q+"/") {
				continue next
			}
		}
		out = append(out, p)
	}
	return out
}

// SnapshotHome takes a snapshot of paths (from HomePaths), each shown relative to home
// ("~/.codex/…") when it is under it. A path that is a symbolic link is followed (a dotfile
// manager's link); nothing inside is. max caps the entries looked at (DefaultMaxEntries when 0).
func SnapshotHome(home string, paths []string, max int) *Snapshot {
	return takeSnapshot(homeRoots(home, paths), max)
}

// homeRoots are the roots of paths under home, each shown relative to it when it is under it.
func homeRoots(home string, paths []string) []root {
	roots := make([]root, 0, len(paths))
	for _, p := range paths {
		label := p
		if rel, err := filepath.Rel(home, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			label = "~/" + rel
			if rel == "." {
				label = "~"
			}
		}
		roots = append(roots, root{label: label, path: p, follow: true})
	}
	return roots
}
