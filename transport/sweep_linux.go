package transport

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"golang.org/x/sys/unix"
)

// Bounds of one sweep of /proc.
const (
	maxScan    = 1 << 16 // /proc entries looked at per pass
	maxEnviron = 1 << 20 // bytes of one process's environment read
	maxCmdline = 4 << 10 // bytes of one process's command line read
	maxArgs    = 8
	maxArgLen  = 256
	killPasses = 16 // sweeps after SIGKILL looking for processes forked meanwhile
)

// Sweep lists the live processes in scope (zombies are not listed), without signalling
// them. It may be called at any moment, concurrently with anything. It reads /proc: a
// process that ends meanwhile, or whose environment cannot be read (another user), is left
// out. The calling process is never listed.
func Sweep(s Scope) ([]record.Proc, error) {
	var sc scanner
	found, err := sc.scan(s.matcher())
	procs := make([]record.Proc, len(found))
	for i, f := range found {
		procs[i] = f.Proc
		procs[i].Argv = readArgv(f.PID)
	}
	return procs, err
}

// Kill sends SIGKILL to every live process in scope, sweeps again until a pass finds no new
// one (a process may fork while it is being killed), waits up to bound for each to be gone,
// and reaps those that had become children of this process. It returns what it killed,
// found at the moment at.
func Kill(s Scope, at record.Moment, bound time.Duration) ([]record.Survivor, error) {
	k := killer{match: s.matcher(), leader: s.Leader, at: at}
	defer k.close()
	if n, err := k.find(); n == 0 {
		return nil, err
	}
	err := k.killAll()
	k.waitGone(context.Background(), time.Now().Add(bound), nil)
	k.reap()
	return k.survivors(), err
}

// matcher selects processes for one scope.
type matcher struct {
	marker []byte // a marker, or a run followed by "." (prefix)
	prefix bool   // marker only has to start one of MarkerVar's items (the watchdog's run)
	leader int
	since  uint64
	forks  uint64
	cgroup string // the launch's cgroup: every process in it (and below) is selected
}

func (s Scope) matcher() matcher {
	m := matcher{leader: s.Leader, since: s.since, forks: s.forks, cgroup: s.cgroup}
	if s.Marker != "" {
		m.marker = []byte(s.Marker)
	}
	return m
}

// runMatcher selects every process of one host's run by its marker (the watchdog's sweep,
// beside its kill of the run's cgroup).
func runMatcher(run string, since uint64) matcher {
	return matcher{marker: []byte(run + "."), prefix: true, since: since}
}

// carries reports whether one environment entry holds m's marker.
func (m matcher) carries(entry []byte) bool {
	list, ok := bytes.CutPrefix(entry, []byte(MarkerVar+"="))
	for ok && len(list) > 0 {
		var item []byte
		item, list, _ = bytes.Cut(list, []byte{','})
		if m.prefix && bytes.HasPrefix(item, m.marker) || bytes.Equal(item, m.marker) {
			return true
		}
	}
	return false
}

// procStat is what /proc/PID/stat says of a process.
type procStat struct {
	record.Proc
	state byte
	start uint64 // clock ticks after boot
}

func (p procStat) zombie() bool { return p.state == 'Z' || p.state == 'X' }

// scanner reads /proc, reusing one buffer.
type scanner struct{ buf []byte }

// scan lists the live processes that m selects: those in its cgroup, those in the agent's
// process group or session, the agent's descendants (by their parent links, from the agent
// and from the processes orphaned to this host, a subreaper), and those whose environment
// carries the marker. The first three rest on what a process cannot change of itself; the
// marker finds what left them all (a process that moved out of the cgroup, as root).
func (sc *scanner) scan(m matcher) ([]procStat, error) {
	if m.marker == nil && m.leader == 0 && m.cgroup == "" {
		return nil, nil
	}
	var all []procStat
	err := sc.each(m.leader, m.forks, func(st procStat) bool {
		if st.start >= m.since && st.PID != m.leader {
			all = append(all, st)
		}
		return true
	})
	picked := make([]bool, len(all))
	index := make(map[int]int, len(all))
	for i, st := range all {
		index[st.PID] = i
	}
	var found []procStat
	pick := func(i int) {
		if !picked[i] {
			picked[i] = true
			found = append(found, all[i])
		}
	}
	if m.cgroup != "" {
		for _, pid := range cgroupProcs(m.cgroup, &sc.buf) {
			if i, ok := index[pid]; ok {
				pick(i)
			} else if st, ok := sc.stat(pid); ok && !st.zombie() && pid != m.leader && pid != os.Getpid() {
				all, picked = append(all, st), append(picked, false) // outside the pid window
				index[pid] = len(all) - 1
				pick(len(all) - 1)
			}
		}
	}
	if m.leader != 0 {
		for i, st := range all {
			if st.PGID == m.leader || st.SID == m.leader {
				pick(i)
			}
		}
		sc.descendants(all, m, pick)
	}
	if m.marker != nil {
		for i, st := range all {
			if !picked[i] && sc.environHas(st.PID, m) {
				pick(i)
			}
		}
	}
	return found, err
}

// descendants picks the processes of all that descend from the agent (m.leader), and those
// orphaned to this host (a subreaper, so the orphans of the agent's descendants come to it)
// with what descends from them. An orphan is a child of this host that transport did not
// start (neither an agent nor the watchdog), not in this host's session, and started after
// the agent. With cgroups, an orphan in another launch's cgroup is that launch's; without
// them, an orphan of a host running several agents at once (a matrix) is counted in the
// scope of each agent that was running when it started.
func (sc *scanner) descendants(all []procStat, m matcher, pick func(int)) {
	self := os.Getpid()
	selfSID, _ := unix.Getsid(0)
	children := map[int][]int{}
	var roots []int
	for i, st := range all {
		children[st.PPID] = append(children[st.PPID], i)
		if st.PPID == self && st.SID != selfSID && !ownChild(st.PID) && sc.orphanOf(st.PID, m) {
			roots = append(roots, i)
		}
	}
	queue := append(roots, children[m.leader]...)
	seen := map[int]bool{}
	for len(queue) > 0 {
		i := queue[0]
		queue = queue[1:]
		if seen[i] {
			continue
		}
		seen[i] = true
		pick(i)
		queue = append(queue, children[all[i].PID]...)
	}
}

// orphanOf reports whether an orphan of this host may be the agent's of m: not when it is in
// the cgroup of another launch of this host's run.
func (sc *scanner) orphanOf(pid int, m matcher) bool {
	run := runCgroup()
	if run.dir == "" {
		return true
	}
	dir, ok := run.cgroupOf(pid, &sc.buf)
	if !ok || !within(run.dir, dir) || dir == run.dir {
		return true // in no launch's cgroup: it may be anyone's
	}
	return m.cgroup != "" && within(m.cgroup, dir)
}

// each calls f with every live process but this one, until f returns false. With a leader
// and the kernel's fork count from before the leader started (forks), it skips the pids that
// cannot have been allocated since (see window).
func (sc *scanner) each(leader int, forks uint64, f func(procStat) bool) error {
	dir, err := os.Open("/proc")
	if err != nil {
		return err
	}
	names, err := dir.Readdirnames(maxScan)
	dir.Close()
	if err != nil && len(names) == 0 {
		return err
	}
	inWindow := sc.window(leader, forks) // read after the listing: it covers every pid listed
	self := os.Getpid()
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self || inWindow != nil && !inWindow(pid) {
			continue
		}
		if st, ok := sc.stat(pid); ok && !st.zombie() && !f(st) {
			break
		}
	}
	return nil
}

// window returns which pids may have been allocated since leader was, or nil when that
// cannot be known. Pids are allocated in cyclic order up to pid_max; unless the kernel has
// forked pid_max times since leader started (the fork count rules that out), every pid
// allocated since lies after leader's, up to the last one allocated (ns_last_pid),
// wrapping around at most once. Reading the stat of only those pids makes a sweep cost
// what was started since the agent, not what runs on the machine.
func (sc *scanner) window(leader int, forks uint64) func(pid int) bool {
	if leader <= 0 || forks == 0 {
		return nil
	}
	now := sc.forks()
	pidMax, ok1 := sc.number("/proc/sys/kernel/pid_max")
	last, ok2 := sc.number("/proc/sys/kernel/ns_last_pid")
	if !ok1 || !ok2 {
		return nil
	}
	return pidWindow(leader, last, pidMax, forks, now)
}

// pidWindow is window's arithmetic: leader's pid, the last pid allocated, pid_max, and the
// fork count before leader started and now.
func pidWindow(leader, last, pidMax int, forksThen, forksNow uint64) func(pid int) bool {
	const reserved = 300 // where the allocator starts again when it wraps
	if forksNow < forksThen || forksThen == 0 || forksNow-forksThen >= uint64(pidMax-reserved) {
		return nil // it may have wrapped past leader: no window
	}
	if leader <= last {
		return func(pid int) bool { return pid > leader && pid <= last }
	}
	return func(pid int) bool { return pid > leader || pid <= last }
}

// forks is the number of processes and threads the kernel has created since boot, or 0.
func (sc *scanner) forks() uint64 {
	b, _ := sc.read("/proc/stat", maxEnviron)
	for len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if n, ok := bytes.CutPrefix(line, []byte("processes ")); ok {
			v, _ := strconv.ParseUint(string(n), 10, 64)
			return v
		}
	}
	return 0
}

// number reads a /proc file that holds one integer.
func (sc *scanner) number(path string) (int, bool) {
	b, ok := sc.read(path, 64)
	n, err := strconv.Atoi(string(bytes.TrimSpace(b)))
	return n, ok && err == nil
}

// stat reads /proc/PID/stat; false when the process is gone or the line is malformed.
func (sc *scanner) stat(pid int) (procStat, bool) {
	b, ok := sc.read("/proc/"+strconv.Itoa(pid)+"/stat", 1024)
	if !ok {
		return procStat{}, false
	}
	// The command name is in parentheses and may hold anything, parentheses included: the
	// fields after it start after the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 20 || len(f[0]) != 1 {
		return procStat{}, false
	}
	num := func(i int) int { n, _ := strconv.Atoi(string(f[i])); return n }
	start, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return procStat{}, false
	}
	return procStat{
		Proc:  record.Proc{PID: pid, PPID: num(1), PGID: num(2), SID: num(3), Comm: string(b[open+1 : end])},
		state: f[0][0],
		start: start,
	}, true
}

// emptyRetries is how many times environHas reads an empty environment again.
const emptyRetries = 3

// environHas reports whether the process's environment holds m's entry.
//
// A process in the middle of execve shows an empty environment for an instant (the new
// image's is not set up yet): a setsid escape that execs as the sweep reads it would be
// missed, 3 runs in 30 of TestEscapedProcessDoesNotBlockTeardown. An empty read is therefore
// tried again, a few times, before it counts; a process that really has no environment costs
// the sweep emptyRetries milliseconds.
func (sc *scanner) environHas(pid int, m matcher) bool {
	path := "/proc/" + strconv.Itoa(pid) + "/environ"
	b, ok := sc.read(path, maxEnviron)
	for try := 0; ok && len(b) == 0 && try < emptyRetries; try++ {
		time.Sleep(time.Millisecond)
		b, ok = sc.read(path, maxEnviron)
	}
	for len(b) > 0 {
		var e []byte
		e, b, _ = bytes.Cut(b, []byte{0})
		if m.carries(e) {
			return true
		}
	}
	return false
}

// read reads at most limit bytes of a /proc file into the scanner's buffer.
func (sc *scanner) read(path string, limit int) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	if cap(sc.buf) < 4096 {
		sc.buf = make([]byte, 0, 4096)
	}
	b := sc.buf[:0]
	for len(b) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := unix.Read(fd, b[len(b):min(cap(b), limit)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
	}
	sc.buf = b
	return b, true
}

// readArgv reads the start of a process's command line.
func readArgv(pid int) []string {
	var sc scanner
	b, _ := sc.read("/proc/"+strconv.Itoa(pid)+"/cmdline", maxCmdline)
	var argv []string
	for len(b) > 0 && len(argv) < maxArgs {
		var a []byte
		a, b, _ = bytes.Cut(b, []byte{0})
		if len(a) > maxArgLen {
			a = a[:maxArgLen]
		}
		argv = append(argv, string(a))
	}
	return argv
}

// target is a process being killed, held by a pidfd so that no other process that reuses
// its pid can be signalled, waited for or reaped by mistake.
type target struct {
	procStat
	argv []string
	fd   int
	gone bool
	// alone: it ended by itself while the sweep waited, before any signal of ours; it was
	// on its way out (a detached helper whose parent had just gone), not a survivor.
	alone bool
}

// killer kills the processes a matcher selects and keeps what it found.
type killer struct {
	match  matcher
	leader int // the agent's pid, to tell who left its group (0: unknown)
	// cgroup, when set, is killed whole with every pass (cgroup.kill): the agent itself has
	// ended, so everything in its cgroup is to go.
	cgroup  string
	at      record.Moment
	sc      scanner
	targets []*target
	known   map[[2]uint64]bool // pid and start time of each target
}

// find sweeps once and holds every new process found by a pidfd; it returns how many were
// new.
func (k *killer) find() (int, error) {
	found, err := k.sc.scan(k.match)
	if k.known == nil {
		k.known = map[[2]uint64]bool{}
	}
	n := 0
	for _, st := range found {
		id := [2]uint64{uint64(st.PID), st.start}
		if k.known[id] {
			continue
		}
		fd, err := unix.PidfdOpen(st.PID, 0)
		if err != nil {
			continue // gone already
		}
		// The pid may have been reused between the sweep and pidfd_open: the pidfd is the
		// process found only if the pid still names a process with the same start time.
		if again, ok := k.sc.stat(st.PID); !ok || again.start != st.start {
			unix.Close(fd)
			continue
		}
		k.known[id] = true
		k.targets = append(k.targets, &target{procStat: st, argv: readArgv(st.PID), fd: fd})
		n++
	}
	return n, err
}

// signal sends sig to every target selected by only (all when nil) not known to be gone.
func (k *killer) signal(sig unix.Signal, only func(*target) bool) {
	for _, t := range k.targets {
		if !t.gone && (only == nil || only(t)) && unix.PidfdSendSignal(t.fd, sig, nil, 0) == unix.ESRCH {
			t.gone = true
		}
	}
}

// killAll SIGKILLs every target, then sweeps again for processes forked meanwhile, until a
// sweep finds no new one. A process with SIGKILL pending forks no more, so a sweep after the
// signals sees every child they had.
func (k *killer) killAll() error {
	var first error
	for pass := 0; pass < killPasses; pass++ {
		if k.cgroup != "" {
			_ = killCgroup(k.cgroup)
		}
		k.signal(unix.SIGKILL, nil)
		n, err := k.find()
		if first == nil {
			first = err
		}
		if n == 0 {
			break
		}
	}
	return first
}

// waitGone waits until every target selected by only (all when nil) has ended, or the
// deadline, or the end of ctx.
func (k *killer) waitGone(ctx context.Context, deadline time.Time, only func(*target) bool) bool {
	for {
		var fds []unix.PollFd
		var waiting []*target
		for _, t := range k.targets {
			if !t.gone && (only == nil || only(t)) {
				fds = append(fds, unix.PollFd{Fd: int32(t.fd), Events: unix.POLLIN})
				waiting = append(waiting, t)
			}
		}
		if len(fds) == 0 {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return false
		}
		// A pidfd becomes readable when its process has ended.
		n, err := unix.Poll(fds, int(min(left, 50*time.Millisecond)/time.Millisecond)+1)
		if err != nil && err != unix.EINTR {
			return false
		}
		for i := 0; n > 0 && i < len(fds); i++ {
			if fds[i].Revents != 0 {
				waiting[i].gone = true
			}
		}
	}
}

// reap collects the targets that ended as children of this process (re-parented to it, a
// subreaper). waitid on the pidfd reaps that very process and nothing else.
func (k *killer) reap() {
	for _, t := range k.targets {
		if t.gone {
			var info unix.Siginfo
			for unix.Waitid(unix.P_PIDFD, t.fd, &info, unix.WEXITED|unix.WNOHANG, nil) == unix.EINTR {
			}
		}
	}
}

func (k *killer) survivors() []record.Survivor {
	var out []record.Survivor
	for _, t := range k.targets {
		if t.alone {
			continue
		}
		out = append(out, record.Survivor{
			PID: t.PID, Command: t.Comm, Argv: t.argv, Found: k.at, Killed: t.gone,
			LeftGroup: k.leader != 0 && t.PGID != k.leader,
		})
	}
	return out
}

func (k *killer) close() {
	for _, t := range k.targets {
		unix.Close(t.fd)
	}
}

// cleanUp ends what outlived the agent: what does not end by itself within SurvivorSettle is
// a survivor. A survivor gets no more of the grace, which is the agent's own (the ladder's
// steps): what is left of the group gets SIGTERM and one more settle window if the ladder
// never signalled the group (the agent left by itself or on stdin close), and nothing more if
// it did; then everything in its scope gets SIGKILL (ctx shortens each wait). The survivors
// are listed in Exit.Survivors. Signals go through pidfds, never to the group id, which may
// have been freed and reused once the agent was reaped.
//
// Why not the grace: claude-agent-acp 0.101.0 leaves on SIGTERM and its native Claude CLI,
// which got the same SIGTERM, stays; giving it the grace again cost every probe of it 2 s
// (teardown 2196 ms, 267 ms with --grace 100ms), for a process that is reported and killed
// all the same.
func (p *Process) cleanUp(ctx context.Context, grace time.Duration) {
	k := killer{match: p.scope.matcher(), leader: p.pid, at: record.AfterLadder, cgroup: p.scope.cgroup}
	defer k.close()
	if n, _ := k.find(); n == 0 {
		return // nothing alive: nothing can fork either
	}
	inGroup := func(t *target) bool { return t.PGID == p.pid }
	settle := min(grace, SurvivorSettle)
	// What is still alive a moment after the signal that told it to end gets that moment to
	// end by itself first (settleDeadline): such a child is usually on its way out
	// (claude-agent-acp 0.101.0's Claude CLI, when it ends on the SIGTERM, ends within 40 ms
	// of it; codex-acp's native binary a moment after its node launcher), and is no survivor.
	// What is still there after it is one.
	deadline, groupSignalled := p.settleDeadline(settle)
	k.waitGone(ctx, deadline, nil)
	for _, t := range k.targets {
		if t.gone {
			t.alone = true
		}
	}
	for _, t := range k.targets {
		if inGroup(t) && !t.gone {
			p.mu.Lock()
			p.exit.GroupKilled = true
			p.mu.Unlock()
			if !groupSignalled {
				k.signal(unix.SIGTERM, inGroup)
				k.waitGone(ctx, time.Now().Add(settle), inGroup)
			}
			break
		}
	}
	_ = k.killAll()
	if !k.waitGone(context.Background(), time.Now().Add(grace), nil) {
		leftAlive()
	}
	k.reap()
	if s := k.survivors(); len(s) > 0 {
		p.mu.Lock()
		p.exit.Survivors = s
		p.mu.Unlock()
	}
}
