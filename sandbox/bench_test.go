package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/acpprobe/acpprobe/sandbox"
)

// BenchmarkRun compares one run of a small agent (the test binary writing three files) with
// no sandbox and inside one: setup, a snapshot before and after, the diff, the launches and
// the removal.
func BenchmarkRun(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plain", func(b *testing.B) {
		home := b.TempDir()
		cfg := filepath.Join(home, ".config")
		for b.Loop() {
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+cfg, "TMPDIR="+home, agentEnv+"=quiet", "GORACE=atexit_sleep_ms=0")
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	levels := []bool{false}
	if sandbox.Available().Net {
		levels = append(levels, true)
	}
	for _, net := range levels {
		name := "sandboxed/env+home"
		if net {
			name = "sandboxed/net"
		}
		b.Run(name, func(b *testing.B) {
			parent := b.TempDir()
			for b.Loop() {
				s, err := sandbox.New(sandbox.Options{Parent: parent, Net: net})
				if err != nil {
					b.Fatal(err)
				}
				before := s.Snapshot()
				cmd := exec.Command(exe)
				cmd.Env = append(s.Env(), agentEnvVar("quiet")...)
				if err := s.Prepare(cmd); err != nil {
					b.Fatal(err)
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				if f := sandbox.Diff(before, s.Snapshot()); f.Created != 3 {
					b.Fatalf("%d created", f.Created)
				}
				if _, _, err := s.BrowserLaunches(); err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetup is New and Close alone.
func BenchmarkSetup(b *testing.B) {
	parent := b.TempDir()
	for b.Loop() {
		s, err := sandbox.New(sandbox.Options{Parent: parent})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInventory is one snapshot and a diff of a HOME shaped like codex-acp's after a
// handshake (68 files in 35 directories), and of a larger one.
func BenchmarkInventory(b *testing.B) {
	for _, n := range []int{68, 2000} {
		b.Run(fmt.Sprintf("%dfiles", n), func(b *testing.B) {
			s, err := sandbox.New(sandbox.Options{Parent: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			before := s.Snapshot()
			for i := 0; i < n; i++ {
				p := filepath.Join(s.Home(), ".codex", fmt.Sprintf("d%02d", i%35), fmt.Sprintf("f%04d", i))
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
					b.Fatal(err)
				}
			}
			for b.Loop() {
				if f := sandbox.Diff(before, s.Snapshot()); f.Created != n {
					b.Fatalf("%d created", f.Created)
				}
			}
		})
	}
}
