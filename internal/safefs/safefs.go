//go:build unix

// Package safefs writes and removes files beneath a directory that an untrusted program (an
// agent running as the same user, or as root) can also write to. Nothing it does follows a
// symbolic link, crosses a mount point or leaves the directory it was given, whatever the
// other program planted there meanwhile: every path is resolved one component at a time from
// a directory descriptor (openat with O_NOFOLLOW, or openat2 with RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS and RESOLVE_NO_XDEV where the kernel has it), each directory reached is
// checked to be on the same mount as the one it was reached from, a file is written by
// creating a fresh one and renaming it over the old name (so a planted hard link or FIFO is
// replaced, never written through), and modes are changed only on directories opened that
// way. A removal that cannot remove everything says what it left and why (RemoveError)
// instead of failing silently.
//
// The trust root is a Dir: one acpprobe created (Create: it keeps the descriptor from the
// moment the directory exists, so replacing the path later changes nothing), or one it opens
// by a path that must hold no symbolic link at all and must not be a mount point itself
// (OpenDir).
package safefs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Dir is an open directory: the root beneath which paths are resolved.
type Dir struct {
	f    *os.File
	path string // for messages, and where Remove looks for the directory's own entry
	mnt  uint64 // the mount it is on (see mountOf)
	dev  uint64
	ino  uint64
}

// Path is the path the directory had when it was opened or created.
func (d *Dir) Path() string { return d.path }

// Close releases the directory's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

func (d *Dir) fd() int { return int(d.f.Fd()) }

// dirFlags open a directory without following a link at its last component and without
// blocking if something else (a FIFO) was put there.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// Create makes a new directory in parent (0700), named pattern with its last "*" replaced by
// a random string (as os.MkdirTemp), and returns it open. parent is trusted: it is where the
// caller chose to work (the system's temporary directory).
func Create(parent, pattern string) (*Dir, error) {
	if parent == "" {
		parent = os.TempDir()
	}
	p, err := os.Open(parent)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	prefix, suffix := pattern, ""
	if i := strings.LastIndexByte(pattern, '*'); i >= 0 {
		prefix, suffix = pattern[:i], pattern[i+1:]
	}
	for try := 0; try < 100; try++ {
		name := prefix + randomName() + suffix
		err := unix.Mkdirat(int(p.Fd()), name, 0o700)
		if err == unix.EEXIST {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(parent, name), Err: err}
		}
		return openAt(int(p.Fd()), name, filepath.Join(parent, name))
	}
	return nil, fmt.Errorf("safefs: no free name for %s in %s", pattern, parent)
}

// OpenDir opens the directory at path, which must hold no symbolic link in any component
// (the caller resolved it when it made it: a link there now was planted) and must not be a
// mount point of its own (something mounted over the directory the caller made).
func OpenDir(path string) (*Dir, error) {
	if !filepath.IsAbs(path) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		path = abs
	}
	path = filepath.Clean(path)
	parent, name := filepath.Split(path)
	pfd, err := openNoSymlinks(parent)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: parent, Err: err}
	}
	defer unix.Close(pfd)
	if name == "" { // "/"
		fd, err := unix.FcntlInt(uintptr(pfd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		return newDir(fd, path)
	}
	d, err := openAt(pfd, name, path)
	if err != nil {
		return nil, err
	}
	if pm, ok := mountOf(pfd); ok && pm != d.mnt {
		d.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: errMountPoint}
	}
	return d, nil
}

// errMountPoint: a directory is a mount point, which safefs never crosses.
var errMountPoint = errors.New("a mount point (not crossed)")

// openAt opens the directory name of dirfd (no link followed) as a Dir.
func openAt(dirfd int, name, path string) (*Dir, error) {
	fd, err := unix.Openat(dirfd, name, dirFlags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return newDir(fd, path)
}

func newDir(fd int, path string) (*Dir, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	d := &Dir{f: os.NewFile(uintptr(fd), path), path: path, dev: uint64(st.Dev), ino: uint64(st.Ino)}
	d.mnt, _ = mountOf(fd)
	return d, nil
}

// components splits a path relative to a Dir, refusing absolute paths and "..".
func components(rel string) ([]string, error) {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == "." {
		return nil, nil
	}
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("safefs: %q is not a path beneath the directory", rel)
	}
	return strings.Split(rel, "/"), nil
}

// walk opens the directory rel beneath d, one component at a time: none may be a link or a
// mount point; with perm != 0 the missing ones are created with it. The caller closes the
// descriptor.
func (d *Dir) walk(rel string, perm os.FileMode) (int, error) {
	comps, err := components(rel)
	if err != nil {
		return -1, err
	}
	if perm == 0 && len(comps) > 0 {
		if fd, err, ok := openBeneath(d.fd(), rel); ok {
			if err != nil {
				return -1, &os.PathError{Op: "open", Path: filepath.Join(d.path, rel), Err: err}
			}
			return fd, nil
		}
	}
	fd, err := unix.FcntlInt(uintptr(d.fd()), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for i, c := range comps {
		rel := filepath.Join(comps[:i+1]...)
		next, err := d.step(fd, c, rel)
		if perm != 0 && errors.Is(err, unix.ENOENT) { // made only when missing: mkdir is costly
			if err = unix.Mkdirat(fd, c, uint32(perm.Perm())); err == nil || err == unix.EEXIST {
				next, err = d.step(fd, c, rel)
			} else {
				err = &os.PathError{Op: "mkdir", Path: filepath.Join(d.path, rel), Err: err}
			}
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// step opens the subdirectory name of dirfd, refusing a link and a mount point.
func (d *Dir) step(dirfd int, name, rel string) (int, error) {
	path := filepath.Join(d.path, rel)
	next, err := unix.Openat(dirfd, name, dirFlags, 0)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if m, ok := mountOf(next); ok && m != d.mnt {
		unix.Close(next)
		return -1, &os.PathError{Op: "open", Path: path, Err: errMountPoint}
	}
	return next, nil
}

// MkdirAll makes the directory rel beneath d and every missing one above it, with perm.
func (d *Dir) MkdirAll(rel string, perm os.FileMode) error {
	if perm == 0 {
		perm = 0o700
	}
	fd, err := d.walk(rel, perm)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

// WriteFile writes data to the file rel beneath d (its directories made 0700 when missing),
// replacing whatever entry had that name: a new file with mode perm is written beside it
// and renamed over it, so a link, a hard link or a FIFO planted there is replaced, never
// written through. A directory of that name is an error.
func (d *Dir) WriteFile(rel string, data []byte, perm os.FileMode) error {
	comps, err := components(rel)
	if err != nil {
		return err
	}
	if len(comps) == 0 {
		return fmt.Errorf("safefs: no file name in %q", rel)
	}
	path := filepath.Join(d.path, rel)
	dirfd, err := d.walk(filepath.Join(comps[:len(comps)-1]...), 0o700)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	tmp := ".acpprobe-" + randomName()
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return &os.PathError{Op: "create", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm.Perm()) // whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, comps[len(comps)-1])
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}

// Chmod sets the mode of the directory rel beneath d ("." is d itself).
func (d *Dir) Chmod(rel string, perm os.FileMode) error {
	fd, err := d.walk(rel, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		return &os.PathError{Op: "chmod", Path: filepath.Join(d.path, rel), Err: err}
	}
	return nil
}

// Open opens the directory rel beneath d.
func (d *Dir) Open(rel string) (*Dir, error) {
	fd, err := d.walk(rel, 0)
	if err != nil {
		return nil, err
	}
	return newDir(fd, filepath.Join(d.path, rel))
}

func randomName() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// errnoText is the short text of an error for a report ("permission denied").
func errnoText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// walkNoSymlinks opens the absolute directory path dir from "/", one component at a time,
// none of them a symbolic link.
func walkNoSymlinks(dir string) (int, error) {
	fd, err := unix.Open("/", dirFlags, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(strings.Trim(filepath.Clean(dir), "/"), "/") {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, dirFlags, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// Fd is the directory's descriptor, for reading beneath it with the *at system calls (the
// side-effect inventory walks a tree so); it stays d's to close.
func (d *Dir) Fd() int { return d.fd() }

// MountOf is the id of the mount the open file fd is on: a directory whose id differs from
// the one it was reached from is a mount point.
func MountOf(fd int) (uint64, bool) { return mountOf(fd) }

// Mount is the id of the mount d is on.
func (d *Dir) Mount() uint64 { return d.mnt }

// Names lists the names in d.
func (d *Dir) Names() ([]string, error) { return ListNames(d.fd()) }

// ErrNotRegular: OpenFile found something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// OpenFile opens the regular file rel beneath d for reading, never through a link, never
// blocking on a FIFO.
func (d *Dir) OpenFile(rel string) (*os.File, error) {
	comps, err := components(rel)
	if err != nil || len(comps) == 0 {
		return nil, fmt.Errorf("safefs: no file name in %q", rel)
	}
	dirfd, err := d.walk(filepath.Join(comps[:len(comps)-1]...), 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	path := filepath.Join(d.path, rel)
	fd, err := unix.Openat(dirfd, comps[len(comps)-1], unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return os.NewFile(uintptr(fd), path), nil
}
