//go:build unix && !linux

package sandbox

import "golang.org/x/sys/unix"

// statEntry stats the entry name of dirfd (following a last link only with follow); the
// mount is told by the device (no mount ids here).
func statEntry(dirfd int, name string, follow bool) (entryStat, error) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, flags); err != nil {
		return entryStat{}, err
	}
	return entryStat{mode: uint32(st.Mode), size: st.Size, ino: uint64(st.Ino), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), mnt: uint64(st.Dev)}, nil
}
