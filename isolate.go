package acpprobe

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
)

// Sandboxed moves an agent command into box: its environment becomes box's (a command whose
// environment already has box's HOME keeps it, with what its caller added), its directory
// box's workspace unless it has one, and box prepares it (the net level re-executes it in
// new namespaces). The command's own Env is merged over the environment at launch as always:
// give variables to a sandboxed agent through sandbox.Options.Env instead, which refuses the
// ones the sandbox sets itself.
func Sandboxed(box *sandbox.Sandbox, cmd transport.Command) transport.Command {
	if sandbox.LookupEnv(cmd.Environ, "HOME") != box.Home() {
		cmd.Environ = box.Env()
	}
	if cmd.Dir == "" {
		cmd.Dir = box.Workspace()
	}
	cmd.Prepare = box.Prepare
	return cmd
}

// observer watches one run of an agent for side effects: it puts the browser shims on the
// agent's PATH, takes the inventory of the files (a sandbox's before and after; the real
// HOME's watched over the run, off its critical path), removes what it made, and writes the
// side-effects event. A sandboxed run watches the whole sandbox and, as an unsandboxed one
// does, the places agents keep their state under the real HOME (an agent that writes there by
// absolute path is seen at every level).
type observer struct {
	box    *sandbox.Sandbox
	ownBox bool // made by Run: removed by it
	shims  *sandbox.Shims
	// ownShims: unsandboxed, the shims are in a temporary directory of their own, removed
	// after.
	ownShims bool
	home     string   // the real HOME
	paths    []string // the places watched under it
	// watch is the watch of paths and of HOME's new top entries (nil without a HOME),
	// started before the agent.
	watch *sandbox.HomeWatch
	// ours are the labels of what acpprobe wrote after the baseline (Baseline.Ours).
	ours      []string
	max       int
	boxBefore *sandbox.Snapshot // the sandbox's inventory before the run (nil: no sandbox)
	iso       record.Isolation
	left      []record.Leftover // what the sandbox's removal could not remove
	// forgetBox and forgetShims tell the watchdog that a directory it would remove if this
	// process were killed is gone (transport.RemoveIfKilled).
	forgetBox, forgetShims func()
	boxClosed, shimsClosed sync.Once
}

// observe prepares the run of po's agent as o says (a sandbox given, one to make, or none),
// starts the watch of the real HOME and takes the sandbox's first inventory. A launcher that is not a process (an in-memory agent) is
// neither isolated nor observed: observe returns nil, and the isolation asked for is not
// claimed.
func observe(o Options, po *probe.Options) (*observer, error) {
	cmd, ok := po.Launcher.(transport.Command)
	if !ok {
		return nil, nil
	}
	ob := &observer{iso: record.Isolation{Level: record.LevelNone}}
	switch {
	case o.Sandbox != nil:
		ob.box = o.Sandbox
	case o.Isolate != nil:
		so := *o.Isolate
		so.Env = append(append([]string(nil), so.Env...), cmd.Env...) // given on purpose
		cmd.Env = nil
		box, err := sandbox.New(so)
		if err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		ob.box, ob.ownBox = box, true
		ob.max = so.MaxEntries
		if !box.Kept() {
			ob.forgetBox = transport.RemoveIfKilled(box.Dir())
		}
	}
	if ob.box != nil {
		cmd = Sandboxed(ob.box, cmd)
		rep := ob.box.EnvReport()
		ob.iso = record.Isolation{Level: ob.box.Level(), Env: &rep, Credentials: credentialNames(transport.MergeEnv(cmd.Environ, cmd.Env))}
		ob.iso.Note = levelNote(ob.box.Level())
		if po.Cwd == "" {
			po.Cwd = ob.box.Workspace()
		}
		ob.shims = ob.box.Shims()
		ob.home, ob.paths = ob.box.RealHome()
	} else {
		shims, err := sandbox.NewTempShims()
		if err != nil {
			return nil, err
		}
		ob.shims, ob.ownShims = shims, true
		ob.forgetShims = transport.RemoveIfKilled(shims.Dir())
		base := cmd.Environ
		if base == nil {
			base = os.Environ()
		}
		cmd.Environ = ob.shims.Env(base)
		env := transport.MergeEnv(cmd.Environ, cmd.Env)
		ob.home = sandbox.LookupEnv(env, "HOME")
		if ob.home != "" {
			ob.paths = sandbox.HomePaths(ob.home, env)
		}
		ob.iso.Credentials = credentialNames(env)
		ob.iso.Note = levelNote(record.LevelNone)
	}
	po.Launcher = cmd
	if b := o.Baseline; b != nil && o.Sandbox != nil {
		ob.boxBefore, ob.watch, ob.ours = b.box, b.home, b.ours
		return ob, nil
	}
	ob.watch = watchHome(ob.home, ob.paths, ob.max)
	if ob.box != nil {
		ob.boxBefore = ob.box.Snapshot()
	}
	return ob, nil
}

// Baseline is the inventory of a sandbox before a run and the watch of the real HOME's
// places started then (Options.Baseline).
type Baseline struct {
	box  *sandbox.Snapshot
	home *sandbox.HomeWatch // nil without a HOME
	ours []string           // labels of what acpprobe wrote after it (Ours)
}

// Ours says which paths acpprobe itself wrote into the sandbox's HOME after the baseline (a
// backend profile's setup): they are no side effect of the agent, and the report leaves them
// out.
func (b *Baseline) Ours(box *sandbox.Sandbox, paths ...string) {
	for _, p := range paths {
		if l, ok := box.HomeLabel(p); ok {
			b.ours = append(b.ours, l)
		}
	}
}

// TakeBaseline takes the inventory Run would take of box before the agent starts, and starts
// the watch of the real HOME, for a caller that runs the agent in box before Run does. Run
// (given it as Options.Baseline, with Sandbox) ends the watch; Close ends it when Run is not
// reached.
func TakeBaseline(box *sandbox.Sandbox) *Baseline {
	home, paths := box.RealHome()
	return &Baseline{home: watchHome(home, paths, 0), box: box.Snapshot()}
}

// Close ends the watch of the real HOME, if Run did not: call it once the agent is gone.
func (b *Baseline) Close() {
	if b.home != nil {
		b.home.Close()
	}
}

// watchHome starts the watch of the places paths under the real HOME home (nil when there is
// none), at most max entries.
func watchHome(home string, paths []string, max int) *sandbox.HomeWatch {
	if home == "" {
		return nil
	}
	return sandbox.WatchHome(home, paths, max)
}

// levelNote says what a level does not cover.
func levelNote(l record.Level) string {
	switch l {
	case record.LevelNone:
		return "not isolated: the agent ran with your HOME and environment; the places agents keep their state there were compared before and after (metadata only), any new entry of HOME, ~/.config, ~/.cache, ~/.local/share and ~/.local/state was walked, and browser launches were intercepted"
	case record.LevelEnvHome:
		return "a throwaway HOME, TMPDIR and workspace and a reduced environment (the places agents keep their state in your real HOME were compared too); not a security boundary: the agent could still reach any path it names, the network, and your other processes (their environment and memory, where they allow a process of yours to read them)"
	}
	return "a throwaway HOME, TMPDIR and workspace, a reduced environment, and no network but the agent's own loopback (the places agents keep their state in your real HOME were compared too); not a security boundary for files outside the sandbox, nor for your other processes"
}

// finish takes the second inventory of the sandbox, finishes the watch of the real HOME,
// takes the launches, removes the sandbox Run made, and
// records them in log as the run's side-effects event, with what of the sandbox could not be
// removed. Call it once the agent and everything it started are gone.
func (ob *observer) finish(log *jsonrpc.Log) {
	info := record.SideEffectsInfo{Isolation: ob.iso, Browser: record.Browser{Shimmed: ob.shims != nil, Launches: []record.BrowserLaunch{}},
		Network: record.Network{Lookups: []string{}, Connects: []record.Connect{}}}
	if ob.box != nil && ob.box.Kept() {
		info.Isolation.Kept = ob.box.Dir()
	}
	if ob.boxBefore != nil {
		before, after := ob.boxBefore, ob.box.Snapshot()
		if len(ob.ours) > 0 {
			before, after = before.Without(ob.ours), after.Without(ob.ours)
		}
		files := sandbox.Diff(before, after)
		info.Files = &files
	}
	if ob.watch != nil {
		// Also what appeared under HOME beside the places agents are known to keep their
		// state (an agent no table knows), walked: everything in it is new.
		files := ob.watch.Finish()
		if info.Files != nil {
			files = sandbox.Merge(*info.Files, files)
		}
		info.Files = &files
	}
	if ob.shims != nil {
		launches, dropped, err := ob.shims.Launches()
		if err == nil {
			info.Browser.Dropped = dropped
			for _, l := range launches {
				info.Browser.Launches = append(info.Browser.Launches, redactLaunch(l, log.Start()))
			}
		}
	}
	if ob.box != nil {
		info.Network = ob.box.Network()
	} else {
		info.Network.Note = "not observed: the agent had the network (only --isolate=net cuts it)"
	}
	ob.removeBox()
	info.Isolation.Left = ob.left
	record.SideEffects.Emit(log, info)
}

// serveNetwork answers and records the agent's lookups and connections when its sandbox has
// the network sink (sandbox.Options.NetSink), until the returned function is called (once the
// agent is gone).
func (ob *observer) serveNetwork(ctx context.Context) (stop func()) {
	if ob == nil || ob.box == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ob.box.ServeNetwork(ctx) // no sink, or no agent: nothing to record
	}()
	return func() { cancel(); <-done }
}

// removeBox removes the sandbox Run made (unless it is kept), once, keeping what it could not
// remove: before the side-effects event, which says so (a sandbox is where an agent plants
// mounts, immutable files and links, and its removal can take long: the analysis is short
// beside it).
func (ob *observer) removeBox() {
	ob.boxClosed.Do(func() {
		if ob.ownBox {
			ob.left = sandbox.Leftovers(ob.box.Close())
			if ob.forgetBox != nil {
				ob.forgetBox()
			}
		}
	})
}

// close removes what the observer made: the sandbox, unless finish did, and the shims'
// temporary directory. Run starts it on its own goroutine once finish is done, so that the
// shims' removal overlaps the analysis: it holds only what acpprobe wrote and the agent's
// launch records, its removal never follows a link nor crosses a mount, and what it could not
// remove is not reported. A later call returns when the first has ended.
func (ob *observer) close() {
	ob.removeBox()
	ob.shimsClosed.Do(func() {
		if ob.ownShims {
			_ = ob.shims.Remove()
			ob.forgetShims()
		}
	})
}

// closeWatch closes the watch of the real HOME (none: nothing to do). Run calls it last: the
// watches finish removed are freed by the kernel meanwhile, and closing the inotify instance
// then does not wait for them.
func (ob *observer) closeWatch() {
	if ob.watch != nil {
		ob.watch.Close()
	}
}

// redactLaunch is a shim's record of a launch as the report keeps it: when, what, and the
// first URL with what could hold a secret replaced by "…".
func redactLaunch(l sandbox.Launch, start time.Time) record.BrowserLaunch {
	out := record.BrowserLaunch{Program: l.Program, Args: len(l.Args), Truncated: l.Truncated,
		AtMs: float64(l.Time.Sub(start).Microseconds()) / 1000}
	for _, a := range l.Args {
		if u := redactURL(a); u != "" {
			out.URL = u
			break
		}
	}
	return out
}

// redactURL keeps a URL's scheme, host and path, replacing its user information, query and
// fragment, and every path segment that looks like a token (16 bytes or more with a digit),
// by "…". "" when s is not an absolute URL with a host.
func redactURL(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	out := u.Scheme + "://"
	if u.User != nil {
		out += "…@"
	}
	out += u.Host
	segs := strings.Split(u.EscapedPath(), "/")
	for i, seg := range segs {
		if len(seg) >= 16 && strings.ContainsAny(seg, "0123456789") {
			segs[i] = "…"
		}
	}
	out += strings.Join(segs, "/")
	if u.RawQuery != "" || u.ForceQuery {
		out += "?…"
	}
	if u.Fragment != "" {
		out += "#…"
	}
	if len(out) > 512 {
		out = out[:512] + "…"
	}
	return out
}

// credentialNames lists, sorted, the names in env that look like credentials and have a
// value.
func credentialNames(env []string) []string {
	names := []string{}
	seen := map[string]bool{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if v != "" && !seen[k] && sandbox.LooksLikeCredential(k) {
			seen[k] = true
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return names
}

// withoutCredentials drops from KEY=VALUE pairs, or from names, those that look like
// credentials: what an empty identity keeps of what the user gave on purpose.
func withoutCredentials(items []string) []string {
	var out []string
	for _, it := range items {
		k, _, _ := strings.Cut(it, "=")
		if !sandbox.LooksLikeCredential(k) {
			out = append(out, it)
		}
	}
	return out
}

// freshDir is a new empty directory under the system's temporary directory, for a run that
// needs a working directory of its own.
func freshDir(prefix string) (string, func(), error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", func() {}, err
	}
	dir, _ = filepath.EvalSymlinks(dir)
	return dir, func() { os.RemoveAll(dir) }, nil
}
