// Package acp holds the Agent Client Protocol facts the probe depends on: method names,
// protocol versions, and lenient typed views of the messages it reads.
//
// The views never fail: a field of the wrong type reads as absent, so a deviating agent still
// yields everything that can be learned from it. Judging the deviation is the conformance
// package's job, with the official schema.
package acp

import (
	"encoding/json"
	"regexp"
	"sort"
	"sync"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// ProtocolVersion is the ACP major version the probe speaks and sends by default.
const ProtocolVersion = 1

// Client → agent methods.
const (
	MethodInitialize      = "initialize"
	MethodAuthenticate    = "authenticate"
	MethodLogout          = "logout"
	MethodSessionNew      = "session/new"
	MethodSessionLoad     = "session/load"
	MethodSessionResume   = "session/resume"
	MethodSessionFork     = "session/fork" // unstable
	MethodSessionList     = "session/list"
	MethodSessionClose    = "session/close"
	MethodSessionDelete   = "session/delete"
	MethodSetMode         = "session/set_mode"
	MethodSetConfigOption = "session/set_config_option"
	MethodSetModel        = "session/set_model" // removed from ACP in 2026-06; still seen
	// MethodSessionStop is session/close's name in the unstable drafts of schema 0.11.0
	// (renamed on 2026-03-09); still seen.
	MethodSessionStop = "session/stop"
	// Unstable session methods of the newer v1 drafts (schema >= 1.25.0), each advertised
	// by the sessionCapabilities key named beside it.
	MethodSessionStatus    = "session/status"    // sessionCapabilities.status
	MethodSessionArchive   = "session/archive"   // sessionCapabilities.archive
	MethodSessionUnarchive = "session/unarchive" // sessionCapabilities.archive
	MethodSessionSetTitle  = "session/set_title" // sessionCapabilities.title
	MethodSessionPrompt    = "session/prompt"
	MethodSessionCancel    = "session/cancel"
	// MethodAuthStatus asks the agent's authentication state without changing it (unstable;
	// advertised by agentCapabilities.auth.status; it MUST NOT answer -32000).
	MethodAuthStatus = "auth/status"
)

// Agent → client methods.
const (
	MethodSessionUpdate     = "session/update"
	MethodRequestPermission = "session/request_permission"
	MethodReadTextFile      = "fs/read_text_file"
	MethodWriteTextFile     = "fs/write_text_file"
	MethodTerminalCreate    = "terminal/create"
	MethodElicitationCreate = "elicitation/create"
	// MethodAuthStatusUpdate is the agent's push of a changed authentication state (unstable),
	// and MethodVendorAuthStatusUpdate the same push under the vendor prefix some agents used
	// before it was specified.
	MethodAuthStatusUpdate       = "auth/status_update"
	MethodVendorAuthStatusUpdate = "_auth/status_update"
)

// Both directions.
const MethodCancelRequest = "$/cancel_request"

// ProbedMethods are the optional methods whose support the probe detects, in report order.
var ProbedMethods = []string{
	MethodSetConfigOption,
	MethodSetMode,
	MethodSetModel,
	MethodSessionLoad,
	MethodSessionResume,
	MethodSessionFork,
	MethodSessionList,
	MethodSessionClose,
	MethodSessionDelete,
	MethodSessionStatus,
	MethodSessionArchive,
	MethodSessionUnarchive,
	MethodSessionSetTitle,
	MethodSessionStop,
}

// LegacyMethods are the methods that left ACP but are still implemented, each with what
// replaced it (capability.legacy-method reports an agent that still answers one).
var LegacyMethods = map[string]string{
	MethodSetModel:    "it was removed from ACP on 2026-06-01 in favour of the model config option",
	MethodSessionStop: "it was the unstable draft of session/close (schema 0.11.0), renamed to session/close on 2026-03-09",
}

// Object is a lenient view of a JSON object: each key's raw value.
type Object map[string]json.RawMessage

// ParseObject returns the object's keys, or nil when raw is not a JSON object.
func ParseObject(raw json.RawMessage) Object {
	var o Object
	if len(raw) == 0 || json.Unmarshal(raw, &o) != nil {
		return nil
	}
	return o
}

// Has reports whether key is present with a non-null value.
func (o Object) Has(key string) bool {
	v, ok := o[key]
	return ok && string(v) != "null"
}

// Bool is true only when key holds the JSON value true.
func (o Object) Bool(key string) bool {
	var b bool
	return json.Unmarshal(o[key], &b) == nil && b
}

// String returns key's string value, or "" when absent or not a string.
func (o Object) String(key string) string {
	var s string
	_ = json.Unmarshal(o[key], &s)
	return s
}

// Object returns key's value as an object, or nil.
func (o Object) Object(key string) Object { return ParseObject(o[key]) }

// Array returns key's value as an array of raw items, or nil.
func (o Object) Array(key string) []json.RawMessage {
	var a []json.RawMessage
	_ = json.Unmarshal(o[key], &a)
	return a
}

// Int returns key's value as an integer; ok is false when absent or not an integer.
func (o Object) Int(key string) (n int, ok bool) {
	var f float64
	if json.Unmarshal(o[key], &f) != nil || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// Keys returns the object's keys in sorted order.
func (o Object) Keys() []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

var authWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bauthenticat|\bauth[ _]required|\b(un)?authori[sz]|\blog ?in\b|\blogged in\b|\bsign ?in\b|\bapi[ _-]?key\b|\bcredentials?\b|\btoken (is )?(missing|expired|invalid)`)
})

// IsAuthError reports whether an error answer means "authentication required": the ACP code
// -32000, or a message that says so in words (some agents use -32603 for it).
func IsAuthError(e *jsonrpc.Error) bool {
	if e == nil {
		return false
	}
	if e.Code == jsonrpc.CodeAuthRequired {
		return true
	}
	return authWords().MatchString(e.Message) || authWords().Match(e.Data)
}

// validationWords are what validation errors say: zod issues (invalid_type, invalid_union,
// "Invalid input", formatted trees with _errors) and serde ("missing field", "invalid type",
// "unknown variant", "unknown field"), or the JSON-RPC name itself.
var validationWords = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)invalid[_ ]params|invalid_type|invalid_union|invalid input|"_errors"|missing field|invalid type|unknown variant|unknown field|expected [a-z"]+, received`)
})

// IsValidationError reports whether an error answer says the params failed validation, whatever
// its code: some agents answer invalid params with -32603 and a zod issue list.
func IsValidationError(e *jsonrpc.Error) bool {
	if e == nil {
		return false
	}
	if e.Code == jsonrpc.CodeInvalidParams {
		return true
	}
	return validationWords().MatchString(e.Message) || validationWords().Match(e.Data)
}
