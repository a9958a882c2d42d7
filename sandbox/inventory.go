//go:build unix

package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/acpprobe/acpprobe/record"
)

// DefaultMaxEntries is how many entries a snapshot looks at, at most, unless told otherwise.
const DefaultMaxEntries = 100_000

// maxChanges is how many changes a record.Files report lists; the counts cover all of them.
const maxChanges = 2000

// Snapshot is the metadata of everything under a set of trees at one moment: kind, size,
// mode, modification time, inode and symlink target. It is taken without reading any file,
// following any symbolic link or opening anything but directories.
type Snapshot struct {
	roots      []root
	entries    map[string]meta
	walked     int
	capped     bool
	unreadable int
}

// root is one tree of a snapshot: its path on disk and the label its entries are shown under.
type root struct {
	label, path string
	follow      bool // follow the root itself if it is a symbolic link (never what is inside)
}

type meta struct {
	kind   string
	size   int64
	mtime  int64
	mode   os.FileMode
	ino    uint64
	target string
}

// takeSnapshot walks roots, looking at max entries at most.
func takeSnapshot(roots []root, max int) *Snapshot {
	if max <= 0 {
		max = DefaultMaxEntries
	}
	s := &Snapshot{roots: roots, entries: map[string]meta{}}
	type dir struct{ path, label string }
	for _, r := range roots {
		st, err := os.Lstat(r.path)
		if err == nil && r.follow && st.Mode()&os.ModeSymlink != 0 {
			st, err = os.Stat(r.path)
		}
		if err != nil {
			if !os.IsNotExist(err) {
				s.unreadable++
			}
			continue
		}
		if !st.IsDir() {
			if s.count(max) {
				s.entries[r.label] = metaOf(r.path, st)
			}
			continue
		}
		stack := []dir{{r.path, r.label}}
		for len(stack) > 0 && !s.capped {
			d := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			subdirs := s.walkDir(d.path, d.label, max, d.path == r.path && r.follow)
			for _, name := range subdirs {
				stack = append(stack, dir{filepath.Join(d.path, name), d.label + "/" + name})
			}
		}
	}
	return s
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

// walkDir records the entries of one directory and returns the names of its subdirectories.
// follow allows path itself to be a symbolic link (a root the caller chose to follow).
func (s *Snapshot) walkDir(path, label string, max int, follow bool) []string {
	var f *os.File
	var err error
	if follow {
		f, err = openDirFollow(path)
	} else {
		f, err = openDir(path)
	}
	if err != nil {
		s.unreadable++
		return nil
	}
	defer f.Close()
	var subdirs []string
	for !s.capped {
		batch, err := f.ReadDir(512)
		for _, e := range batch {
			if !s.count(max) {
				break
			}
			child := filepath.Join(path, e.Name())
			st, err := os.Lstat(child)
			if err != nil {
				continue // gone since it was listed
			}
			if st.IsDir() {
				subdirs = append(subdirs, e.Name())
				continue
			}
			s.entries[label+"/"+e.Name()] = metaOf(child, st)
		}
		if err == io.EOF || len(batch) == 0 {
			break
		}
		if err != nil {
			s.unreadable++
			break
		}
	}
	return subdirs
}

// openDirFollow opens a directory that may be reached through a symbolic link, without
// blocking if it is something else.
func openDirFollow(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// metaOf is the metadata of one entry (st from Lstat).
func metaOf(path string, st os.FileInfo) meta {
	m := meta{size: st.Size(), mtime: st.ModTime().UnixNano(), mode: st.Mode()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		m.ino = uint64(sys.Ino)
	}
	switch mode := st.Mode(); {
	case mode.IsRegular():
		m.kind = "file"
	case mode&os.ModeSymlink != 0:
		m.kind = "symlink"
		m.target, _ = os.Readlink(path)
		if len(m.target) > 4096 {
			m.target = m.target[:4096]
		}
	case mode&os.ModeNamedPipe != 0:
		m.kind = "fifo"
	case mode&os.ModeSocket != 0:
		m.kind = "socket"
	case mode&os.ModeDevice != 0:
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
		Changes:    []record.FileChange{},
		Walked:     after.walked,
		Capped:     before.capped || after.capped,
		Unreadable: after.unreadable,
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
	sort.Slice(all, func(i, j int) bool { return all[i].Path < all[j].Path })
	if len(all) > maxChanges {
		all, f.Truncated = all[:maxChanges], true
	}
	f.Changes = append(f.Changes, all...)
	return f
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
	return takeSnapshot(roots, max)
}
