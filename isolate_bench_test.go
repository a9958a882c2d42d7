package acpprobe_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/sandbox"
)

// BenchmarkSandboxCost measures, in one run, what isolation costs a probe of the reference
// agent (claude persona, a process): a bare probe (Drive and Analyze, as Run was before it
// observed side effects); Run as probe runs by default (the browser shims, and the
// inventory of the places agents keep state under a HOME holding a codex-sized ~/.codex); Run
// with --isolate; Run with --isolate=net where it works; and the sandbox's own cost without
// an agent: setup, the two inventories, the diff, the launches and the removal.
func BenchmarkSandboxCost(b *testing.B) {
	cfg := acptest.Config{Persona: "claude"}
	home := b.TempDir()
	for i := range 68 { // codex-acp's ~/.codex after a handshake: 68 files in 35 directories
		p := filepath.Join(home, ".codex", "d"+string(rune('a'+i%35)), "f"+string(rune('a'+i)))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	environ := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	launch := func() probe.Options {
		cmd := agentCommand(b, cfg)
		cmd.Environ = environ
		return probe.Options{Launcher: cmd, Cwd: b.TempDir(), Timeout: 30 * time.Second}
	}
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			po := launch()
			log, err := probe.Drive(ctx, po)
			if err != nil {
				b.Fatal(err)
			}
			if r, err := acpprobe.Analyze(ctx, log.Frames(), acpprobe.AnalyzeOptions{}); err != nil || r.Error != nil {
				b.Fatalf("%v %v", err, r.Error)
			}
		}
	})
	run := func(b *testing.B, iso *sandbox.Options) {
		for b.Loop() {
			po := launch()
			po.Log = jsonrpc.NewLog()
			r, err := acpprobe.Run(ctx, acpprobe.Options{Probe: po, Isolate: iso})
			if err != nil || r.Error != nil || r.SideEffects == nil {
				b.Fatalf("%v %+v", err, r)
			}
		}
	}
	b.Run("observed", func(b *testing.B) { run(b, nil) })
	parent := b.TempDir()
	b.Run("isolated", func(b *testing.B) { run(b, &sandbox.Options{Parent: parent, Environ: environ}) })
	if sandbox.Available().Net {
		b.Run("isolated-net", func(b *testing.B) { run(b, &sandbox.Options{Parent: parent, Environ: environ, Net: true}) })
	}
	b.Run("sandbox-only", func(b *testing.B) {
		for b.Loop() {
			s, err := sandbox.New(sandbox.Options{Parent: parent, Environ: environ})
			if err != nil {
				b.Fatal(err)
			}
			before := s.Snapshot()
			_ = sandbox.Diff(before, s.Snapshot())
			if _, _, err := s.BrowserLaunches(); err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("home-inventory-only", func(b *testing.B) {
		paths := sandbox.HomePaths(home, environ)
		for b.Loop() { // the watch as Run takes it, without an agent between
			w := sandbox.WatchHome(home, paths, 0)
			_ = w.Finish()
			b.StopTimer()
			w.Close() // Run closes it last, once the kernel has freed the watches Finish removed
			b.StartTimer()
		}
	})
}
