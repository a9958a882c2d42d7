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
// # A child process
//
// A Command runs in a session of its own (setsid): it has no controlling terminal, so it can
// neither open /dev/tty, nor make itself the terminal's foreground group, nor receive the
// user's Ctrl-C. Its process group is its session (pgid = sid = pid). Stdin and stdout are
// pipes; stderr is drained continuously, keeping only the last bytes. The ladder's signals
// go to the group, so that no process is left behind.
//
// setsid puts the agent in a new scheduling autogroup where the kernel has them
// (sched_autogroup_enabled): that costs about 0.1 ms at the median, and more in the tail on
// a loaded machine, on Launch. A same-user process can still open the user's terminal device
// by its path (/dev/pts/N): setsid removes the controlling terminal, not the user's rights;
// and a root agent can steal the terminal outright (TIOCSCTTY).
package transport
