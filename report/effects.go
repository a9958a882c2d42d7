package report

import (
	"github.com/acpprobe/acpprobe/record"
)

// SideEffects is what a run did to the machine, under the isolation it had: the files it
// created, changed or deleted, the browsers it tried to open, the processes it left running
// at each step of the teardown, and what was seen of its network use. It comes from the
// record: the run's side-effects event, and the processes events and exit of its session.
type SideEffects struct {
	Isolation record.Isolation `json:"isolation"`
	// Files: see record.SideEffectsInfo.Files (null when not looked at).
	Files     *record.Files  `json:"files"`
	Browser   BrowserEffects `json:"browser"`
	Processes ProcessEffects `json:"processes"`
	Network   record.Network `json:"network"`
}

// BrowserEffects are the browser and URL launches the shims recorded.
type BrowserEffects struct {
	// Shimmed says the shims were first on the agent's PATH and in $BROWSER; without them a
	// launch could not be seen (nor stopped).
	Shimmed  bool            `json:"shimmed"`
	Launches []BrowserLaunch `json:"launches"`
	Dropped  int             `json:"dropped,omitempty"`
	// BeforeAuthenticate counts the launches made before any authenticate request: a login
	// the agent started by itself (acpprobe never logs in outside a sandbox).
	BeforeAuthenticate int `json:"beforeAuthenticate"`
}

// BrowserLaunch is one launch, redacted, and whether it came before any authenticate.
type BrowserLaunch struct {
	record.BrowserLaunch
	BeforeAuthenticate bool `json:"beforeAuthenticate"`
}

// ProcessEffects are the agent's other processes (descendants, and whatever carries its run
// marker) found at each step of the teardown.
type ProcessEffects struct {
	// AfterSessionClose: running once session/close was answered; null when it was not sent
	// (not advertised, or no session).
	AfterSessionClose *ProcessMoment `json:"afterSessionClose"`
	// AfterStdinEOF: running once the agent left on its stdin EOF, or when the wait for it
	// ended; null when not looked at (a probe signals at once after closing stdin, as clients
	// do; check waits).
	AfterStdinEOF *ProcessMoment `json:"afterStdinEOF"`
	// AfterTeardown: the survivors, found alive once the ladder had ended the agent, and
	// killed (exit.survivors; the protocol.leftover-processes finding).
	AfterTeardown []record.Survivor `json:"afterTeardown"`
	// Escaped are the processes seen outside the agent's process group at any of these
	// moments: a setsid or setpgid escape that a group teardown alone would miss.
	Escaped []EscapedProcess `json:"escaped"`
}

// ProcessMoment is one sweep of the teardown.
type ProcessMoment struct {
	AgentExited bool          `json:"agentExited"`
	Processes   []record.Proc `json:"processes"`
	Error       string        `json:"error,omitempty"`
}

// EscapedProcess is a process that had left the agent's process group, and when it was
// first seen.
type EscapedProcess struct {
	PID     int           `json:"pid"`
	Command string        `json:"command"`
	Seen    record.Moment `json:"seen"`
}
