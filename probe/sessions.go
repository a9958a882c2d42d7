package probe

import (
	"github.com/acpprobe/acpprobe/acp"
)

// SessionCycles is the number of load/close cycles of the sessions scenario.
const SessionCycles = 5

// The session methods the sessions scenario exercises, as SessionMethods names them.
const (
	SessionLoadMethod   = "load"
	SessionListMethod   = "list"
	SessionForkMethod   = "fork"
	SessionCloseMethod  = "close"
	SessionResumeMethod = "resume"
)

// SessionMethods are the session methods agentCapabilities advertise, of load (loadSession),
// list, fork, close and resume (sessionCapabilities), in that order.
func SessionMethods(caps acp.Object) []string {
	sess := caps.Object("sessionCapabilities")
	out := []string{}
	if caps.Bool("loadSession") {
		out = append(out, SessionLoadMethod)
	}
	for _, m := range []string{SessionListMethod, SessionForkMethod, SessionCloseMethod, SessionResumeMethod} {
		if sess.Has(m) {
			out = append(out, m)
		}
	}
	return out
}
