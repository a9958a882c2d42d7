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
// A Command runs in its own process group with stdin and stdout on pipes, drains stderr
// continuously keeping only the last bytes, and is torn down by the ladder with its signals
// sent to the group, so that no process is left behind.
package transport
