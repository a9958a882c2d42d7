package report

import (
	"github.com/acpprobe/acpprobe/record"
)

// AuthClass is the auth oracle's answer (--auth-ab).
type AuthClass string

// Auth oracle answers.
const (
	// AuthClassAuthenticated: session/new works with the user's identity and not with an
	// empty one — it works for you.
	AuthClassAuthenticated AuthClass = "authenticated"
	// AuthClassRequired: the agent refuses without a login and says how to log in.
	AuthClassRequired AuthClass = "auth_required"
	// AuthClassNoAuthNeeded: session/new works even with an empty identity, isolated.
	AuthClassNoAuthNeeded AuthClass = "no_auth_needed"
	// AuthClassHidden: the agent refuses for lack of a login yet advertises no auth method.
	AuthClassHidden AuthClass = "hidden_auth"
	// AuthClassUnknown: the signals do not decide it (the agent failed otherwise, or gave
	// no answer).
	AuthClassUnknown AuthClass = "unknown"
)

// AuthAB is the auth oracle: the same agent probed with the user's identity and with an empty
// one, isolated, every auth signal of both combined. acpprobe never calls authenticate or
// logout for it.
type AuthAB struct {
	Status   AuthClass `json:"status"`
	Evidence []string  `json:"evidence"`
	// Identities are the facts of each identity, the user's first.
	Identities []record.AuthIdentityInfo `json:"identities"`
}
