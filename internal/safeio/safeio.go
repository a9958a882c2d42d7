// Package safeio opens the files a user hands acpprobe — transcripts, results, catalogue
// directories, agents configs, registries, baselines — as untrusted input: only regular files
// are read (a FIFO would block forever, a device such as /dev/zero never ends), and never more
// than a stated size, so that a bad path gives a clear error instead of a hang or an
// out-of-memory crash.
package safeio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular is returned for paths that are not regular files (directories, FIFOs,
// devices, sockets), symbolic links followed.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading if it is a regular file (following symbolic links). The open
// itself never blocks: a FIFO is refused, not waited on.
func Open(path string) (*os.File, os.FileInfo, error) { return open(path, 0) }

// open is Open with extra open flags (O_NOFOLLOW).
func open(path string, flags int) (*os.File, os.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		if flags&syscall.O_NOFOLLOW != 0 && errors.Is(err, syscall.ELOOP) {
			return nil, nil, fmt.Errorf("%s: %w (a symbolic link)", path, ErrNotRegular)
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(st.Mode()))
	}
	return f, st, nil
}

// ReadFile reads a whole regular file of at most max bytes.
func ReadFile(path string, max int64) ([]byte, error) { return readFile(path, max, 0) }

// ReadFileNoFollow is ReadFile for a path that must be a regular file itself, not a symbolic
// link to one (the files of a directory acpprobe reads as a whole, such as --profiles).
func ReadFileNoFollow(path string, max int64) ([]byte, error) {
	return readFile(path, max, syscall.O_NOFOLLOW)
}

func readFile(path string, max int64, flags int) ([]byte, error) {
	f, st, err := open(path, flags)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this file may have", path, st.Size(), max)
	}
	// The size may change while reading: read at most max+1 bytes to notice.
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than the %d bytes this file may have", path, max)
	}
	return b, nil
}

func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}
