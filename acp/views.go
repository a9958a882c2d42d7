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
	// CurrentValue is verbatim: a string for select options, a boolean for boolean options.
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
