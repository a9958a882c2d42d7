package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/render"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/tap"
	"github.com/acpprobe/acpprobe/transcript"
)

// TapOptions are the options of acpprobe tap: sit between an editor (on stdio) and an agent.
type TapOptions struct {
	IO Stdio
	// Target is the agent: its Launcher, MaxLineSize and Grace are used.
	Target probe.Options
	// Recording says where the record goes and what is kept out of it.
	Recording Recording
	// Catalogue classifies vendor extensions for Check (the built-in one when nil).
	Catalogue *extensions.Catalogue
	// Check judges the session as it happens; findings go to IO.Err, or to Findings.
	Check bool
	// Findings, when set, is the file that receives the findings as NDJSON.
	Findings string
}

func newTapOptions(args []string, stdio Stdio) (*TapOptions, error) {
	fs := newFlagSet("tap")
	var pf probeFlags
	pf.register(fs, commandFlag|agentsFlag|transcriptFlag)
	check := fs.Bool("check", false, "judge the session as it happens; findings go to stderr (or --findings), never to stdout")
	findingsPath := fs.String("findings", "", "write findings as NDJSON to this file instead of stderr")
	cl, err := parseArgs(fs, args, "acpprobe tap [--transcript FILE] [--check [--findings FILE]] (AGENT-ID | -- <agent command> [args...])", stdio.Out)
	if err != nil {
		return nil, err
	}
	if *findingsPath != "" && !*check {
		return nil, usagef("--findings receives the findings of --check: give both, or neither")
	}
	target, err := pf.targetOptions(fs, cl)
	if err != nil {
		return nil, err
	}
	return &TapOptions{IO: stdio, Target: target, Recording: pf.recording(), Catalogue: pf.cat,
		Check: *check, Findings: *findingsPath}, nil
}

// tapRun sits between an editor and an agent: bytes pass through unchanged; the session is
// recorded and, with Check, judged as it happens (findings on stderr or --findings, never on
// stdout). It ends as the agent did (agentExit).
func tapRun(ctx context.Context, opts *TapOptions) error {
	rec, err := opts.Recording.start(opts.Target, "tap", opts.Catalogue)
	if err != nil {
		return err
	}
	var out io.Writer = opts.IO.Err
	var findingsFile *os.File
	if opts.Findings != "" {
		if findingsFile, err = transcript.CreatePrivate(opts.Findings); err != nil {
			_ = rec.Close()
			return writeError("the findings", err)
		}
		defer findingsFile.Close()
		out = findingsFile
	}
	var judge *liveJudge
	if opts.Check {
		judge = &liveJudge{log: rec.Log, cat: opts.Catalogue, out: out, json: findingsFile != nil, seen: map[string]bool{}}
		stop := judge.start()
		defer stop()
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	exit, err := tap.Run(context.WithoutCancel(ctx), tap.Options{
		Agent: opts.Target.Launcher, Stdin: opts.IO.In, Stdout: opts.IO.Out, Stderr: opts.IO.Err, Log: rec.Log,
		MaxLineSize: opts.Target.MaxLineSize, Grace: opts.Target.Grace, Signals: signals,
	})
	if judge != nil {
		judge.evaluate()
	}
	if cerr := rec.Close(); cerr != nil {
		fmt.Fprintln(opts.IO.Err, "acpprobe tap: transcript:", render.Message(cerr.Error()))
	}
	if err != nil {
		return err
	}
	return agentEnd(exit) // the editor sees the agent's own end
}

// liveJudge evaluates the session while it runs and prints each finding once.
type liveJudge struct {
	log  *jsonrpc.Log
	cat  *extensions.Catalogue
	out  io.Writer
	json bool
	mu   sync.Mutex
	seen map[string]bool
	last int
}

func (j *liveJudge) start() (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				j.evaluate()
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (j *liveJudge) evaluate() {
	j.mu.Lock()
	defer j.mu.Unlock()
	frames := j.log.Frames()
	if len(frames) == j.last {
		return
	}
	j.last = len(frames)
	r, err := acpprobe.Analyze(context.Background(), frames, acpprobe.AnalyzeOptions{Catalogue: j.cat})
	if err != nil {
		return
	}
	for _, f := range r.Findings {
		key := fmt.Sprintf("%s|%d|%s|%s", f.ID, f.Seq, f.Pointer, f.Message)
		if j.seen[key] {
			continue
		}
		j.seen[key] = true
		if j.json {
			_ = render.JSONLine(j.out, f)
		} else {
			_ = render.TapFinding(j.out, f)
		}
	}
}
