//go:build unix && !linux

package safefs

import (
	"os"

	"golang.org/x/sys/unix"
)

// mountOf is the device number of the file fd (no mount ids here: a bind mount of the same
// file system is not told apart).
func mountOf(fd int) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, false
	}
	return uint64(st.Dev), true
}

// openBeneath: no openat2 here, the caller walks the path.
func openBeneath(dirfd int, rel string) (int, error, bool) { return -1, nil, false }

func openNoSymlinks(dir string) (int, error) { return walkNoSymlinks(dir) }

// chmodPath: no O_PATH descriptors to change here.
func chmodPath(fd int, mode uint32) error { return os.ErrPermission }

// openPath: no O_PATH here; a directory that cannot be opened for reading stays.
func openPath(dirfd int, name string) (int, error) { return -1, unix.EACCES }

// ListNames lists the names in the directory fd, through a descriptor of its own (fd's offset
// is untouched).
func ListNames(fd int) ([]string, error) {
	own, err := unix.Openat(fd, ".", dirFlags, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(own), "")
	defer f.Close()
	return f.Readdirnames(-1)
}
