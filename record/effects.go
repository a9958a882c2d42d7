package record

import (
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// The events of what a run did to the machine, and of the second identity of --auth-ab.
var (
	// Processes: the agent's other processes alive at one moment of the teardown (after
	// session/close was answered, after the stdin step), listed by a sweep that signals
	// nothing. What is still there after the ladder is in the exit event (Exit.Survivors).
	Processes = Event[ProcessesInfo]{"processes"}
	// SideEffects: what the run did to the machine — files, browser launches, network — and
	// the isolation it ran under, observed once the agent and everything it started were
	// gone. It is a fact of the whole run: it follows the run's last connection (after the
	// done event, and after the --deep connection when there is one); FindRun finds it.
	SideEffects = Event[SideEffectsInfo]{"side-effects"}
	// AuthIdentity: what the agent showed under the other identity of --auth-ab, in a run of
	// its own whose record is not kept. It follows the run's last connection, as SideEffects.
	AuthIdentity = Event[AuthIdentityInfo]{"auth-identity"}
)

// ProcessesInfo is the payload of a processes event.
type ProcessesInfo struct {
	// Moment is when the sweep ran: AfterSessionClose or AfterStdin.
	Moment Moment `json:"moment"`
	// AgentExited says whether the agent itself had ended by then (after the stdin step: it
	// left on its stdin EOF).
	AgentExited bool `json:"agentExited"`
	// Processes are the live processes of the agent's scope (its group, its session, its run
	// marker), the agent itself left out.
	Processes []Proc `json:"processes"`
	// Error says why the sweep could not look (no /proc here).
	Error string `json:"error,omitempty"`
}

// SideEffectsInfo is the payload of a side-effects event.
type SideEffectsInfo struct {
	Isolation Isolation `json:"isolation"`
	// Files are the entries created, changed or deleted: in the sandbox (HOME, TMPDIR,
	// XDG_RUNTIME_DIR, workspace) when isolated, else in the places agents keep their state
	// under the real HOME (the sandbox package's HomePaths), compared by metadata. Nil when not looked at.
	Files *Files `json:"files"`
	// Browser are the browser and URL launches the shims on the agent's PATH recorded.
	Browser Browser `json:"browser"`
	// Network is what was seen of the agent's network use.
	Network Network `json:"network"`
}

// Isolation is what the agent ran under: the level actually in force, never more.
type Isolation struct {
	// Level is LevelNone (the user's HOME and environment), LevelEnvHome or LevelNet.
	Level Level `json:"level"`
	// Requested is the level asked for, when it differs from Level (the agent is not a
	// process, so there was nothing to isolate).
	Requested Level `json:"requested,omitempty"`
	// Kept is the sandbox's directory when it was kept for inspection (--keep-sandbox).
	Kept string `json:"kept,omitempty"`
	// Env says, by name only, what became of the caller's environment (sandboxed runs).
	Env *EnvReport `json:"env,omitempty"`
	// Credentials are the names of the credential-looking variables the agent received.
	Credentials []string `json:"credentials"`
	// Note says what the level does not cover.
	Note string `json:"note,omitempty"`
	// Left is what acpprobe could not remove of its own directories (the sandbox, the
	// browser shims'), and why: a mount point it did not cross, an immutable file, a
	// directory replaced by a link. Absent when everything went.
	Left []Leftover `json:"left,omitempty"`
}

// Leftover is an entry of acpprobe's own directories that their removal left behind.
type Leftover struct {
	Dir    string `json:"dir"`    // the directory being removed
	Path   string `json:"path"`   // the entry, relative to Dir ("." for Dir itself)
	Reason string `json:"reason"` // why it stayed
}

// Browser is the browser part of a side-effects event.
type Browser struct {
	// Shimmed says the shims were first on the agent's PATH and in $BROWSER.
	Shimmed  bool            `json:"shimmed"`
	Launches []BrowserLaunch `json:"launches"`
	// Dropped counts launches beyond the cap, not read.
	Dropped int `json:"dropped,omitempty"`
}

// BrowserLaunch is one attempt to open a browser or a URL, redacted.
type BrowserLaunch struct {
	// AtMs is when, in milliseconds since the record began (from the time the shim wrote
	// its record; file times may lag by a few milliseconds).
	AtMs float64 `json:"atMs"`
	// Program is the shimmed program ("xdg-open", …) or "$BROWSER".
	Program string `json:"program"`
	// URL is the first argument that is a URL, with its query, fragment and user
	// information replaced by "…" ("" when no argument was one).
	URL string `json:"url,omitempty"`
	// Args is how many arguments there were.
	Args      int  `json:"args"`
	Truncated bool `json:"truncated,omitempty"`
}

// AuthIdentityInfo is what one identity of --auth-ab showed: the facts the auth oracle
// combines, by name only where credentials are concerned.
type AuthIdentityInfo struct {
	// Identity is "user" (the user's HOME and environment) or "isolated" (a sandbox with an
	// empty identity: no credential variable, a fresh HOME).
	Identity Identity `json:"identity"`
	// Isolation is the level that identity ran under.
	Isolation Level `json:"isolation"`
	// SessionNew is how session/new ended: ok, auth-error (-32000, or an error that names
	// authentication), error, no-answer, not-called.
	SessionNew SessionNewOutcome `json:"sessionNew"`
	Code       *int              `json:"code,omitempty"`
	Message    string            `json:"message,omitempty"`
	// AuthStatus is the state auth/status answered, when the agent advertises it, or the
	// vendor status request the catalogue knows the agent serves ("" when not asked or not
	// answered).
	AuthStatus string `json:"authStatus,omitempty"`
	// StatusUpdates are the states pushed by auth/status_update (or the vendor
	// _auth/status_update), in order.
	StatusUpdates []string `json:"statusUpdates"`
	// AuthMethods are the advertised methods as "id (type)", type "agent" when absent.
	AuthMethods []string `json:"authMethods"`
	// TerminalArgs are the args of the terminal methods, as advertised.
	TerminalArgs []string `json:"terminalArgs,omitempty"`
	// Credentials are the names of the credential-looking variables the agent received.
	Credentials []string `json:"credentials"`
	// Error is the code of the probe's error in that run, when it could not complete (or why
	// the run could not be made).
	Error string `json:"error,omitempty"`
	// Files are what that run changed, by metadata: in its sandbox, or in the places agents
	// keep their state under the real HOME (absent for the main run: see sideEffects).
	Files *Files `json:"files,omitempty"`
}

// Identity names one identity of --auth-ab.
type Identity string

// The identities of --auth-ab.
const (
	// IdentityUser: the user's HOME and environment.
	IdentityUser Identity = "user"
	// IdentityIsolated: a sandbox with an empty identity (no credential variable, a fresh HOME).
	IdentityIsolated Identity = "isolated"
)

// SessionNewOutcome is how session/new ended, in AuthIdentityInfo.SessionNew.
type SessionNewOutcome string

// How session/new ended, in AuthIdentityInfo.SessionNew.
const (
	SessionNewOK        SessionNewOutcome = "ok"
	SessionNewAuthError SessionNewOutcome = "auth-error"
	SessionNewError     SessionNewOutcome = "error"
	SessionNewNoAnswer  SessionNewOutcome = "no-answer"
	SessionNewNotCalled SessionNewOutcome = "not-called"
)

// FindRun returns the last event of kind e in frames: the run-level events (SideEffects,
// AuthIdentity) follow the run's last connection, so they are looked for in the whole
// record, not in one connection's index.
func FindRun[T any](frames []jsonrpc.Frame, e Event[T]) (T, bool) {
	for i := len(frames) - 1; i >= 0; i-- {
		if p, ok := e.Decode(frames[i]); ok {
			return p, true
		}
	}
	var zero T
	return zero, false
}

// Level is how much isolation was in force.
type Level string

// The levels, weakest first.
const (
	// LevelNone: no sandbox; the agent runs with the caller's HOME and environment.
	LevelNone Level = "none"
	// LevelEnvHome: a throwaway HOME, TMPDIR and workspace and a reduced environment. No
	// privilege and no namespace needed; not a security boundary.
	LevelEnvHome Level = "env+home"
	// LevelNet: LevelEnvHome, and the agent sees no network but its own loopback (Linux, with
	// unprivileged user and network namespaces).
	LevelNet Level = "net"
)

// FileChange is one entry created, changed or deleted between two inventories. Directories are
// not listed: a directory shows up through what it holds.
type FileChange struct {
	// Path is the entry's place: a label ("home", "tmp", "run", "workspace" in a sandbox;
	// "~/.codex"… under a real HOME) and the path below it.
	Path   string `json:"path"`
	Change string `json:"change"` // "created", "changed" or "deleted"
	Kind   string `json:"kind"`   // "file", "symlink", "fifo", "socket", "device"
	// Size in bytes: after the change, or before it for a deleted entry.
	Size int64 `json:"size"`
	// Target is where a symbolic link points, as written (never followed).
	Target string `json:"target,omitempty"`
}

// Files is the file part of the side-effect report.
type Files struct {
	Watched []string     `json:"watched"` // the trees looked at, by label
	Changes []FileChange `json:"changes"`
	Created int          `json:"created"`
	Changed int          `json:"changed"`
	Deleted int          `json:"deleted"`
	// Truncated is set when Changes lists only the first of them (the counts cover all).
	Truncated bool `json:"truncated,omitempty"`
	// Walked is how many entries the later inventory looked at; Capped is set when either
	// inventory stopped at its cap, so changes beyond it were not seen.
	Walked int  `json:"walked"`
	Capped bool `json:"capped,omitempty"`
	// Unreadable counts the directories either inventory could not look into; Unseen lists
	// the first of them with why: unreadable (the agent made it so), deeper than the walk
	// goes, or a mount point, which the walk does not cross. Changes there were not seen. The
	// real HOME's watch adds what it could not name: a directory changed after the start
	// but before its watch (an entry removed from it then), an entry gone while it was walked.
	Unreadable int      `json:"unreadable,omitempty"`
	Unseen     []Unseen `json:"unseen,omitempty"`
}

// Unseen is a directory an inventory could not look into.
type Unseen struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Network is what was seen of an agent's use of the network.
type Network struct {
	// Observed says the agent's lookups and connections were answered and recorded by the
	// sandbox's loopback sink (LevelNet with a sink). Without it nothing of the network is
	// observed: Note says why.
	Observed bool `json:"observed"`
	// Lookups are the DNS names the agent asked for, in the order first asked.
	Lookups []string `json:"lookups"`
	// Connects are the TCP connections it attempted to the sink's ports.
	Connects []Connect `json:"connects"`
	// Dropped counts lookups and connections beyond the caps, not listed.
	Dropped int `json:"dropped,omitempty"`
	// Note says what was and was not observed.
	Note string `json:"note"`
}

// Connect is one destination the agent tried to connect to, and how often.
type Connect struct {
	// Host is the name whose (sink) address was connected to, or the address itself.
	Host  string `json:"host"`
	Port  int    `json:"port"`
	Count int    `json:"count"`
}

// EnvReport says, by name only, what became of the caller's environment.
type EnvReport struct {
	// Dropped lists the caller's variables whose value did not reach the agent (the ones the
	// sandbox replaces, such as HOME, included).
	Dropped []string `json:"dropped"`
	// DroppedCredentials is the part of Dropped that looks like credentials.
	DroppedCredentials []string `json:"droppedCredentials"`
	// Passed lists the variables passed through on purpose and Set those given a value on
	// purpose.
	Passed []string `json:"passed"`
	Set    []string `json:"set"`
	// Credentials lists the credential-looking names that do reach the agent: only ever ones
	// passed or set on purpose.
	Credentials []string `json:"credentials"`
}
