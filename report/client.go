package report

// Client is the client profile a run probed as: the host acpprobe said it was (clientInfo) and
// what it declared in clientCapabilities, and what acpprobe answers when the agent uses one of
// those capabilities. A richer profile changes what the agent is shown, never what acpprobe
// does: it serves no file and no terminal and declines every elicitation.
type Client struct {
	// Profile is the profile's name; File the path it was read from (a user's profile).
	Profile string `json:"profile"`
	File    string `json:"file,omitempty"`
	// Declared are the capabilities the profile declares, as dotted paths of clientCapabilities
	// (fs.readTextFile, auth._meta.gateway, _meta.jetbrains.air).
	Declared []string `json:"declared"`
	// Answers say, for each declared capability the agent could ask the client to use, what
	// acpprobe answers instead of serving it.
	Answers []ClientAnswer `json:"answers"`
}

// ClientAnswer is what acpprobe does when the agent uses one declared capability.
type ClientAnswer struct {
	Capability string `json:"capability"`
	Answer     string `json:"answer"`
}

// RequirementVerdict is the verdict of one requirement of a host's checklist, or of the whole.
type RequirementVerdict string

// Requirement verdicts.
const (
	// RequirementMet: the report shows the agent has it.
	RequirementMet RequirementVerdict = "met"
	// RequirementMissing: the report shows the agent does not have it.
	RequirementMissing RequirementVerdict = "missing"
	// RequirementUnverified: the run could not observe it (the agent could not be probed, its
	// session needed a login, method detection did not run): never a pass.
	RequirementUnverified RequirementVerdict = "unverified"
)

// Checklist is a host's requirements (--require) judged on one agent.
type Checklist struct {
	// Verdict is missing when a requirement is missing, else unverified when one is
	// unverified, else met.
	Verdict      RequirementVerdict `json:"verdict"`
	Requirements []Requirement      `json:"requirements"`
}

// Requirement is one requirement's verdict with its evidence.
type Requirement struct {
	// Name is the requirement as the host named it (README "A host's checklist").
	Name string `json:"name"`
	// Field is the report field it is judged by (capabilities.loadSession, authMethods,
	// methods["session/list"]).
	Field    string             `json:"field"`
	Verdict  RequirementVerdict `json:"verdict"`
	Evidence string             `json:"evidence"`
}

// SurfaceSchema names the document of probe --client-profile A,B,… (Surface).
const SurfaceSchema = "acpprobe.surface/v1"

// Surface is what one agent showed each client profile: one handshake (a whole probe) per
// profile, and every item of the agent's answers that not every profile was shown.
type Surface struct {
	Schema   string       `json:"schema"`
	Profiles []ProfileRun `json:"profiles"`
	// Differences are the items some profiles were shown and others not, in the order of the
	// profiles that were shown them first; none when every profile was shown the same.
	Differences []Difference `json:"differences"`
	// Requirements is the host's checklist judged across the profiles (--require): each
	// requirement's best verdict over them (met, then missing, then unverified), since a host
	// that declares what a profile declares is shown what it was shown.
	Requirements *Checklist `json:"requirements,omitempty"`
}

// ProfileRun is the result of the probe as one client profile.
type ProfileRun struct {
	Profile string  `json:"profile"`
	Result  *Result `json:"result"`
}

// Difference is one item of the agent's answers (a path into initialize's or session/new's
// result, with its value) that some profiles were shown and others not.
type Difference struct {
	// Kind groups the item: auth method, capability, _meta, mode, config option, model, other.
	Kind string `json:"kind"`
	// Item is the path and value: initialize.authMethods[gateway]._meta.gateway.protocol = "openai".
	Item  string   `json:"item"`
	In    []string `json:"in"`
	NotIn []string `json:"notIn"`
}
