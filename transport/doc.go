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
// /proc for the processes that carry the marker or sit in the agent's group or session,
// setsid escapes included, kills them and lists them in Exit.Survivors. Sweep lists the same
// processes at any moment without signalling them; Kill is the killing variant. A sweep
// reads the stat of only the pids allocated since the agent started (see scanner.window),
// and the environment of only the processes started since: 0.07–0.4 ms here, depending on
// what the machine started meanwhile, against 1.1 ms for reading every process's stat and
// environment with 90 processes (BenchmarkSweep).
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
// # The watchdog
//
// Pdeathsig kills the agent if the host dies, but not the agent's descendants. The first
// Command.Launch therefore arms a watchdog before it starts the agent (a program that knows
// early that it will launch agents starts it on a goroutine of its own first, so that it is
// armed by then: acpprobe's CLI does): the host's own executable (/proc/self/exe), run again with
// argv exactly ["acpprobe-watchdog"] and ACPPROBE_WATCHDOG in its environment, which this
// package's init function recognises (the packages initialised after it never run). The
// watchdog sits in its own session with /dev/null for output, holds the read end of a pipe
// whose write end only the host holds, and blocks reading it. When the host ends, by
// any means including SIGKILL, the kernel closes the write end; the watchdog then kills
// every process carrying the host's run (the first half of every marker), sweeping until a
// pass finds none, and exits. For acpprobe that is one exec per host process, armed in
// about 0.5 ms, about 2 ms of CPU to start, 4.4 MiB of RSS while it waits and about 1 ms of
// CPU for its final sweep; nothing per launch (BenchmarkWatchdogLife measures a whole life
// of the test binary's: 3.6 ms of CPU). Library users get it through the init function
// linked with this package; StartWatchdog starts it at once and reports whether it is up.
//
// Armed before the agent starts, not after: an agent runs as the host's user and can kill
// the host itself; a watchdog started after the agent left it the moments until the watchdog
// was armed to start a daemon and kill the host. Started early on its own goroutine, its exec
// and start-up overlap the host's preparations instead of competing with the agent's start
// (probe --no-methods on the reference agent: 0.7 ms of median wall time less than when it
// started after the launch, 150 interleaved rounds). Alternatives weighed: a shim parent per agent (an exec per launch, on the
// critical path, and the agent's exit status at one remove); a shell helper (`read; for p in
// /proc/*; …`) (a dependency on sh and grep -z, a fork per process at sweep time, and no
// pidfds against pid reuse); a PID namespace per agent (needs unprivileged user namespaces,
// and makes the agent pid 1, which ignores SIGTERM without a handler); cgroup.kill (needs a
// delegated cgroup); Pdeathsig alone (reaches only the direct child).
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
// A descendant that scrubs its environment and leaves the agent's session, or that runs as
// another user, escapes the sweep (the watchdog too). A same-user process can still open
// the user's terminal device by its path (/dev/pts/N): setsid removes the controlling
// terminal, not the user's rights; and a root agent can steal the terminal outright
// (TIOCSCTTY). The pid window of a sweep relies on the kernel's fork count: forks that fail
// after taking a pid (a pids cgroup at its limit) move the pid allocator without counting,
// so a fork bomb could wrap the pids unseen and hide a survivor from the post-ladder sweep;
// the watchdog's sweep when the host exits reads every pid and still kills it. The watchdog
// covers the host's death from before the first agent starts. Off Linux, there is no sweep, no subreaper and no
// watchdog: only the group is signalled.
package transport
