package safeio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "x.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero, dir} {
		// A FIFO without a writer would block a plain open forever; this must return at once.
		_, err := ReadFile(p, 1<<20)
		if !errors.Is(err, ErrNotRegular) {
			t.Errorf("ReadFile(%s) = %v, want ErrNotRegular", p, err)
		}
	}
}

func TestSizeCap(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFile(p, 99); err == nil || !strings.Contains(err.Error(), "100 bytes") {
		t.Errorf("over the cap: %v", err)
	}
	if b, err := ReadFile(p, 100); err != nil || len(b) != 100 {
		t.Errorf("at the cap: %d bytes, %v", len(b), err)
	}
}

// TestReadFileNoFollow: a symbolic link is refused, even to a regular file, and said so; the
// regular file itself is read.
func TestReadFileNoFollow(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	if err := os.WriteFile(file, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileNoFollow(file, 10); err != nil || string(b) != "{}" {
		t.Errorf("regular file: %q, %v", b, err)
	}
	if _, err := ReadFileNoFollow(link, 10); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("symlink: %v, want ErrNotRegular saying it is a symbolic link", err)
	}
	if b, err := ReadFile(link, 10); err != nil || string(b) != "{}" {
		t.Errorf("ReadFile follows the link: %q, %v", b, err)
	}
}
