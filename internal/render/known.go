package render

import (
	"encoding/json"
	"strings"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Initialized says whether the agent answered initialize with a result: before that nothing
// is known of its protocol version, capabilities, modes or config options. (A result written
// by hand, without raw.initialize, counts as initialized when it names a protocol version or
// agentInfo.)
func Initialized(r *report.Result) bool {
	return isValue(r.Raw.Initialize) || r.ProtocolVersion != nil || r.AgentInfo != nil
}

// sessionCreated says whether session/new succeeded, which is where modes and config options
// come from.
func sessionCreated(r *report.Result) bool {
	return isValue(r.Raw.NewSession) || r.Auth.Status == report.AuthAuthenticated || len(r.Modes)+len(r.ConfigOptions) > 0
}

func isValue(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null"
}

// initReason says why initialize told nothing.
func initReason(r *report.Result) string {
	if e := r.Error; e != nil && e.Stage == record.StageInitialize && len(e.AgentError) > 0 {
		return "initialize failed"
	}
	return "the agent never answered initialize"
}

// sessionReason says why session/new told nothing.
func sessionReason(r *report.Result) string {
	if e := r.Error; e != nil && e.Stage == record.StageSessionNew {
		return "session/new did not succeed (" + string(e.Code) + ")"
	}
	return "session/new did not succeed"
}

// methodsProbed says whether any optional method was tried.
func methodsProbed(r *report.Result) bool {
	for _, ms := range r.Methods {
		if ms.Support != report.Skipped {
			return true
		}
	}
	return false
}
