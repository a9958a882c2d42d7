package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// TestRealHome: without a sandbox, the agents' places under a real HOME (and those their
// variables point at) are compared before and after, by metadata.
func TestRealHome(t *testing.T) {
	home, dotfiles, elsewhere := t.TempDir(), t.TempDir(), t.TempDir()
	mkfile(t, filepath.Join(home, ".codex", "config.toml"), 10)
	mkfile(t, filepath.Join(home, ".claude.json"), 20)
	mkfile(t, filepath.Join(home, ".qwen", "old.json"), 5)
	mkfile(t, filepath.Join(home, "Documents", "private.txt"), 1) // not an agent's place
	mkfile(t, filepath.Join(dotfiles, "gemini", "settings.json"), 3)
	if err := os.Symlink(filepath.Join(dotfiles, "gemini"), filepath.Join(home, ".gemini")); err != nil {
		t.Fatal(err)
	}
	environ := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + elsewhere, "XDG_CONFIG_HOME=" + filepath.Join(home, "cfg")}
	paths := sandbox.HomePaths(home, environ)
	for _, want := range []string{filepath.Join(home, ".codex"), filepath.Join(home, ".claude.json"), filepath.Join(home, ".gemini"), elsewhere, filepath.Join(home, "cfg", "opencode")} {
		if !slices.Contains(paths, want) {
			t.Errorf("HomePaths lacks %s: %v", want, paths)
		}
	}
	for _, p := range paths {
		if p == filepath.Join(home, ".config", "opencode") {
			t.Errorf("HomePaths ignored XDG_CONFIG_HOME: %v", paths)
		}
		for _, q := range paths {
			if p != q && strings.HasPrefix(p, q+"/") {
				t.Errorf("%s is inside %s, listed twice", p, q)
			}
		}
	}
	before := sandbox.SnapshotHome(home, paths, 0)
	mkfile(t, filepath.Join(home, ".codex", "config.toml"), 11) // changed
	mkfile(t, filepath.Join(home, ".codex", "sessions", "s.jsonl"), 7)
	mkfile(t, filepath.Join(dotfiles, "gemini", "tmp", "chat.jsonl"), 9) // through the link
	mkfile(t, filepath.Join(elsewhere, ".claude.json"), 4)
	mkfile(t, filepath.Join(home, "Documents", "new.txt"), 1) // not watched
	if err := os.Remove(filepath.Join(home, ".qwen", "old.json")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/", filepath.Join(home, ".codex", "root")); err != nil {
		t.Fatal(err)
	}
	files := sandbox.Diff(before, sandbox.SnapshotHome(home, paths, 0))
	want := []record.FileChange{
		{Path: "~/.codex/config.toml", Change: "changed", Kind: "file", Size: 11},
		{Path: "~/.codex/root", Change: "created", Kind: "symlink", Size: 1, Target: "/"},
		{Path: "~/.codex/sessions/s.jsonl", Change: "created", Kind: "file", Size: 7},
		{Path: "~/.gemini/tmp/chat.jsonl", Change: "created", Kind: "file", Size: 9},
		{Path: "~/.qwen/old.json", Change: "deleted", Kind: "file", Size: 5},
		{Path: elsewhere + "/.claude.json", Change: "created", Kind: "file", Size: 4},
	}
	slices.SortFunc(want, func(a, b record.FileChange) int { return strings.Compare(a.Path, b.Path) })
	if !reflect.DeepEqual(files.Changes, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", files.Changes, want)
	}
	if files.Created != 4 || files.Changed != 1 || files.Deleted != 1 || files.Capped {
		t.Errorf("counts %+v", files)
	}
	if files.Walked > 20 {
		t.Errorf("walked %d entries: the link to / was followed", files.Walked)
	}
}

// TestNoHang: a FIFO where a directory was, or as a watched root, is looked at, never opened.
func TestNoHang(t *testing.T) {
	home := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(home, ".claude.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(home, ".codex"), 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan record.Files, 1)
	go func() {
		paths := sandbox.HomePaths(home, nil)
		s := sandbox.SnapshotHome(home, paths, 0)
		done <- sandbox.Diff(s, s)
	}()
	select {
	case f := <-done:
		if f.Walked != 2 {
			t.Errorf("walked %d, want the 2 FIFOs", f.Walked)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the snapshot hangs on a FIFO")
	}
}

// TestShimRunsNothing: the shims use only shell builtins, so a PATH full of traps runs none,
// and concurrent calls each leave their own record.
func TestShimRunsNothing(t *testing.T) {
	trap := t.TempDir()
	shims, err := sandbox.NewTempShims()
	if err != nil {
		t.Fatal(err)
	}
	defer shims.Remove()
	marker := filepath.Join(trap, "ran")
	for _, name := range []string{"printf", "mv", "date", "mktemp", "cat", "test", "[", "sh", "bash"} {
		script := "#!/bin/sh\necho " + name + " >> " + marker + "\n"
		if err := os.WriteFile(filepath.Join(trap, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := shims.Env([]string{"PATH=" + trap + ":/usr/bin:/bin", "BROWSER=firefox", "OTHER=1"})
	if e := envMap(env); e["BROWSER"] != shims.Browser() || !strings.HasPrefix(e["PATH"], shims.Bin()+":"+trap) || e["OTHER"] != "1" {
		t.Fatalf("shim env %v", env)
	}
	var wg sync.WaitGroup
	const n = 50
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(filepath.Join(shims.Bin(), sandbox.ShimPrograms[i%len(sandbox.ShimPrograms)]), "--arg", strings.Repeat("x", i))
			cmd.Env = env
			if err := cmd.Run(); err == nil {
				t.Error("a shim succeeded; it should fail like a missing browser")
			}
		}()
	}
	wg.Wait()
	if b, err := os.ReadFile(marker); err == nil {
		t.Errorf("a shim ran programs from PATH: %s", b)
	}
	launches, dropped, err := shims.Launches()
	if err != nil || dropped != 0 || len(launches) != n {
		t.Fatalf("%d launches, %d dropped, %v", len(launches), dropped, err)
	}
	lengths := map[int]bool{}
	for _, l := range launches {
		if len(l.Args) != 2 || l.Args[0] != "--arg" || l.Truncated {
			t.Errorf("launch %+v", l)
			continue
		}
		lengths[len(l.Args[1])] = true
		// Launch i ran the shim named ShimPrograms[i%…]: the shared script knows it by its name.
		if want := sandbox.ShimPrograms[len(l.Args[1])%len(sandbox.ShimPrograms)]; l.Program != want {
			t.Errorf("launch %d recorded as %q, want %q", len(l.Args[1]), l.Program, want)
		}
	}
	if len(lengths) != n {
		t.Errorf("%d distinct records, want %d", len(lengths), n)
	}
}

// TestLaunchRecords: records that are cut, foreign, or not files are handled; the cap counts.
func TestLaunchRecords(t *testing.T) {
	shims, err := sandbox.NewTempShims()
	if err != nil {
		t.Fatal(err)
	}
	defer shims.Remove()
	log := filepath.Join(shims.Dir(), "launches")
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(log, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0", "acpprobe-launch/1\x00xdg-open\x002\x00https://a\x00half-writ")
	write("2.0", "something else\x00")
	write("3.0", "acpprobe-launch/1\x00open\x000\x00\x00")
	if err := syscall.Mkfifo(filepath.Join(log, "4.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	launches, _, err := shims.Launches()
	if err != nil {
		t.Fatal(err)
	}
	if len(launches) != 2 {
		t.Fatalf("launches %+v", launches)
	}
	for _, l := range launches {
		switch l.Program {
		case "xdg-open":
			if !l.Truncated || !slices.Equal(l.Args, []string{"https://a"}) {
				t.Errorf("cut record read as %+v", l)
			}
		case "open":
			if l.Truncated || len(l.Args) != 0 {
				t.Errorf("no-argument record read as %+v", l)
			}
		default:
			t.Errorf("launch %+v", l)
		}
	}
	for i := 0; i < 1100; i++ {
		write("x"+strconv.Itoa(i), "acpprobe-launch/1\x00open\x000\x00\x00")
	}
	// 1104 records: the first 1000 listed are read (two of the four above are not launches),
	// the other 104 counted.
	launches, dropped, err := shims.Launches()
	if err != nil || dropped != 104 || len(launches) < 998 || len(launches) > 1000 {
		t.Errorf("%d launches, %d dropped, %v", len(launches), dropped, err)
	}
}

func mkfile(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
}

// NewTopLevel finds what appeared in HOME and in its XDG base directories, leaves out what was
// there and what a watched place covers, and bounds what it returns.
func TestNewTopLevel(t *testing.T) {
	home := t.TempDir()
	mkfile(t, filepath.Join(home, ".old", "x"), 1)
	mkfile(t, filepath.Join(home, ".config", "old", "x"), 1)
	before := sandbox.TopLevel(home)
	mkfile(t, filepath.Join(home, ".codebuddy", "logs", "a.log"), 3)
	mkfile(t, filepath.Join(home, ".config", "newtool", "c.json"), 2)
	mkfile(t, filepath.Join(home, ".local", "state", "newtool", "s"), 1)
	mkfile(t, filepath.Join(home, ".qwen", "q"), 1)          // watched
	mkfile(t, filepath.Join(home, ".config", "old", "y"), 1) // inside an old entry: not new
	got := sandbox.NewTopLevel(home, before, []string{filepath.Join(home, ".qwen")})
	want := []string{filepath.Join(home, ".codebuddy"), filepath.Join(home, ".config", "newtool"), filepath.Join(home, ".local"),
		filepath.Join(home, ".local", "state", "newtool")}
	if !slices.Equal(got, want) {
		t.Errorf("NewTopLevel = %v, want %v", got, want)
	}
	for i := range 64 + 10 {
		mkfile(t, filepath.Join(home, fmt.Sprintf(".many-%03d", i)), 1)
	}
	if n := len(sandbox.NewTopLevel(home, before, nil)); n != 64 {
		t.Errorf("%d new entries returned, want the bound 64", n)
	}
}
