package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/acpprobe/acpprobe"
	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/tap"
	"github.com/acpprobe/acpprobe/transport"
)

// runTap sits between an editor and an agent: bytes pass through unchanged; the session is
// recorded and, with --check, judged as it happens (findings on stderr or --findings, never
// on stdout). It exits with the agent's status.
func runTap(ctx context.Context, args []string, stdio Stdio) int {
	fs := newFlagSet("tap")
	var pf probeFlags
	pf.register(fs, true)
	check := fs.Bool("check", false, "judge the session as it happens; findings go to stderr (or --findings), never to stdout")
	findingsPath := fs.String("findings", "", "write findings as NDJSON to this file instead of stderr")
	if err := parseFlags(fs, args, "acpprobe tap [--transcript FILE] [--check] [--findings FILE] -- <agent command> [args...]", stdio.Out); err != nil {
		return failUsage(stdio, "tap", err)
	}
	opts, err := pf.targetOptions(fs, args)
	if err != nil {
		return targetFailed(stdio, "tap", err, pf.json)
	}
	rec, err := pf.record(opts, "tap")
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe tap:", err)
		return ExitUsage
	}
	var out io.Writer = stdio.Err
	var findingsFile *os.File
	if *findingsPath != "" {
		if findingsFile, err = os.Create(*findingsPath); err != nil {
			fmt.Fprintln(stdio.Err, "acpprobe tap:", err)
			return ExitUsage
		}
		defer findingsFile.Close()
		out = findingsFile
	}
	var judge *liveJudge
	if *check {
		judge = &liveJudge{log: rec.Log, cat: pf.cat, out: out, json: findingsFile != nil, seen: map[string]bool{}}
		stop := judge.start()
		defer stop()
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(signals)
	exit, err := tap.Run(context.WithoutCancel(ctx), tap.Options{
		Agent: opts.Launcher, Stdin: stdio.In, Stdout: stdio.Out, Stderr: stdio.Err, Log: rec.Log,
		MaxLineSize: opts.MaxLineSize, Grace: opts.Grace, Signals: signals,
	})
	if judge != nil {
		judge.evaluate()
	}
	if cerr := rec.Close(); cerr != nil {
		fmt.Fprintln(stdio.Err, "acpprobe tap: transcript:", cerr)
	}
	if err != nil {
		fmt.Fprintln(stdio.Err, "acpprobe tap:", err)
		return ExitNotProbed
	}
	if sig, ok := signalByName[exit.Signal]; ok && exit.Code == nil {
		signal.Stop(signals)
		dieBySignal(sig) // the editor sees the agent's own end
	}
	return agentStatus(exit)
}

// agentStatus is the exit status a shell would report for the agent.
func agentStatus(x transport.Exit) int {
	switch {
	case x.Code != nil:
		return *x.Code
	case x.Signal == "SIGKILL":
		return 128 + 9
	case x.Signal == "SIGTERM":
		return 128 + 15
	case x.Signal == "SIGINT":
		return 128 + 2
	case x.Signal == "SIGHUP":
		return 128 + 1
	}
	return 1
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
	r, err := acpprobe.Analyze(frames, acpprobe.AnalyzeOptions{Catalogue: j.cat})
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
			b, _ := json.Marshal(f)
			fmt.Fprintln(j.out, string(b))
			continue
		}
		where := ""
		if f.Seq != 0 {
			where = strings.TrimSpace(fmt.Sprintf(" [line %d %s", f.Seq, f.Pointer)) + "]"
			where = " " + where
		}
		fmt.Fprintf(j.out, "acpprobe tap: %s %s%s: %s\n", f.Tier, f.ID, where, f.Message)
	}
}
