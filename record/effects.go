package record

import (
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/sandbox"
	"github.com/acpprobe/acpprobe/transport"
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
	// Moment is when the sweep ran: transport.AfterSessionClose or transport.AfterStdin.
	Moment transport.Moment `json:"moment"`
	// AgentExited says whether the agent itself had ended by then (after the stdin step: it
	// left on its stdin EOF).
	AgentExited bool `json:"agentExited"`
	// Processes are the live processes of the agent's scope (its group, its session, its run
	// marker), the agent itself left out.
	Processes []transport.Proc `json:"processes"`
	// Error says why the sweep could not look (no /proc here).
	Error string `json:"error,omitempty"`
}

// SideEffectsInfo is the payload of a side-effects event.
type SideEffectsInfo struct {
	Isolation Isolation `json:"isolation"`
	// Files are the entries created, changed or deleted: in the sandbox (HOME, TMPDIR,
	// XDG_RUNTIME_DIR, workspace) when isolated, else in the places agents keep their state
	// under the real HOME (sandbox.HomePaths), compared by metadata. Nil when not looked at.
	Files *sandbox.Files `json:"files"`
	// Browser are the browser and URL launches the shims on the agent's PATH recorded.
	Browser Browser `json:"browser"`
	// Network is what was seen of the agent's network use.
	Network sandbox.Network `json:"network"`
}

// Isolation is what the agent ran under: the level actually in force, never more.
type Isolation struct {
	// Level is sandbox.LevelNone (the user's HOME and environment), LevelEnvHome or LevelNet.
	Level sandbox.Level `json:"level"`
	// Requested is the level asked for, when it differs from Level (the agent is not a
	// process, so there was nothing to isolate).
	Requested sandbox.Level `json:"requested,omitempty"`
	// Kept is the sandbox's directory when it was kept for inspection (--keep-sandbox).
	Kept string `json:"kept,omitempty"`
	// Env says, by name only, what became of the caller's environment (sandboxed runs).
	Env *sandbox.EnvReport `json:"env,omitempty"`
	// Credentials are the names of the credential-looking variables the agent received.
	Credentials []string `json:"credentials"`
	// Note says what the level does not cover.
	Note string `json:"note,omitempty"`
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
	Identity string `json:"identity"`
	// Isolation is the level that identity ran under.
	Isolation sandbox.Level `json:"isolation"`
	// SessionNew is how session/new ended: ok, auth-error (-32000, or an error that names
	// authentication), error, no-answer, not-called.
	SessionNew string `json:"sessionNew"`
	Code       *int   `json:"code,omitempty"`
	Message    string `json:"message,omitempty"`
	// AuthStatus is the state auth/status answered, when the agent advertises it ("" when
	// not asked or not answered).
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
	Files *sandbox.Files `json:"files,omitempty"`
}

// The identities of --auth-ab.
const (
	IdentityUser     = "user"
	IdentityIsolated = "isolated"
)

// How session/new ended, in AuthIdentityInfo.SessionNew.
const (
	SessionNewOK        = "ok"
	SessionNewAuthError = "auth-error"
	SessionNewError     = "error"
	SessionNewNoAnswer  = "no-answer"
	SessionNewNotCalled = "not-called"
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
