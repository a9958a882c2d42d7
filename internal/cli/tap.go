package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
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
	// Target is the agent: its Launcher, AgentID, Command, Cwd, MaxLineSize and Grace are used.
	Target probe.Options
	// Recording says where the record goes and what is kept out of it.
	Recording Recording
	// Catalogue classifies vendor extensions for Check (the built-in one when nil).
	Catalogue *extensions.Catalogue
	// Check judges the session as it happens; findings go to IO.Err, or to Findings.
	Check bool
	// Findings, when set, is the file that receives the findings as NDJSON.
	Findings string
	// resolved, when set, is said on stderr before the agent starts: its id resolved to a
	// program on PATH instead of the registry's command (launchNotes).
	resolved string
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
		Check: *check, Findings: *findingsPath, resolved: pf.launched.resolved}, nil
}

// tapRun sits between an editor and an agent: bytes pass through unchanged; the session is
// recorded (to --transcript, as it happens) and, with Check, judged as it happens (findings on
// stderr or --findings, never on stdout). What the tap holds in memory does not grow with the
// session: its log keeps no frame (the transcript and the live judge observe them). It ends
// as the agent did (agentExit).
func tapRun(ctx context.Context, opts *TapOptions) error {
	rec, err := opts.Recording.start(opts.Target, "tap", opts.Catalogue)
	if err != nil {
		return err
	}
	if opts.resolved != "" {
		fmt.Fprintf(opts.IO.Err, "acpprobe tap: note: %s\n", render.Message(opts.resolved))
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
	var log *jsonrpc.Log // nil: the tap records nothing
	if opts.Recording.Transcript != "" || opts.Check {
		log = rec.Log
		log.SetBudget(jsonrpc.Budget{Bytes: jsonrpc.KeepNone})
	}
	var judge *liveJudge
	if opts.Check {
		judge = startJudge(log, acpprobe.AnalyzeOptions{Catalogue: opts.Catalogue}, out, findingsFile != nil)
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, forwardedSignals...)
	defer signal.Stop(signals)
	exit, err := tap.Run(context.WithoutCancel(ctx), tap.Options{
		Agent: opts.Target.Launcher, AgentID: opts.Target.AgentID, Command: opts.Target.Command, Cwd: opts.Target.Cwd, Stdin: opts.IO.In, Stdout: opts.IO.Out, Stderr: opts.IO.Err, Log: log,
		MaxLineSize: opts.Target.MaxLineSize, Grace: opts.Target.Grace, Signals: signals,
	})
	if judge != nil {
		if jerr := judge.finish(); jerr != nil {
			fmt.Fprintln(opts.IO.Err, "acpprobe tap: --check:", render.Message(jerr.Error()))
		}
	}
	if cerr := rec.Close(); cerr != nil {
		fmt.Fprintln(opts.IO.Err, "acpprobe tap: transcript:", render.Message(cerr.Error()))
	}
	if err != nil {
		return err
	}
	return agentEnd(exit) // the editor sees the agent's own end
}

// liveJudge judges the session while it runs (acpprobe.Live: each frame once) and prints each
// finding once, as it is found; at the end, how many more of each check it did not print. The
// first error (judging, or writing a finding) stops it and is returned by finish: the agent's
// session goes on, the tap says what it could not do.
type liveJudge struct {
	live *acpprobe.Live
	out  io.Writer
	json bool
	stop chan struct{}
	done chan struct{}
	err  error // the first error; only the judging goroutine, then finish, touch it
}

// liveEvery is how often the judge judges what came since (sooner when much came).
const liveEvery = 250 * time.Millisecond

// startJudge judges what log records from now on, with o, printing to out (NDJSON when json).
func startJudge(log *jsonrpc.Log, o acpprobe.AnalyzeOptions, out io.Writer, json bool) *liveJudge {
	j := &liveJudge{live: acpprobe.NewLive(o), out: out, json: json, stop: make(chan struct{}), done: make(chan struct{})}
	log.Observe(j.live.Add)
	go func() {
		defer close(j.done)
		t := time.NewTicker(liveEvery)
		defer t.Stop()
		for {
			select {
			case <-j.stop:
				return
			case <-t.C:
			case <-j.live.Ready():
			}
			j.judge()
		}
	}()
	return j
}

// judge judges what came since the last time and prints what it found; after an error it does
// nothing more.
func (j *liveJudge) judge() {
	if j.err != nil {
		return
	}
	found, err := j.live.Judge(context.Background())
	if err != nil {
		j.err = fmt.Errorf("judging: %w", err)
		return
	}
	for _, f := range found {
		if j.json {
			err = render.JSONLine(j.out, f)
		} else {
			err = render.TapFinding(j.out, f)
		}
		if err != nil {
			j.err = fmt.Errorf("cannot write the findings: %w", err)
			return
		}
	}
}

// finish judges the end of the session, says what was not printed, stops the judge, and
// returns the first error it met.
func (j *liveJudge) finish() error {
	close(j.stop)
	<-j.done
	j.judge()
	j.live.Close()
	omitted := j.live.Omitted()
	if j.err != nil || len(omitted) == 0 {
		return j.err
	}
	var err error
	if j.json {
		err = render.JSONLine(j.out, map[string]any{"omitted": omitted})
	} else {
		err = render.TapOmitted(j.out, omitted)
	}
	if err != nil {
		return fmt.Errorf("cannot write the findings: %w", err)
	}
	return nil
}

// forwardedSignals are the signals the tap passes on to the agent's group, as an editor sends
// them to the agent it runs: the terminating ones, SIGQUIT (Go would otherwise end the tap
// with a goroutine dump) and the user signals (which Go would otherwise swallow).
var forwardedSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}
