package record

// The payloads of how an agent process ended and of the processes it left: the transport
// package produces them (its ladder and its sweeps), the engine records them, the derivation
// reads them back.

// ExitInfo records how an agent ended (the payload of the exit event).
type ExitInfo struct {
	Code   *int   `json:"code"`   // exit status when it exited by itself; nil when killed by a signal
	Signal string `json:"signal"` // the signal that ended it ("SIGTERM", "SIGKILL", …); "" otherwise
	// AfterStdinCloseMs is the time from closing stdin to exit when the agent left on its own
	// within the grace; nil when it had already exited before or needed a signal.
	AfterStdinCloseMs *float64 `json:"afterStdinCloseMs"`
	// By says what ended it: the last step of the teardown ladder taken before it ended.
	By ExitCause `json:"by"`
	// GroupKilled is true when processes of the agent's group outlived the agent and had to be
	// signalled.
	GroupKilled bool `json:"groupKilled,omitempty"`
	// Survivors are the processes of the agent (its marker, group or session) found alive after
	// the ladder, all of which were then killed.
	Survivors []Survivor `json:"survivors,omitempty"`
	// Containment is what held the agent's processes together for the sweeps and the
	// watchdog (absent for an agent that is not a process, and in records made before it).
	Containment *Containment `json:"containment,omitempty"`
}

// Containment says what the sweeps of an agent's processes and the watchdog rested on, so
// that a report can say how strong "nothing survives" was for this run.
type Containment struct {
	// Cgroup: the agent ran in a cgroup of its own (cgroup v2), which every process it starts
	// inherits whatever it changes of itself (its environment, command line, session or
	// namespaces); the teardown and the watchdog kill the whole cgroup at once (cgroup.kill).
	// A process leaves it only by writing cgroup.procs of a cgroup it may write to (as root,
	// or within a subtree delegated to the user).
	Cgroup bool `json:"cgroup"`
	// Note says what the guarantee rests on where a mechanism was missing, and why it was.
	Note string `json:"note,omitempty"`
}

// Ended reports whether the exit has been recorded.
func (e ExitInfo) Ended() bool { return e.By != "" }

// ExitCause names what ended an agent: the step of the teardown ladder it ended at.
type ExitCause string

// The causes of an exit, in the order of the ladder.
const (
	// ExitSelf: it ended by itself before the teardown began.
	ExitSelf ExitCause = "self"
	// ExitStdin: it left after its stdin was closed, without a signal.
	ExitStdin ExitCause = "stdin"
	// ExitSigterm: it ended after the SIGTERM to its group.
	ExitSigterm ExitCause = "sigterm"
	// ExitSigkill: it had to be killed.
	ExitSigkill ExitCause = "sigkill"
)

// Signalled reports whether the cause is a signal of the ladder (SIGTERM or SIGKILL).
func (c ExitCause) Signalled() bool { return c == ExitSigterm || c == ExitSigkill }

// Survivor is a process of an agent found alive when it should not be.
type Survivor struct {
	PID int `json:"pid"`
	// Command is the kernel's name for the program (at most 15 bytes).
	Command string `json:"command"`
	// Argv is the start of its command line: at most 8 arguments of at most 256 bytes.
	Argv []string `json:"argv,omitempty"`
	// LeftGroup is true when it had left the agent's process group (a setsid or setpgid escape).
	LeftGroup bool `json:"leftGroup"`
	// Found is when it was found.
	Found Moment `json:"found"`
	// Killed is true when it was seen gone after SIGKILL, within the bound.
	Killed bool `json:"killed"`
}

// Proc is a process of an agent's scope, as a sweep lists it.
type Proc struct {
	PID  int `json:"pid"`
	PPID int `json:"ppid"`
	PGID int `json:"pgid"` // process group
	SID  int `json:"sid"`  // session
	// Comm is the kernel's name for the program (at most 15 bytes).
	Comm string `json:"command"`
	// Argv is the start of the command line: at most 8 arguments of at most 256 bytes.
	Argv []string `json:"argv,omitempty"`
}

// Moment names when a sweep of the agent's other processes ran.
type Moment string

// The moments of a teardown (and of the sessions scenario) at which the agent's other
// processes are looked for.
const (
	// AfterSessionClose: session/close was answered (a sweep of the caller's; nothing is
	// signalled).
	AfterSessionClose Moment = "after-session-close"
	// AfterStdin: the stdin step of the ladder is over (nothing is signalled).
	AfterStdin Moment = "after-stdin"
	// AfterLadder is the sweep run once the agent has ended: what it finds is killed
	// (ExitInfo.Survivors).
	AfterLadder Moment = "after-ladder"
	// BeforeLoad: the sessions scenario's sweep before its first session/load.
	BeforeLoad Moment = "before-load"
)
