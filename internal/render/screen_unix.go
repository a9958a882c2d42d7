//go:build linux || darwin || freebsd || netbsd || dragonfly

package render

import (
	"os"
	"syscall"
	"unsafe"
)

// terminalWidth asks the terminal behind f for its size: its width in columns, and whether f
// is a terminal at all (a file, a pipe or /dev/null is not).
func terminalWidth(f *os.File) (int, bool) {
	conn, err := f.SyscallConn()
	if err != nil {
		return 0, false
	}
	var ws struct{ Row, Col, X, Y uint16 }
	var errno syscall.Errno
	if err := conn.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, uintptr(syscall.TIOCGWINSZ), uintptr(unsafe.Pointer(&ws)))
	}); err != nil || errno != 0 {
		return 0, false
	}
	return int(ws.Col), true
}
