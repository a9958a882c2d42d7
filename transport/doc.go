// Package transport starts an ACP agent and owns its lifecycle: a child process (Command) or
// an in-memory agent for tests (Pipe).
//
// # The teardown ladder
//
// Both kinds of agent are stopped by one ladder (Ladder): close stdin → StdinWait → SIGTERM →
// Grace → SIGKILL. For a process the signals go to its process group; for an in-memory agent
// "SIGTERM" cancels its context and "SIGKILL" breaks its pipes. StdinWait 0 signals at once,
// as real clients do. Exit.By names the last step taken before the agent ended: before each
// signal the ladder checks, without reaping, whether the agent has already exited, so an
// agent that left on stdin EOF is not blamed on a signal sent a microsecond later. The
// protocol-level first step (session/close when advertised) belongs to the caller, which
// knows the session; see probe.
//
// # Containment of a child process
//
// A Command runs in a session of its own (setsid): it has no controlling terminal, so it can
// neither open /dev/tty, nor make itself the terminal's foreground group, nor receive the
// user's Ctrl-C. Its process group is its session (pgid = sid = pid). Stdin and stdout are
// pipes; stderr is drained continuously, keeping only the last bytes.
//
// Each launch tags the agent's environment with a random Marker (ACPPROBE_RUN), which every
// descendant inherits unless it scrubs its environment. After the ladder, Shutdown sweeps
// for the agent's other processes, kills them and lists them in Exit.Survivors. Sweep lists
// the same processes at any moment without signalling them; Kill is the killing variant. A
// sweep selects, in this order of strength:
//   - on Linux with cgroup v2 where this user may make cgroups (root, or a delegated subtree:
//     systemd's user@.service, a container's own), every process in the launch's cgroup. The
//     agent is started inside a cgroup of its own (clone3 CLONE_INTO_CGROUP), so every
//     process it starts is born there whatever it changes of itself (its environment, its
//     command line, its session, its namespaces); the teardown kills the cgroup at once
//     (cgroup.kill, which no fork outruns). A process leaves it only by writing cgroup.procs
//     of a cgroup it may write to: as root, or inside the user's delegated subtree. See
//     cgroupRun; the cgroup costs a launch about 0.07 ms (mkdir and open 0.06 ms, off the
//     first launch's path; clone3 into it 0.007 ms), a sweep 0.025 ms, its removal 0.025 ms
//     after the teardown, off its path (BenchmarkCgroupLife, BenchmarkCgroupProcs);
//   - the processes in the agent's group or session, and the agent's descendants by their
//     parent links: from the agent, and from the processes orphaned to the host (it is a
//     child subreaper, so the orphans of the agent's tree come to it: a child of the host
//     that transport did not start, outside the host's session, started after the agent);
//   - the processes whose environment carries the marker (one that moved itself out of the
//     cgroup as root and still carries it).
//
// Without cgroups the guarantee is weaker and Exit.Containment says so: a process that
// scrubs its environment, leaves the session and is orphaned is still found while the host
// lives (it is the host's orphan), but not by the watchdog once the host is gone.
//
// A sweep reads the stat of only the pids allocated since the agent started (see
// scanner.window), and the environment of only the processes started since: 0.07–0.4 ms
// here, depending on what the machine started meanwhile, against 1.1 ms for reading every
// process's stat and environment with 90 processes (BenchmarkSweep).
//
// On Linux the host becomes a child subreaper (PR_SET_CHILD_SUBREAPER) at its first launch,
// so that what the agent orphans is re-parented to the host rather than to init. The sweep
// reaps exactly the processes it killed, through pidfds, never with wait(-1): an
// exec.Cmd.Wait elsewhere in the process (matrix runs agents side by side) never loses its
// child's status, and a reused pid is never signalled. A descendant that ends by itself after
// being orphaned stays a zombie of the host until the host exits: reaping it would take the
// status and resource usage of a process transport did not end (bench/agentshim relies on
// the agent's zombie reaching the benchmark driver).
//
// At its first launch the host also makes itself not dumpable (PR_SET_DUMPABLE 0): an agent
// running as the same user can then neither read the host's environment (the credentials a
// sandbox kept from it) or memory through /proc/PID/environ and /proc/PID/mem, nor trace
// it; root still can (CAP_SYS_PTRACE), and the user's other processes are not protected.
// Nothing in acpprobe needs its own dumpability: its /proc/self reads are of files any
// process may read of itself, and the net level's helper maps its own ids (sandbox).
//
// # The watchdog
//
// Pdeathsig kills the agent if the host dies, but not the agent's descendants. The first
// Command.Launch therefore arms a watchdog before it starts the agent (a program that knows
// early that it will launch agents starts it on a goroutine of its own first, so that it is
// armed by then: acpprobe's CLI does): the host's own executable (/proc/self/exe), run again with
// argv exactly ["acpprobe-watchdog"] and ACPPROBE_WATCHDOG in its environment, which this
// package's init function recognises (the packages initialised after it never run). The
// watchdog sits in its own session with /dev/null for output, is not dumpable, holds the
// read end of a pipe whose write end only the host holds, and reads what the host tells it
// there: the run's cgroup, each launch with the run's deadline and its cgroup, and the
// directories the host made (RemoveIfKilled). When the host ends, by any means including
// SIGKILL, the kernel closes the write end; the watchdog then kills the run's cgroup
// (cgroup.kill) and every process carrying the host's run (the first half of every marker),
// sweeping until a pass finds none (not when the host said its run was over, RunOver: every
// launch torn down, its sweeps done, none left alive, no line to the watchdog lost; acpprobe's
// CLI says it as each command ends), removes the cgroups, removes the host's directories that
// are still the ones it made (never through a link nor across a mount: internal/safefs), and
// exits. A host stopped past a launch's deadline (its agent sent it SIGSTOP: they run as the
// same user) cannot end the run: the watchdog, which looks at a host past a deadline every
// 100 ms, kills that launch (its cgroup, its marker) and continues the host (SIGCONT), which
// goes on to its teardown and its report. A watchdog killed before the host (by the agent)
// is started again at once and told what the first knew. For acpprobe that is one exec per
// host process, armed in about 0.5 ms, about 2 ms of CPU to start, 4.4 MiB of RSS while it
// waits and about 1 ms of CPU for its final sweep (none after RunOver); nothing per launch (BenchmarkWatchdogLife
// measures a whole life of the test binary's: 3.6 ms of CPU). Library users get it through
// the init function linked with this package; StartWatchdog starts it at once and reports
// whether it is up.
//
// Armed before the agent starts, not after: an agent runs as the host's user and can kill
// the host itself; a watchdog started after the agent left it the moments until the watchdog
// was armed to start a daemon and kill the host. Started early on its own goroutine, its exec
// and start-up overlap the host's preparations instead of competing with the agent's start
// (probe --no-methods on the reference agent: 0.7 ms of median wall time less than when it
// started after the launch, 150 interleaved rounds). Alternatives weighed: a shim parent per agent (an exec per launch, on the
// critical path, and the agent's exit status at one remove); a shell helper (`read; for p in
// /proc/*; …`) (a dependency on sh and grep -z, a fork per process at sweep time, and no
// pidfds against pid reuse); Pdeathsig alone (reaches only the direct child). A PID namespace
// per agent (see Costs and limits) would make the watchdog unreachable.
//
// # Costs and limits
//
// setsid gives the agent a scheduling autogroup of its own where the kernel has them
// (sched_autogroup_enabled), so its exchanges with the host cross scheduling groups. On a
// loaded 2-core machine (load 6–12) bench/driver measured probe --no-methods against the
// reference agent at about +10 ms of median wall time over the build without the session,
// marker, sweep and watchdog, roughly half of it from setsid alone, with the client's CPU
// and RSS unchanged within noise; the watchdog's CPU is its own, not the client's.
//
// What is not contained. The watchdog runs as the agent's user, outside any namespace of the
// agent's: an agent can still signal it, and one that kills the watchdog and the host in the
// same instant (kill -9 -1 does both) leaves what it started in its cgroup, unkilled; one
// that stops both (SIGSTOP) stops the run. Only a PID namespace for the agent, with an init
// of acpprobe's as its pid 1 (which its namespace cannot signal, and whose end kills
// everything in it), would close that; it costs an exec of this binary per launch on the
// launch's path (exec, Go start-up and exit of the acpprobe binary: 3–7 ms here, on a loaded
// 2-core machine, against 1.1 ms for /bin/true; 0.6–0.8 ms more for new user and pid
// namespaces), and without a /proc of its own mounted in a mount namespace the agent's pids
// would not match what /proc shows it. It is not done. A process started
// on the agent's behalf by another service (systemd-run --user, at, a D-Bus activated
// service, a terminal multiplexer's server) is no descendant of it and is in none of its
// cgroups: nothing here sees it. A process running as another user (a setuid program)
// escapes the marker sweep. A root agent can leave its cgroup, read and write the host's
// memory through /proc, and undo anything here. A same-user process can still open the
// user's terminal device by its path (/dev/pts/N): setsid removes the controlling terminal,
// not the user's rights; and a root agent can steal the terminal outright (TIOCSCTTY). The
// pid window of a sweep relies on the kernel's fork count: forks that fail after taking a pid
// (a pids cgroup at its limit) move the pid allocator without counting, so a fork bomb could
// wrap the pids unseen and hide a survivor from the post-ladder sweep; the cgroup's listing,
// and the watchdog's sweep when the host exits (which reads every pid), still find it. Off
// Linux, there is no sweep, no subreaper and no watchdog: only the group is signalled.
package transport
