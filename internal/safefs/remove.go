//go:build unix

package safefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// RemoveError says what a removal left behind, and why: a mount point it did not cross, an
// entry the kernel would not let it remove (an immutable file), a directory it could not
// open.
type RemoveError struct {
	Dir  string // the directory being removed
	Left []Left // the first entries left behind (at most maxLeft)
	More int    // how many more were left, not listed
}

// Left is one entry a removal left behind.
type Left struct {
	Path   string `json:"path"`   // relative to the directory removed ("." for the directory itself)
	Reason string `json:"reason"` // why ("operation not permitted", "a mount point (not crossed)")
}

// maxLeft bounds the entries a RemoveError lists.
const maxLeft = 16

func (e *RemoveError) Error() string {
	var b strings.Builder
	n := len(e.Left) + e.More
	fmt.Fprintf(&b, "could not remove %d entr%s of %s:", n, map[bool]string{true: "y", false: "ies"}[n == 1], e.Dir)
	for i, l := range e.Left {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s (%s)", l.Path, l.Reason)
	}
	if e.More > 0 {
		fmt.Fprintf(&b, "; and %d more", e.More)
	}
	return b.String()
}

func (e *RemoveError) add(path, reason string) {
	if len(e.Left) < maxLeft {
		e.Left = append(e.Left, Left{Path: path, Reason: reason})
	} else {
		e.More++
	}
}

// maxDepth is how many directory levels a removal holds open at once; a directory deeper
// than that is first moved up to the top of the tree being removed (same mount, same tree),
// so that a tree of any depth is removed with a bounded number of descriptors.
const maxDepth = 128

// remover removes what is beneath one Dir.
type remover struct {
	root *Dir
	left RemoveError
	deep []string // names of directories moved to the root for being too deep
}

// RemoveAll removes everything beneath d; d itself stays. It never follows a link (a link is
// removed, not what it points to), never enters a mount point (nor removes it), and gives
// owner rwx only to directories it opened beneath d and is about to empty. What it could
// not remove is in the *RemoveError it returns.
func (d *Dir) RemoveAll() error {
	r := &remover{root: d, left: RemoveError{Dir: d.path}}
	var st unix.Stat_t
	if unix.Fstat(d.fd(), &st) == nil && uint32(st.Mode)&0o700 != 0o700 {
		_ = unix.Fchmod(d.fd(), uint32(st.Mode)&0o7777|0o700)
	}
	r.contents(d.fd(), "", 0)
	for len(r.deep) > 0 {
		name := r.deep[0]
		r.deep = r.deep[1:]
		r.entry(d.fd(), name, name, 0)
	}
	if len(r.left.Left) > 0 {
		return &r.left
	}
	return nil
}

// Remove removes everything beneath d, then d's own entry in its parent directory, if that
// entry is still d (an entry put in its place, a link to somewhere else, is left alone and
// reported), and closes d.
func (d *Dir) Remove() error {
	defer d.Close()
	rerr, _ := d.RemoveAll().(*RemoveError) // RemoveAll's only error
	if rerr == nil {
		rerr = &RemoveError{Dir: d.path}
	}
	parent, name := filepath.Split(d.path)
	if p, err := os.Open(parent); err != nil {
		rerr.add(".", err.Error())
	} else {
		var st unix.Stat_t
		switch err := unix.Fstatat(int(p.Fd()), name, &st, unix.AT_SYMLINK_NOFOLLOW); {
		case err == unix.ENOENT:
			rerr.add(".", "moved away by another process: emptied where it is now")
		case err != nil:
			rerr.add(".", errnoText(err))
		case uint64(st.Dev) != d.dev || uint64(st.Ino) != d.ino:
			rerr.add(".", "replaced by another entry, left alone: the directory was emptied where it is now")
		default:
			if err := unix.Unlinkat(int(p.Fd()), name, unix.AT_REMOVEDIR); err != nil && len(rerr.Left) == 0 {
				rerr.add(".", errnoText(err))
			}
		}
		p.Close()
	}
	if len(rerr.Left) > 0 {
		return rerr
	}
	return nil
}

// contents removes the entries of the directory fd (shown as rel), depth levels below the
// root.
func (r *remover) contents(fd int, rel string, depth int) {
	names, err := ListNames(fd)
	if err != nil {
		r.left.add(orDot(rel), errnoText(err))
		return
	}
	for _, name := range names {
		r.entry(fd, name, filepath.Join(rel, name), depth)
	}
}

// entry removes one entry of the directory fd, and what it holds.
func (r *remover) entry(fd int, name, rel string, depth int) {
	var st unix.Stat_t
	if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if err != unix.ENOENT {
			r.left.add(rel, errnoText(err))
		}
		return
	}
	if uint32(st.Mode)&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(fd, name, 0); err != nil && err != unix.ENOENT {
			r.left.add(rel, errnoText(err))
		}
		return
	}
	if depth >= maxDepth {
		moved := ".acpprobe-deep-" + randomName()
		if err := unix.Renameat(fd, name, r.root.fd(), moved); err != nil {
			r.left.add(rel, errnoText(err))
			return
		}
		r.deep = append(r.deep, moved)
		return
	}
	sub, err := r.openToEmpty(fd, name, rel)
	if err != nil {
		r.left.add(rel, errnoText(err))
		return
	}
	before := len(r.left.Left) + r.left.More
	r.contents(sub, rel, depth+1)
	unix.Close(sub)
	if err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT && len(r.left.Left)+r.left.More == before {
		r.left.add(rel, errnoText(err)) // not already explained by what it still holds
	}
}

// openToEmpty opens the subdirectory name of fd so that its entries can be removed: on the
// root's mount, never through a link, with owner rwx (given only to that very directory:
// one made unreadable is opened by O_PATH first, its mode changed through that descriptor).
func (r *remover) openToEmpty(fd int, name, rel string) (int, error) {
	sub, err := unix.Openat(fd, name, dirFlags, 0)
	if err == unix.EACCES {
		if err := r.chmodUnreadable(fd, name); err != nil {
			return -1, err
		}
		sub, err = unix.Openat(fd, name, dirFlags, 0)
	}
	if err != nil {
		return -1, err
	}
	if m, ok := mountOf(sub); ok && m != r.root.mnt {
		unix.Close(sub)
		return -1, errMountPoint
	}
	var st unix.Stat_t
	if unix.Fstat(sub, &st) == nil && uint32(st.Mode)&0o700 != 0o700 {
		_ = unix.Fchmod(sub, uint32(st.Mode)&0o7777|0o700)
	}
	return sub, nil
}

// chmodUnreadable gives owner rwx to the directory name of fd, which cannot be opened for
// reading: it is opened by O_PATH (no link followed), checked to be a directory on the
// root's mount, and changed through that descriptor.
func (r *remover) chmodUnreadable(fd int, name string) error {
	p, err := openPath(fd, name)
	if err != nil {
		return err
	}
	defer unix.Close(p)
	if m, ok := mountOf(p); ok && m != r.root.mnt {
		return errMountPoint
	}
	var st unix.Stat_t
	if err := unix.Fstat(p, &st); err != nil {
		return err
	}
	return chmodPath(p, uint32(st.Mode)&0o7777|0o700)
}

func orDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}
