package render_test

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/matrix"
)

// openPTY opens a pseudo-terminal of cols columns and returns its terminal side (what a
// program's stdout would be) and the other side (what a terminal emulator reads).
func openPTY(t *testing.T, cols uint16) (tty, master *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	ioctl := func(f *os.File, req uintptr, arg unsafe.Pointer) {
		t.Helper()
		conn, err := f.SyscallConn()
		if err != nil {
			t.Skipf("ioctl %#x: %v", req, err)
		}
		var e syscall.Errno
		if err := conn.Control(func(fd uintptr) {
			_, _, e = syscall.Syscall(syscall.SYS_IOCTL, fd, req, uintptr(arg))
		}); err != nil || e != 0 {
			t.Skipf("ioctl %#x: %v %v", req, err, e)
		}
	}
	var unlock, n int32
	ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock))
	ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n))
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	ws := struct{ Row, Col, X, Y uint16 }{Row: 24, Col: cols}
	ioctl(tty, syscall.TIOCSWINSZ, unsafe.Pointer(&ws))
	return tty, master
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestScreenOf (issue 13, item 18): the width and ANSI of where text goes, from the terminal
// and the environment.
func TestScreenOf(t *testing.T) {
	tty, _ := openPTY(t, 97)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for _, c := range []struct {
		what  string
		w     any
		env   map[string]string
		width int
		ansi  bool
	}{
		{"a terminal", tty, map[string]string{"TERM": "xterm-256color"}, 97, true},
		{"COLUMNS wins on a terminal", tty, map[string]string{"COLUMNS": "132"}, 132, true},
		{"TERM=dumb", tty, map[string]string{"TERM": "dumb"}, 97, false},
		{"NO_COLOR", tty, map[string]string{"NO_COLOR": "1"}, 97, false},
		{"COLUMNS that is not a number", tty, map[string]string{"COLUMNS": "wide"}, 97, true},
		{"a file", file, nil, 0, false},
		{"/dev/null (a character device, not a terminal)", devnull, nil, 0, false},
		{"COLUMNS for a file", file, map[string]string{"COLUMNS": "100"}, 100, false},
		{"a buffer", &bytes.Buffer{}, nil, 0, false},
	} {
		s := render.ScreenOf(c.w.(interface{ Write([]byte) (int, error) }), env(c.env))
		if s.Width != c.width || s.ANSI != c.ansi {
			t.Errorf("%s: width %d, ANSI %v; want %d, %v", c.what, s.Width, s.ANSI, c.width, c.ansi)
		}
	}
}

// TestProgressNoANSI: the matrix progress on a terminal with TERM=dumb or NO_COLOR writes no
// escape sequence, and one plain line per finished agent.
func TestProgressNoANSI(t *testing.T) {
	m := testMatrix(t)
	for _, vars := range []map[string]string{{"TERM": "dumb"}, {"NO_COLOR": "1", "TERM": "xterm"}} {
		tty, master := openPTY(t, 80)
		p := render.NewProgress(render.ScreenOf(tty, env(vars)), []string{m.Rows[0].ID})
		p.Update(matrix.Event{Index: 0, ID: m.Rows[0].ID})
		p.Update(matrix.Event{Index: 0, ID: m.Rows[0].ID, Done: true, Row: &m.Rows[0]})
		p.Finish()
		if err := master.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Skipf("no deadline on the terminal: %v", err)
		}
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.HasSuffix(got, []byte("\n")) {
			n, err := master.Read(buf)
			if err != nil {
				t.Fatalf("%v: read the terminal: %v (got %q)", vars, err, got)
			}
			got = append(got, buf[:n]...)
		}
		if bytes.ContainsRune(got, 0x1b) || string(got) != "acpprobe matrix:  acptest-claude           ok (0.0s)\r\n" {
			t.Errorf("%v: the terminal got %q", vars, got)
		}
	}
}
