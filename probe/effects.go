package probe

import (
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
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

// DeriveRun adds to r, derived from the session x, the facts of the whole run that follow
// its last connection in frames (the whole record): the side effects, and the auth oracle's
// answer when the run has auth-identity events (--auth-ab).
func DeriveRun(r *Result, x *record.Index, frames []jsonrpc.Frame) {
	if se, ok := record.FindRun(frames, record.SideEffects); ok {
		r.SideEffects = DeriveSideEffects(x, se)
	}
	var ids []record.AuthIdentityInfo
	for _, f := range frames {
		if id, ok := record.AuthIdentity.Decode(f); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	if r.SideEffects != nil {
		if main := MainIdentity(r.SideEffects.Isolation); main != "" {
			ids = append([]record.AuthIdentityInfo{IdentityFacts(x, r, main, r.SideEffects.Isolation)}, ids...)
		}
	}
	r.AuthAB = JudgeAuth(ids)
}

// DeriveSideEffects builds the side-effect report of a run from its side-effects event (se)
// and the index of its session (x: the processes events, the exit, the authenticate
// requests).
func DeriveSideEffects(x *record.Index, se record.SideEffectsInfo) *SideEffects {
	out := &SideEffects{Isolation: se.Isolation, Files: se.Files, Network: se.Network,
		Browser: BrowserEffects{Shimmed: se.Browser.Shimmed, Dropped: se.Browser.Dropped, Launches: []BrowserLaunch{}}}
	if out.Isolation.Credentials == nil {
		out.Isolation.Credentials = []string{}
	}
	if out.Network.Lookups == nil {
		out.Network.Lookups = []string{}
	}
	if out.Network.Connects == nil {
		out.Network.Connects = []record.Connect{}
	}
	firstAuth := -1.0
	if auth := x.First(acp.MethodAuthenticate); auth != nil {
		firstAuth = float64(auth.Request.At.Microseconds()) / 1000
	}
	for _, l := range se.Browser.Launches {
		before := firstAuth < 0 || l.AtMs < firstAuth
		out.Browser.Launches = append(out.Browser.Launches, BrowserLaunch{BrowserLaunch: l, BeforeAuthenticate: before})
		if before {
			out.Browser.BeforeAuthenticate++
		}
	}
	out.Processes = processEffects(x)
	return out
}

// processEffects reads the processes events and the survivors of the exit.
func processEffects(x *record.Index) ProcessEffects {
	p := ProcessEffects{AfterTeardown: []record.Survivor{}, Escaped: []EscapedProcess{}}
	started, _ := x.FirstEvent(record.Started.Kind)
	leader, _ := record.Started.Decode(started)
	seen := map[int]bool{}
	escaped := func(pid int, command string, at record.Moment) {
		if !seen[pid] {
			seen[pid] = true
			p.Escaped = append(p.Escaped, EscapedProcess{PID: pid, Command: command, Seen: at})
		}
	}
	for _, f := range x.Events(record.Processes.Kind) {
		info, ok := record.Processes.Decode(f)
		if !ok {
			continue
		}
		m := &ProcessMoment{AgentExited: info.AgentExited, Processes: info.Processes, Error: info.Error}
		if m.Processes == nil {
			m.Processes = []record.Proc{}
		}
		switch info.Moment {
		case record.AfterSessionClose:
			p.AfterSessionClose = m
		case record.AfterStdin:
			p.AfterStdinEOF = m
		default:
			continue
		}
		for _, proc := range m.Processes {
			if leader.PID > 0 && proc.PGID != leader.PID {
				escaped(proc.PID, proc.Comm, info.Moment)
			}
		}
	}
	if f, ok := x.FirstEvent(record.Exit.Kind); ok {
		if exit, ok := record.Exit.Decode(f); ok && exit.Survivors != nil {
			p.AfterTeardown = exit.Survivors
			for _, s := range exit.Survivors {
				if s.LeftGroup {
					escaped(s.PID, s.Command, s.Found)
				}
			}
		}
	}
	return p
}
