//go:build linux

package sandbox_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUnprivileged runs the promises again as an ordinary user (uid 65534) when the suite runs
// as root: a 0000 directory is then unreadable, removal needs the chmod pass, and the net
// level needs the helper's ambient capability.
func TestUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("not root: the other tests already run unprivileged")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "acpprobe-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "sandbox.test")
	if err := copyFile(exe, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^(TestAttack|TestNet|TestNetNoPorts|TestKeep|TestRealHome|TestHijackedSandboxRoot|TestInventorySeesDeepAndSaysWhatItCouldNot)$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GORACE=atexit_sleep_ms=0"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	for _, name := range []string{"TestAttack", "TestKeep", "TestRealHome", "TestHijackedSandboxRoot", "TestInventorySeesDeepAndSaysWhatItCouldNot"} {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("as uid 65534, %s did not pass:\n%s", name, out)
		}
	}
	if !strings.Contains(string(out), "--- PASS: TestNet ") {
		if unprivilegedUserns() {
			t.Errorf("as uid 65534, the net level failed although this kernel allows unprivileged user namespaces:\n%s", out)
		} else {
			t.Logf("net level as uid 65534 (unprivileged user namespaces are off here):\n%s", out)
		}
	}
}

// unprivilegedUserns reports whether the kernel lets an ordinary user create user namespaces.
func unprivilegedUserns() bool {
	for file, off := range map[string]string{
		"/proc/sys/user/max_user_namespaces":                     "0",
		"/proc/sys/kernel/unprivileged_userns_clone":             "0",
		"/proc/sys/kernel/apparmor_restrict_unprivileged_userns": "1",
	} {
		if b, err := os.ReadFile(file); err == nil && strings.TrimSpace(string(b)) == off {
			return false
		}
	}
	return true
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
