package acp

import "encoding/json"

// Implementation is agentInfo / clientInfo.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version,omitempty"`
}

// InitializeResult is a lenient view of the initialize response.
type InitializeResult struct {
	// ProtocolVersion is the version the agent answered; VersionOK is false when it was
	// missing or not an integer.
	ProtocolVersion int
	VersionOK       bool
	Capabilities    Object            // agentCapabilities (nil when absent)
	AuthMethods     []json.RawMessage // verbatim, in order
	AgentInfo       *Implementation   // nil when absent or without a name
}

// ParseInitializeResult reads an initialize result.
func ParseInitializeResult(raw json.RawMessage) InitializeResult {
	o := ParseObject(raw)
	var r InitializeResult
	r.ProtocolVersion, r.VersionOK = o.Int("protocolVersion")
	r.Capabilities = o.Object("agentCapabilities")
	r.AuthMethods = o.Array("authMethods")
	if info := o.Object("agentInfo"); info != nil && info.String("name") != "" {
		r.AgentInfo = &Implementation{Name: info.String("name"), Title: info.String("title"), Version: info.String("version")}
	}
	return r
}

// Mode is one session mode.
type Mode struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// Model is one model, from a model config option or the legacy models field.
type Model struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
}

// ConfigOption is a session config option with select groups flattened into Options.
type ConfigOption struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Category    string `json:"category,omitempty"`
	Type        string `json:"type"`
	// CurrentValue is verbatim, since its type depends on the option's: a JSON string for a
	// select option, a boolean for a boolean one. Current returns a select option's value as
	// a Go string.
	CurrentValue json.RawMessage `json:"currentValue"`
	Options      []SelectOption  `json:"options,omitempty"`
}

// SelectOption is one value of a select config option; Group names the group it came from.
type SelectOption struct {
	Value       string `json:"value"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Group       string `json:"group,omitempty"`
}

// Values returns the option's selectable values in order.
func (c ConfigOption) Values() []string {
	v := make([]string, 0, len(c.Options))
	for _, o := range c.Options {
		v = append(v, o.Value)
	}
	return v
}

// Current returns the current value as a string ("" when it is not a string).
func (c ConfigOption) Current() string {
	var s string
	_ = json.Unmarshal(c.CurrentValue, &s)
	return s
}

// SessionResult is a lenient view of a session/new (or load/resume/fork) result.
type SessionResult struct {
	SessionID     string
	CurrentModeID string
	Modes         []Mode
	HasModes      bool
	ConfigOptions []ConfigOption
	// LegacyModels is the removed `models` field (availableModels); LegacyCurrentModel its
	// currentModelId.
	LegacyModels       []Model
	LegacyCurrentModel string
	HasLegacyModels    bool
}

// ParseSessionResult reads a session result.
func ParseSessionResult(raw json.RawMessage) SessionResult {
	o := ParseObject(raw)
	r := SessionResult{SessionID: o.String("sessionId")}
	if modes := o.Object("modes"); modes != nil {
		r.HasModes = true
		r.CurrentModeID = modes.String("currentModeId")
		for _, m := range modes.Array("availableModes") {
			mo := ParseObject(m)
			if mo == nil {
				continue
			}
			r.Modes = append(r.Modes, Mode{ID: mo.String("id"), Name: mo.String("name"), Description: mo.String("description")})
		}
	}
	r.ConfigOptions = ParseConfigOptions(o["configOptions"])
	if models := o.Object("models"); models != nil {
		r.HasLegacyModels = true
		r.LegacyCurrentModel = models.String("currentModelId")
		for _, m := range models.Array("availableModels") {
			mo := ParseObject(m)
			if mo == nil {
				continue
			}
			r.LegacyModels = append(r.LegacyModels, Model{ID: mo.String("modelId"), Name: mo.String("name"), Description: mo.String("description")})
		}
	}
	return r
}

// ParseConfigOptions reads a configOptions array, flattening select groups.
func ParseConfigOptions(raw json.RawMessage) []ConfigOption {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	out := make([]ConfigOption, 0, len(items))
	for _, item := range items {
		o := ParseObject(item)
		if o == nil {
			continue
		}
		c := ConfigOption{ID: o.String("id"), Name: o.String("name"), Description: o.String("description"),
			Category: o.String("category"), Type: o.String("type"), CurrentValue: o["currentValue"]}
		for _, opt := range o.Array("options") {
			oo := ParseObject(opt)
			if oo == nil {
				continue
			}
			if oo.Has("group") && oo.Has("options") {
				group := oo.String("name")
				if group == "" {
					group = oo.String("group")
				}
				for _, sub := range oo.Array("options") {
					so := ParseObject(sub)
					if so == nil {
						continue
					}
					c.Options = append(c.Options, SelectOption{Value: so.String("value"), Name: so.String("name"), Description: so.String("description"), Group: group})
				}
				continue
			}
			c.Options = append(c.Options, SelectOption{Value: oo.String("value"), Name: oo.String("name"), Description: oo.String("description")})
		}
		out = append(out, c)
	}
	return out
}

// ModelOption returns the config option that selects the model: id "model", else the first
// with category "model".
func ModelOption(opts []ConfigOption) *ConfigOption {
	return findOption(opts, "model", "model")
}

// ThoughtLevelOption returns the config option with category "thought_level".
func ThoughtLevelOption(opts []ConfigOption) *ConfigOption {
	return findOption(opts, "", "thought_level")
}

// ModeOption returns the config option with category "mode" (id "mode" first).
func ModeOption(opts []ConfigOption) *ConfigOption {
	return findOption(opts, "mode", "mode")
}

func findOption(opts []ConfigOption, id, category string) *ConfigOption {
	if id != "" {
		for i := range opts {
			if opts[i].ID == id {
				return &opts[i]
			}
		}
	}
	for i := range opts {
		if opts[i].Category == category {
			return &opts[i]
		}
	}
	return nil
}

// SessionUpdate is a lenient view of a session/update notification's params: the update's
// kind and the fields a prompt turn is judged by.
type SessionUpdate struct {
	SessionID string
	// Kind is the sessionUpdate discriminator: agent_message_chunk, agent_thought_chunk,
	// tool_call, tool_call_update, usage_update …
	Kind string
	// Text is the content's text when the content is a text block (message and thought
	// chunks).
	Text string
	// ToolCallID, ToolKind and Status are a tool call's (tool_call, tool_call_update).
	ToolCallID string
	ToolKind   string
	Status     string
}

// ParseSessionUpdate reads the params of a session/update notification.
func ParseSessionUpdate(params json.RawMessage) SessionUpdate {
	o := ParseObject(params)
	u := o.Object("update")
	out := SessionUpdate{SessionID: o.String("sessionId"), Kind: u.String("sessionUpdate"),
		ToolCallID: u.String("toolCallId"), ToolKind: u.String("kind"), Status: u.String("status")}
	if c := u.Object("content"); c.String("type") == "text" {
		out.Text = c.String("text")
	}
	return out
}

// PermissionRequest is a lenient view of session/request_permission params: the tool call it
// asks about and the ids of the options by kind.
type PermissionRequest struct {
	ToolCallID string
	// Options maps each option's kind (allow_once, reject_once …) to its optionId.
	Options map[string]string
}

// ParsePermissionRequest reads the params of a session/request_permission request.
func ParsePermissionRequest(params json.RawMessage) PermissionRequest {
	o := ParseObject(params)
	r := PermissionRequest{ToolCallID: o.Object("toolCall").String("toolCallId"), Options: map[string]string{}}
	for _, raw := range o.Array("options") {
		opt := ParseObject(raw)
		if kind, id := opt.String("kind"), opt.String("optionId"); kind != "" && id != "" {
			if _, seen := r.Options[kind]; !seen {
				r.Options[kind] = id
			}
		}
	}
	return r
}

// The session methods beyond session/new, by the names of their capabilities (loadSession is
// "load"), as SessionMethods lists them.
const (
	SessionLoadMethod   = "load"
	SessionListMethod   = "list"
	SessionForkMethod   = "fork"
	SessionCloseMethod  = "close"
	SessionResumeMethod = "resume"
)

// SessionMethods are the session methods agentCapabilities caps advertise, of load
// (loadSession), list, fork, close and resume (sessionCapabilities), in that order.
func SessionMethods(caps Object) []string {
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
