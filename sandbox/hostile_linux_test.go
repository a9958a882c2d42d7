package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/sandbox"
)

// notDumpable makes the test binary not dumpable, as acpprobe is once transport has launched
// an agent: the net level's helper must then map its ids itself (TestUnprivileged runs it as
// an ordinary user, for whom a parent cannot write a non-dumpable child's maps).
func notDumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// mountAttack is the mount mode of the test agent: it bind-mounts outside into home and
// makes a file of home immutable (rep.Launch says why not, on a file system without inode
// flags).
func mountAttack(home, outside string, rep *agentReport) error {
	if err := os.Mkdir(filepath.Join(home, "mnt"), 0o700); err != nil {
		return err
	}
	if err := unix.Mount(outside, filepath.Join(home, "mnt"), "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, "frozen"), []byte("x"), 0o600); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(home, "frozen"))
	if err != nil {
		return err
	}
	defer f.Close()
	const immutable = 0x10 // FS_IMMUTABLE_FL: chattr +i
	if err := unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, immutable); err != nil {
		rep.Launch = "immutable: " + err.Error()
	}
	return nil
}

// As root, the agent bind-mounts a directory of the user's into its HOME and makes a file
// immutable: Close neither crosses the mount (the user's files stay; before, all were
// removed) nor fails silently: both are in what it left. The inventory does not walk into
// the mount either, and says so.
func TestBindMountIsNotEmptied(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("bind mounts and immutable files need root")
	}
	outside, intact := userDir(t)
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir()), Env: []string{"ACPPROBE_TEST_OUTSIDE=" + outside}})
	if err != nil {
		t.Fatal(err)
	}
	mnt, frozen := filepath.Join(s.Home(), "mnt"), filepath.Join(s.Home(), "frozen")
	t.Cleanup(func() {
		_ = unix.Unmount(mnt, unix.MNT_DETACH)
		if f, err := os.Open(frozen); err == nil {
			_ = unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, 0)
			f.Close()
		}
		_ = os.RemoveAll(s.Dir())
	})
	before := s.Snapshot()
	rep := runIn(t, s, "mount")
	files := sandbox.Diff(before, s.Snapshot())
	if len(files.Unseen) != 1 || files.Unseen[0].Path != "home/mnt" || !strings.Contains(files.Unseen[0].Reason, "mount point") {
		t.Errorf("unseen %+v, want the mount point", files.Unseen)
	}
	for _, c := range files.Changes {
		if strings.HasPrefix(c.Path, "home/mnt/") {
			t.Errorf("the inventory walked into the mount: %+v", c)
		}
	}
	err = s.Close()
	intact()
	reasons := map[string]string{}
	for _, l := range sandbox.Leftovers(err) {
		reasons[l.Path] = l.Reason
	}
	if !strings.Contains(reasons["home/mnt"], "mount point") {
		t.Errorf("left %v, want home/mnt as a mount point", reasons)
	}
	if rep.Launch == "" && reasons["home/frozen"] != "operation not permitted" {
		t.Errorf("left %v, want the immutable home/frozen", reasons)
	}
}
