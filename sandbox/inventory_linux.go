package sandbox

import "golang.org/x/sys/unix"

// statEntry stats the entry name of dirfd (following a last link only with follow), with
// the id of the mount it is on, in one statx call: the walk's only system call per entry. Its ctime and, where the file
// system keeps it, its birth time are what a HomeWatch judges an entry by.
func statEntry(dirfd int, name string, follow bool) (entryStat, error) {
	flags := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		flags = 0
	}
	var stx unix.Statx_t
	if err := unix.Statx(dirfd, name, flags, unix.STATX_BASIC_STATS|unix.STATX_BTIME|unix.STATX_MNT_ID, &stx); err != nil {
		return entryStat{}, err
	}
	st := entryStat{mode: uint32(stx.Mode), size: int64(stx.Size), ino: stx.Ino,
		mtime: nanos(stx.Mtime), ctime: nanos(stx.Ctime), mnt: unix.Mkdev(stx.Dev_major, stx.Dev_minor)}
	if stx.Mask&unix.STATX_BTIME != 0 {
		st.btime = nanos(stx.Btime)
	}
	if stx.Mask&unix.STATX_MNT_ID != 0 {
		st.mnt = stx.Mnt_id
	}
	return st, nil
}

// nanos is t in nanoseconds since the epoch.
func nanos(t unix.StatxTimestamp) int64 { return t.Sec*1e9 + int64(t.Nsec) }
