package acptest

import (
	"encoding/json"
	"sort"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Persona is the observable behaviour of one agent the reference agent can imitate.
type Persona struct {
	Name        string
	Description string
	// Initialize is the initialize result.
	Initialize json.RawMessage
	// NewSession is the session/new result (with "sessionId" set by the agent) or, when
	// NewSessionError is set, the error it answers instead.
	NewSession      json.RawMessage
	NewSessionError *jsonrpc.Error
	// AfterNewSession are session/update payloads ("update" objects) sent after a session
	// is created.
	AfterNewSession []json.RawMessage
	// Methods maps an optional method to how it answers; a method absent here answers -32601.
	Methods map[string]Behaviour
	// IDLast writes responses with "id" as the last key (as codex-acp does).
	IDLast bool
	// PromptErrors is how invalid session/prompt params are worded (Style…).
	PromptErrors string
	// Notifications are extension notifications ({method, params}) sent after a session is
	// created, after AfterNewSession.
	Notifications []Notification
	// Model makes session/prompt a real prompt turn against a model over HTTP (Anthropic
	// Messages at $ANTHROPIC_BASE_URL, see model.go), with tools, permissions, cancel, MCP
	// servers and sessions that load, list, resume, fork and close. Such a persona handles
	// session/new, session/prompt and the session methods itself.
	Model bool
}

// Notification is a notification a persona sends on its own.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Behaviour is how a persona answers an optional method.
type Behaviour int

// Behaviours of optional methods.
const (
	// Works: the method is implemented; on an unknown session it answers the persona's
	// unknown-session error (-32002 resource not found).
	Works Behaviour = iota + 1
	// NeedsAuth: the method answers -32000 authentication required.
	NeedsAuth
	// InvalidParamsOnUnknown: implemented, but an unknown session is -32602 (gemini-style).
	InvalidParamsOnUnknown
)

var personas = map[string]*Persona{
	"claude": {
		Name:        "claude",
		Description: "modelled on @zed-industries/claude-agent-acp: config options (mode, model), legacy models and modes, loadSession, fork/list/resume/close, _meta.claudeCode",
		Initialize: raw(`{"protocolVersion":1,"agentCapabilities":{"_meta":{"claudeCode":{"promptQueueing":true}},` +
			`"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},` +
			`"loadSession":true,"sessionCapabilities":{"fork":{},"list":{},"resume":{},"close":{}}},` +
			`"agentInfo":{"name":"acptest-claude","title":"acpprobe reference agent (claude persona)","version":"0.1.0"},"authMethods":[]}`),
		NewSession: raw(`{"modes":{"currentModeId":"default","availableModes":[` +
			`{"id":"default","name":"Default","description":"Standard behavior, prompts for dangerous operations"},` +
			`{"id":"acceptEdits","name":"Accept Edits","description":"Auto-accept file edit operations"},` +
			`{"id":"plan","name":"Plan Mode","description":"Planning mode, no actual tool execution"},` +
			`{"id":"bypassPermissions","name":"Bypass Permissions","description":"Bypass all permission checks"}]},` +
			`"models":{"currentModelId":"default","availableModels":[` +
			`{"modelId":"default","name":"Default (recommended)","description":"Use the default model"},` +
			`{"modelId":"opus","name":"Opus","description":"Most capable for complex work"},` +
			`{"modelId":"haiku","name":"Haiku","description":"Fastest for quick answers"}]},` +
			`"configOptions":[` +
			`{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default","options":[` +
			`{"value":"default","name":"Default"},{"value":"acceptEdits","name":"Accept Edits"},{"value":"plan","name":"Plan Mode"},{"value":"bypassPermissions","name":"Bypass Permissions"}]},` +
			`{"id":"model","name":"Model","category":"model","type":"select","currentValue":"default","options":[` +
			`{"value":"default","name":"Default (recommended)","description":"Use the default model"},` +
			`{"value":"opus","name":"Opus","description":"Most capable for complex work"},` +
			`{"value":"haiku","name":"Haiku","description":"Fastest for quick answers"}]}]}`),
		AfterNewSession: []json.RawMessage{raw(`{"sessionUpdate":"available_commands_update","availableCommands":[` +
			`{"name":"compact","description":"Clear conversation history but keep a summary in context"},` +
			`{"name":"review","description":"Review a pull request","input":{"hint":"pull request number"}}]}`)},
		Methods: map[string]Behaviour{
			"session/set_config_option": Works, "session/set_mode": Works, "session/set_model": Works,
			"session/load": Works, "session/resume": Works, "session/fork": Works, "session/list": Works, "session/close": Works,
		},
		PromptErrors: StyleZodTree,
	},
	"codex": {
		Name:        "codex",
		Description: "modelled on @zed-industries/codex-acp before login: chatgpt and env_var auth methods, session/new -32000, unknown session -32002, id as the last key",
		Initialize: raw(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,` +
			`"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":false,"acp":false},` +
			`"sessionCapabilities":{"list":{},"resume":{},"close":{}},"auth":{"logout":{}}},"authMethods":[` +
			`{"id":"chatgpt","name":"Login with ChatGPT","description":"Use your ChatGPT login with Codex CLI (requires a paid ChatGPT subscription)"},` +
			`{"type":"env_var","id":"codex-api-key","name":"Use CODEX_API_KEY","description":"Requires setting the CODEX_API_KEY environment variable.","vars":[{"name":"CODEX_API_KEY"}]},` +
			`{"type":"env_var","id":"openai-api-key","name":"Use OPENAI_API_KEY","description":"Requires setting the OPENAI_API_KEY environment variable.","vars":[{"name":"OPENAI_API_KEY"}]}],` +
			`"agentInfo":{"name":"acptest-codex","title":"acpprobe reference agent (codex persona)","version":"0.1.0"}}`),
		NewSessionError: &jsonrpc.Error{Code: jsonrpc.CodeAuthRequired, Message: "Authentication required"},
		Methods: map[string]Behaviour{
			"session/set_config_option": Works, "session/set_mode": Works, "session/close": Works,
			"session/load": NeedsAuth, "session/resume": NeedsAuth, "session/list": NeedsAuth,
		},
		IDLast:       true,
		PromptErrors: StyleSerde,
	},
	"gemini": {
		Name:        "gemini",
		Description: "modelled on @google/gemini-cli --acp, logged in: four auth methods with _meta, audio prompts, modes but no config options (set_config_option is -32601)",
		Initialize: raw(`{"protocolVersion":1,"authMethods":[` +
			`{"id":"oauth-personal","name":"Log in with Google","description":"Log in with your Google account"},` +
			`{"id":"gemini-api-key","name":"Gemini API key","description":"Use an API key with Gemini Developer API","_meta":{"api-key":{"provider":"google"}}},` +
			`{"id":"vertex-ai","name":"Vertex AI","description":"Use an API key with Vertex AI GenAI API"},` +
			`{"id":"gateway","name":"AI API Gateway","description":"Use a custom AI API Gateway","_meta":{"gateway":{"protocol":"google","restartRequired":"false"}}}],` +
			`"agentInfo":{"name":"acptest-gemini","title":"acpprobe reference agent (gemini persona)","version":"0.1.0"},` +
			`"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true}}}`),
		NewSession: raw(`{"modes":{"currentModeId":"default","availableModes":[` +
			`{"id":"default","name":"Default","description":"Prompts for approval"},` +
			`{"id":"autoEdit","name":"Auto Edit","description":"Auto-approves edit tools"},` +
			`{"id":"yolo","name":"YOLO","description":"Auto-approves all tools"}]}}`),
		Methods: map[string]Behaviour{
			"session/set_mode": InvalidParamsOnUnknown, "session/set_model": InvalidParamsOnUnknown, "session/load": Works,
		},
		PromptErrors: StyleZodUnion,
	},
	"codebuddy": {
		Name:        "codebuddy",
		Description: "modelled on CodeBuddy Code (codebuddy --acp): codebuddy.ai _meta keys, public and one private (runtimeSessionBindingV2), _codebuddy.ai/* notifications, zod-union prompt errors",
		Initialize: raw(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},` +
			`"mcpCapabilities":{"http":true,"sse":false}},"authMethods":[],` +
			`"agentInfo":{"name":"acptest-codebuddy","title":"acpprobe reference agent (codebuddy persona)","version":"0.1.0"},` +
			`"_meta":{"codebuddy.ai/runtimeAdmission":{"schemaVersion":2,"profile":"cbc-headless"}}}`),
		NewSession: raw(`{"modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default"},{"id":"plan","name":"Plan"}]},` +
			`"_meta":{"codebuddy.ai/requestId":"req-1","codebuddy.ai/runtimeSessionBindingV2":{"ownerId":"owner-1","sessionGeneration":1}}}`),
		AfterNewSession: []json.RawMessage{raw(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"init","description":"Create CODEBUDDY.md"}],` +
			`"_meta":{"codebuddy.ai/agentPhase":"idle"}}`)},
		Notifications: []Notification{{Method: "_codebuddy.ai/system_init", Params: raw(`{"tools":["Read","Edit"],"_meta":{"codebuddy.ai/runId":"run-1"}}`)}},
		Methods: map[string]Behaviour{
			"session/set_mode": Works, "session/load": Works,
		},
		PromptErrors: StyleZodUnion,
	},
	"model": {
		Name: "model",
		Description: "modelled on claude-agent-acp's prompt turn: calls an Anthropic Messages model at $ANTHROPIC_BASE_URL (loopback only), " +
			"Write (with permission in mode ask, without in mode auto) and Read tools, MCP tools, mode, model and thought_level options, cancel, sessions that load/list/resume/fork/close",
		Initialize: raw(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,` +
			`"promptCapabilities":{"image":true,"audio":false,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},` +
			`"sessionCapabilities":{"list":{},"resume":{},"close":{},"fork":{}}},"authMethods":[],` +
			`"agentInfo":{"name":"acptest-model","title":"acpprobe reference agent (model persona)","version":"0.1.0"}}`),
		NewSession: raw(`{"configOptions":[` +
			`{"id":"model","name":"Model","category":"model","type":"select","currentValue":"` + defaultModel + `","options":[` +
			`{"value":"acptest-small","name":"Small","description":"The default model"},` +
			`{"value":"acptest-large","name":"Large","description":"The larger model"}]},` +
			`{"id":"thought_level","name":"Thinking","category":"thought_level","type":"select","currentValue":"` + defaultEffort + `","options":[` +
			`{"value":"low","name":"Low"},{"value":"medium","name":"Medium"},{"value":"high","name":"High"}]},` +
			`{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask","options":[` +
			`{"value":"ask","name":"Ask","description":"Asks before every file write"},` +
			`{"value":"auto","name":"Auto","description":"Writes files without asking"}]}]}`),
		Methods: map[string]Behaviour{
			"session/set_config_option": Works, "session/load": Works, "session/resume": Works, "session/fork": Works,
			"session/list": Works, "session/close": Works,
		},
		Model: true,
	},
	"minimal": {
		Name:        "minimal",
		Description: "only the required fields: protocolVersion in initialize, sessionId in session/new, nothing optional",
		Initialize:  raw(`{"protocolVersion":1}`),
		NewSession:  raw(`{}`),
	},
}

func raw(s string) json.RawMessage {
	if !json.Valid([]byte(s)) {
		panic("acptest: invalid persona JSON: " + s)
	}
	return json.RawMessage(s)
}

// PersonaNames lists the personas in alphabetical order.
func PersonaNames() []string {
	names := make([]string, 0, len(personas))
	for n := range personas {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LookupPersona returns the named persona.
func LookupPersona(name string) (*Persona, bool) {
	p, ok := personas[name]
	return p, ok
}
