package safefs

import (
	"io"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// mountOf is the id of the mount the open file fd is on (statx's mount id: a bind mount of a
// directory of the same file system has an id of its own, where st_dev would be the same),
// or its device number on a kernel older than 5.8.
func mountOf(fd int) (uint64, bool) {
	var stx unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW, unix.STATX_MNT_ID, &stx); err != nil {
		return 0, false
	}
	if stx.Mask&unix.STATX_MNT_ID != 0 {
		return stx.Mnt_id, true
	}
	return unix.Mkdev(stx.Dev_major, stx.Dev_minor), true
}

// noOpenat2 is set when the kernel has no openat2 (before 5.6, or a seccomp filter refusing
// it): paths are then walked component by component (tests set it to exercise that walk).
var noOpenat2 atomic.Bool

// openBeneath opens the directory rel beneath dirfd in one openat2 call that refuses any
// symbolic link, any mount crossing and any escape from dirfd. ok is false when the kernel
// cannot do it: the caller then walks the path itself.
func openBeneath(dirfd int, rel string) (fd int, err error, ok bool) {
	if noOpenat2.Load() {
		return -1, nil, false
	}
	fd, err = unix.Openat2(dirfd, rel, &unix.OpenHow{
		Flags:   dirFlags,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV,
	})
	switch err {
	case unix.ENOSYS, unix.EPERM: // EPERM: a seccomp filter's answer
		noOpenat2.Store(err == unix.ENOSYS)
		return -1, nil, false
	case unix.EXDEV:
		return -1, errMountPoint, true
	}
	return fd, err, true
}

// openNoSymlinks opens the directory at the absolute path dir, refusing a symbolic link in
// any of its components (mounts on the way are allowed: the path is the caller's own).
func openNoSymlinks(dir string) (int, error) {
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(unix.AT_FDCWD, dir, &unix.OpenHow{
			Flags: dirFlags, Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		if err != unix.ENOSYS && err != unix.EPERM {
			return fd, err
		}
	}
	return walkNoSymlinks(dir)
}

// chmodPath changes the mode of the file an O_PATH descriptor holds: fchmodat2 with
// AT_EMPTY_PATH (Linux 6.6), else through the descriptor's /proc/self/fd link, which names
// that very file.
func chmodPath(fd int, mode uint32) error {
	if err := unix.Fchmodat(fd, "", mode, unix.AT_EMPTY_PATH); err == nil || (err != unix.EOPNOTSUPP && err != unix.EINVAL && err != unix.ENOSYS) {
		return err
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}

// openPath opens the directory name of dirfd by O_PATH (no permission on it needed, no link
// followed).
func openPath(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// ListNames lists the names in the directory fd from its start, without a descriptor of its
// own (getdents on fd, after rewinding it): the walks call it once per directory they open.
func ListNames(fd int) ([]string, error) {
	if _, err := unix.Seek(fd, 0, io.SeekStart); err != nil {
		return nil, err
	}
	var names []string
	buf := make([]byte, 8192)
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return names, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
}
