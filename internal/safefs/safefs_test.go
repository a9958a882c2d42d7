//go:build linux

package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// both runs f with openat2 and with the component walk that stands in for it on older
// kernels.
func both(t *testing.T, f func(t *testing.T)) {
	t.Run("openat2", f)
	t.Run("walk", func(t *testing.T) {
		noOpenat2.Store(true)
		defer noOpenat2.Store(false)
		f(t)
	})
}

// victim is a directory outside the tree under attack, holding one file; check says
// whether it is as it was.
func victim(t *testing.T) (dir string, check func()) {
	t.Helper()
	dir = t.TempDir()
	file := filepath.Join(dir, "precious")
	if err := os.WriteFile(file, []byte("user data"), 0o640); err != nil {
		t.Fatal(err)
	}
	must(t, os.Chmod(dir, 0o750))
	return dir, func() {
		t.Helper()
		b, err := os.ReadFile(file)
		st, serr := os.Stat(dir)
		fst, ferr := os.Stat(file)
		if err != nil || string(b) != "user data" || serr != nil || ferr != nil || fst.Mode().Perm() != 0o640 || st.Mode().Perm() != 0o750 {
			t.Errorf("the victim changed: %q %v; dir %v %v; file %v %v", b, err, st, serr, fst, ferr)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 1 {
			t.Errorf("the victim's directory holds %d entries, want 1", len(entries))
		}
	}
}

func create(t *testing.T) *Dir {
	t.Helper()
	d, err := Create(t.TempDir(), "box-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// A file is written beneath the directory, never through a link planted on its way or in
// its place, nor through a hard link or a FIFO put under its name.
func TestWriteFileFollowsNothing(t *testing.T) {
	both(t, func(t *testing.T) {
		d := create(t)
		vdir, check := victim(t)
		must(t, os.Symlink(vdir, filepath.Join(d.Path(), ".codex")))                                 // a directory on the way
		must(t, os.Symlink(filepath.Join(vdir, "precious"), filepath.Join(d.Path(), "config.toml"))) // the file itself
		must(t, os.Link(filepath.Join(vdir, "precious"), filepath.Join(d.Path(), "hard.toml")))
		must(t, unix.Mkfifo(filepath.Join(d.Path(), "fifo.toml"), 0o600))

		if err := d.WriteFile(".codex/config.toml", []byte("x"), 0o600); err == nil {
			t.Error("wrote through a link to a directory outside")
		}
		for _, name := range []string{"config.toml", "hard.toml", "fifo.toml"} {
			if err := d.WriteFile(name, []byte("model"), 0o600); err != nil {
				t.Errorf("%s: %v", name, err)
			}
			st, err := os.Lstat(filepath.Join(d.Path(), name))
			b, _ := os.ReadFile(filepath.Join(d.Path(), name))
			if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 || string(b) != "model" {
				t.Errorf("%s: %v %v %q, want a regular file of ours", name, st, err, b)
			}
		}
		if err := d.WriteFile("a/b/c.json", []byte("{}"), 0o600); err != nil {
			t.Error(err)
		}
		if err := d.WriteFile("../escape", []byte("x"), 0o600); err == nil {
			t.Error("wrote above the directory")
		}
		check()
	})
}

// Removal unlinks links and never what they point to, empties directories the agent made
// unreadable, removes a tree deeper than it holds descriptors for, and leaves the directory
// itself when its name now points somewhere else.
func TestRemoveFollowsNothing(t *testing.T) {
	both(t, func(t *testing.T) {
		d := create(t)
		vdir, check := victim(t)
		must(t, os.Symlink(vdir, filepath.Join(d.Path(), "link")))
		deep := d.Path()
		for i := 0; i < 300; i++ {
			deep = filepath.Join(deep, "d")
			if err := os.Mkdir(deep, 0o700); err != nil {
				t.Fatal(i, err)
			}
		}
		must(t, os.WriteFile(filepath.Join(deep, "bottom"), nil, 0o600))
		locked := filepath.Join(d.Path(), "d", "d", "locked")
		must(t, os.MkdirAll(filepath.Join(locked, "inner"), 0o700))
		must(t, os.WriteFile(filepath.Join(locked, "inner", "f"), nil, 0o600))
		must(t, os.Chmod(locked, 0))
		if err := d.Remove(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Lstat(d.Path()); !os.IsNotExist(err) {
			t.Errorf("the directory is still there: %v", err)
		}
		check()
	})
}

// The directory's name replaced by a link to the user's directory: its contents are removed
// through the descriptor, the link and its target are left alone, and the report says so.
func TestRemoveWhenTheRootIsReplaced(t *testing.T) {
	d := create(t)
	vdir, check := victim(t)
	must(t, os.WriteFile(filepath.Join(d.Path(), "mine"), nil, 0o600))
	moved := d.Path() + ".moved"
	must(t, os.Rename(d.Path(), moved))
	must(t, os.Symlink(vdir, d.Path()))
	var rerr *RemoveError
	if err := d.Remove(); !errors.As(err, &rerr) || len(rerr.Left) != 1 || rerr.Left[0].Path != "." || !strings.Contains(rerr.Left[0].Reason, "replaced") {
		t.Fatalf("Remove = %v, want the replaced root reported", err)
	}
	if entries, err := os.ReadDir(moved); err != nil || len(entries) != 0 {
		t.Errorf("the moved directory holds %v (%v), want it emptied", entries, err)
	}
	if target, err := os.Readlink(d.Path()); err != nil || target != vdir {
		t.Errorf("the planted link: %q %v", target, err)
	}
	check()
}

// As root: a user's directory bind-mounted into the tree is not crossed (nor emptied), an
// immutable file is reported rather than silently left, and a write never lands in a mount.
func TestRemoveCrossesNoMount(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("mounting and chattr +i need root")
	}
	both(t, func(t *testing.T) {
		d := create(t)
		vdir, check := victim(t)
		mnt := filepath.Join(d.Path(), "home", "mnt")
		must(t, os.MkdirAll(mnt, 0o700))
		if err := unix.Mount(vdir, mnt, "", unix.MS_BIND, ""); err != nil {
			t.Skip("bind mount:", err)
		}
		t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
		frozen := filepath.Join(d.Path(), "home", "frozen")
		must(t, os.WriteFile(frozen, nil, 0o600))
		immutable := setFlags(t, frozen, fsImmutable)
		if immutable {
			t.Cleanup(func() { setFlags(t, frozen, 0) })
		}
		if err := d.WriteFile("home/mnt/config.toml", []byte("x"), 0o600); err == nil {
			t.Error("wrote into a mount point")
		}
		if err := d.MkdirAll("home/mnt/sub", 0o700); err == nil {
			t.Error("made a directory in a mount point")
		}
		err := d.RemoveAll()
		var rerr *RemoveError
		if !errors.As(err, &rerr) {
			t.Fatalf("RemoveAll = %v, want what it left reported", err)
		}
		reasons := map[string]string{}
		for _, l := range rerr.Left {
			reasons[l.Path] = l.Reason
		}
		if reasons["home/mnt"] != errMountPoint.Error() {
			t.Errorf("the mount point: %q (left %+v)", reasons["home/mnt"], rerr.Left)
		}
		if immutable && reasons["home/frozen"] != "operation not permitted" {
			t.Errorf("the immutable file: %q (left %+v)", reasons["home/frozen"], rerr.Left)
		}
		if !strings.Contains(err.Error(), "home/mnt (a mount point (not crossed))") {
			t.Errorf("message %q", err)
		}
		check()
	})
}

// OpenDir refuses a path with a link in it and a directory something was mounted over.
func TestOpenDirRefusesLinksAndMounts(t *testing.T) {
	d := create(t)
	vdir, check := victim(t)
	must(t, os.Symlink(vdir, filepath.Join(d.Path(), "home")))
	if h, err := OpenDir(filepath.Join(d.Path(), "home")); err == nil {
		h.Close()
		t.Error("opened a HOME that is a link")
	}
	if h, err := OpenDir(filepath.Join(d.Path(), "home", ".")); err == nil {
		h.Close()
		t.Error("opened a path through a link")
	}
	if h, err := OpenDir(d.Path()); err != nil {
		t.Error(err)
	} else {
		h.Close()
	}
	if os.Getuid() == 0 {
		mnt := filepath.Join(d.Path(), "mnt")
		must(t, os.Mkdir(mnt, 0o700))
		if err := unix.Mount(vdir, mnt, "", unix.MS_BIND, ""); err == nil {
			defer unix.Unmount(mnt, unix.MNT_DETACH)
			if h, err := OpenDir(mnt); err == nil {
				h.Close()
				t.Error("opened a mount point")
			}
		}
	}
	check()
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

const fsImmutable = 0x10 // FS_IMMUTABLE_FL

// setFlags sets a file's inode flags (chattr); false when the file system has none.
func setFlags(t *testing.T, path string, flags int) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), unix.FS_IOC_SETFLAGS, uintptr(unsafe.Pointer(&flags)))
	return errno == 0
}
