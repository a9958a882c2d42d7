// Package clientprofile holds the client profiles: what acpprobe says it is in initialize
// (clientInfo) and what it claims to support (clientCapabilities), as a real host does. Some
// agents show a richer client more (a gateway login to a client that declares
// auth._meta.gateway, terminal logins to one that runs them, JetBrains AIR's extension
// family to AIR): probing as each host is how a host learns what it will be shown.
//
// The built-in profiles are data files (profiles/*.json, embedded), each fact with its
// source; a user's own host is a file of the same form (Load). A profile only changes what
// acpprobe claims: whatever it declares, the probe still serves no file and no terminal and
// declines every elicitation (Answers says so for the report).
package clientprofile

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acp/schema"
	"github.com/acpprobe/acpprobe/internal/safeio"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// Default is the profile used unless one is chosen: acpprobe's own, every capability false.
const Default = "minimal"

// MaxFileSize bounds a profile file a user hands acpprobe.
const MaxFileSize = 64 << 10

// Profile is one client: its clientInfo and clientCapabilities, and where each fact comes from.
type Profile struct {
	// Name names the profile (a built-in's, or the one its file gives).
	Name        string `json:"name"`
	Description string `json:"description"`
	// ClientInfo is the host's clientInfo; nil means acpprobe's own (name acpprobe, the build's
	// version).
	ClientInfo *acp.Implementation `json:"clientInfo,omitempty"`
	// ClientCapabilities is sent as initialize's clientCapabilities, as it is.
	ClientCapabilities json.RawMessage `json:"clientCapabilities"`
	// Sources say where each fact of the profile comes from (at least one).
	Sources []Source `json:"sources"`
	// File is the path a user's profile was read from ("" for a built-in one).
	File string `json:"-"`
}

// Source is where one fact of a profile comes from.
type Source struct {
	Fact   string `json:"fact"`
	Source string `json:"source"`
}

//go:embed profiles/*.json
var builtinFiles embed.FS

// order is the built-in profiles from the poorest client to the richest.
var order = []string{"minimal", "zed", "jetbrains", "gateway", "full"}

// builtins are the embedded profiles, decoded and validated on first use (a broken file is
// a build defect: TestBuiltinProfiles).
var builtins = sync.OnceValue(func() map[string]Profile {
	m := map[string]Profile{}
	for _, name := range order {
		data, err := builtinFiles.ReadFile("profiles/" + name + ".json")
		if err != nil {
			panic(err)
		}
		p, err := Parse(data)
		if err != nil {
			panic(fmt.Sprintf("clientprofile: built-in profile %s: %v", name, err))
		}
		m[name] = p
	}
	return m
})

// Names are the built-in profiles' names, poorest client first.
func Names() []string { return slices.Clone(order) }

// Get is the built-in profile name.
func Get(name string) (Profile, bool) {
	p, ok := builtins()[name]
	return p, ok
}

// Gateway is the built-in gateway profile's clientCapabilities: a client that accepts gateway
// logins and claims nothing else (turn's gateway route).
func Gateway() json.RawMessage {
	p, _ := Get("gateway")
	return p.ClientCapabilities
}

// ErrUnknown is a profile name that is neither built in nor a file.
var ErrUnknown = errors.New("unknown client profile")

// ErrList is a list of profiles that names one twice or none between two commas.
var ErrList = errors.New("bad list of client profiles")

// Load is the profile arg names: a built-in profile's name, or the path of a profile file (a
// name with a slash or ending in .json), read as untrusted input and validated.
func Load(arg string) (Profile, error) {
	if p, ok := Get(arg); ok {
		return p, nil
	}
	if !strings.Contains(arg, "/") && path.Ext(arg) != ".json" {
		return Profile{}, fmt.Errorf("%w %q (built in: %s; or the path of a profile file, e.g. ./myhost.json)",
			ErrUnknown, arg, strings.Join(order, ", "))
	}
	data, err := safeio.ReadFile(arg, MaxFileSize)
	if err != nil {
		return Profile{}, err
	}
	p, err := Parse(data)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: %w", arg, err)
	}
	if _, ok := Get(p.Name); ok {
		return Profile{}, fmt.Errorf("%s: name %q is a built-in profile's: give your host a name of its own", arg, p.Name)
	}
	p.File = arg
	return p, nil
}

// LoadList is the profiles of a comma-separated list (each as Load reads it), in its order;
// a profile named twice is an error.
func LoadList(list string) ([]Profile, error) {
	var out []Profile
	seen := map[string]bool{}
	for arg := range strings.SplitSeq(list, ",") {
		arg = strings.TrimSpace(arg)
		if arg == "" {
			return nil, fmt.Errorf("%w: empty profile name in %q", ErrList, list)
		}
		p, err := Load(arg)
		if err != nil {
			return nil, err
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("%w: profile %q named twice", ErrList, p.Name)
		}
		seen[p.Name] = true
		out = append(out, p)
	}
	return out, nil
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`) })

// Parse decodes and validates a profile file: known keys only, a name of lower-case letters,
// digits, '.', '_' and '-', a clientInfo (when given) with a name and a version,
// clientCapabilities valid against the ACP schema's ClientCapabilities, and a source for it.
func Parse(data []byte) (Profile, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Profile
	if err := dec.Decode(&p); err != nil {
		return Profile{}, fmt.Errorf("not a client profile: %w", err)
	}
	if dec.More() {
		return Profile{}, errors.New("not a client profile: more than one JSON value")
	}
	switch {
	case !nameRE().MatchString(p.Name):
		return Profile{}, fmt.Errorf("name %q: want 1 to 64 of a-z 0-9 . _ -, starting with a letter or digit", p.Name)
	case p.ClientInfo != nil && (p.ClientInfo.Name == "" || p.ClientInfo.Version == ""):
		return Profile{}, errors.New("clientInfo needs a name and a version (the ACP schema's Implementation)")
	case len(p.Sources) == 0:
		return Profile{}, errors.New("sources: say where the profile's facts come from (at least one {\"fact\",\"source\"})")
	}
	for i, s := range p.Sources {
		if strings.TrimSpace(s.Fact) == "" || strings.TrimSpace(s.Source) == "" {
			return Profile{}, fmt.Errorf("sources[%d]: needs a fact and a source", i)
		}
	}
	var caps map[string]any
	if err := json.Unmarshal(p.ClientCapabilities, &caps); err != nil || caps == nil {
		return Profile{}, errors.New("clientCapabilities: want a JSON object")
	}
	set, err := schema.Load(schema.Default)
	if err != nil {
		return Profile{}, err
	}
	violations, err := set.Validate("ClientCapabilities", p.ClientCapabilities)
	if err != nil {
		return Profile{}, err
	}
	if len(violations) > 0 {
		msgs := make([]string, 0, len(violations))
		for _, v := range violations {
			msgs = append(msgs, cmp.Or(v.Pointer, "/")+": "+v.Message)
		}
		return Profile{}, fmt.Errorf("clientCapabilities is not the ACP schema's ClientCapabilities: %s", strings.Join(msgs, "; "))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, p.ClientCapabilities); err != nil {
		return Profile{}, err
	}
	p.ClientCapabilities = compact.Bytes()
	return p, nil
}

// Declared names what the profile's clientCapabilities declare, in dotted paths, sorted: a
// member that is true or an empty object ({} opts in), or the object holding any other value
// (_meta.jetbrains.air for AIR's declaration object). False, null and absent declare nothing.
func (p Profile) Declared() []string {
	var v any
	if json.Unmarshal(p.ClientCapabilities, &v) != nil {
		return nil
	}
	seen := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && prefix != "" {
				seen[prefix] = true
			}
			for k, m := range x {
				walk(join(prefix, k), m)
			}
		case bool:
			if x {
				seen[prefix] = true
			}
		case nil:
		default: // a number, a string, an array: the object holding it is the declaration
			if i := strings.LastIndexByte(prefix, '.'); i > 0 {
				seen[prefix[:i]] = true
			}
		}
	}
	walk("", v)
	out := make([]string, 0, len(seen))
	for k := range seen {
		// A declaration inside another one says nothing more (air's own members).
		if !seen[parentOf(k, seen)] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// parentOf is the nearest proper prefix of k that is declared too ("" when none is).
func parentOf(k string, seen map[string]bool) string {
	for i := strings.LastIndexByte(k, '.'); i > 0; i = strings.LastIndexByte(k[:i], '.') {
		if seen[k[:i]] {
			return k[:i]
		}
	}
	return ""
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// Answers says, for each declared capability the agent could ask the client to use, what the
// probe answers instead of serving it: the promise that a richer profile stays harmless.
func (p Profile) Answers() []report.ClientAnswer {
	out := []report.ClientAnswer{}
	for _, c := range p.Declared() {
		switch {
		case strings.HasPrefix(c, "fs.") || c == "fs":
			out = append(out, report.ClientAnswer{Capability: c, Answer: "refused (-32601): acpprobe reads and writes no file for the agent"})
		case c == "terminal":
			out = append(out, report.ClientAnswer{Capability: c, Answer: "refused (-32601): acpprobe runs no command for the agent"})
		case c == "elicitation" || strings.HasPrefix(c, "elicitation."):
			out = append(out, report.ClientAnswer{Capability: c, Answer: "declined (action decline): acpprobe asks the user nothing and opens no URL"})
		case c == "auth.terminal" || c == "_meta.terminal-auth" || c == "auth._meta.gateway":
			out = append(out, report.ClientAnswer{Capability: c, Answer: "never used: probe and check log in with no method (turn uses only its own emulator's gateway)"})
		}
	}
	return out
}

// Section is the report's account of a run as this profile (report.Result.Client): what
// frames' first initialize request declared (the profile's capabilities, or more: turn's
// gateway route adds auth._meta.gateway), or the profile's own when frames have none.
func (p Profile) Section(frames []jsonrpc.Frame) *report.Client {
	if sent := sentCapabilities(frames); sent != nil {
		p.ClientCapabilities = sent
	}
	return &report.Client{Profile: p.Name, File: p.File, Declared: p.Declared(), Answers: p.Answers()}
}

// sentCapabilities is the clientCapabilities of the first initialize request the client wrote
// (nil when there is none).
func sentCapabilities(frames []jsonrpc.Frame) json.RawMessage {
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == acp.MethodInitialize && f.Msg.Kind() == jsonrpc.Request {
			var params struct {
				ClientCapabilities json.RawMessage `json:"clientCapabilities"`
			}
			if json.Unmarshal(f.Msg.Params, &params) != nil || len(params.ClientCapabilities) == 0 {
				return nil
			}
			return params.ClientCapabilities
		}
	}
	return nil
}

// WithGateway is caps (the minimal client's when nil) also declaring auth._meta.gateway: a
// profile's host that accepts the agent's gateway login (turn's gateway route).
func WithGateway(caps json.RawMessage) json.RawMessage {
	var m map[string]any
	if json.Unmarshal(caps, &m) != nil || m == nil {
		return Gateway()
	}
	auth, _ := m["auth"].(map[string]any)
	if auth == nil {
		auth = map[string]any{}
	}
	meta, _ := auth["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta["gateway"] = true
	auth["_meta"] = meta
	m["auth"] = auth
	b, err := json.Marshal(m)
	if err != nil {
		return Gateway()
	}
	return b
}
