package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/internal/safeio"
)

// LoadConfig reads an agents config file. It reads the shapes that editors and ACP clients
// already have, so a user can point acpprobe at the file they use:
//
//   - acpprobe's own: {"agents": {"my-agent": {"command": "my-agent", "args": ["--acp"],
//     "env": {"K": "v"}, "cwd": "/src"}}};
//   - acpx's config (~/.acpx/config.json, <project>/.acpxrc.json): the same "agents" object,
//     whose entries may give the whole command line as "argv": ["my-agent", "--acp"]; acpx's
//     other top-level settings (acpxSettings) are acpx's and ignored;
//   - Zed's settings.json: its "agent_servers" object; every other top-level key is one of
//     Zed's settings and ignored.
//
// The file may have comments and trailing commas (JSONC, as Zed's settings have them). An
// entry is named by its key and has Source "config" and Kind "config"; with Registry.With it
// replaces a registry entry of the same id. An entry's "type" is "custom" (or absent): it needs
// "command" (a string: one executable, never split) with optional "args" (strings), or
// "argv"; "registry": the entry is the registry's agent of the same id, with "env" added (Zed
// writes these for agents installed from the ACP registry); "extension": the agent of a Zed
// extension, whose command is in the extension, is skipped. "env" is an object of strings;
// "cwd" (not in agent_servers, which Zed defines without it) a string, taken relative to the
// config file's directory; no ~ or $VAR expansion is done. Zed's editor preferences
// (zedPreferences) are ignored. Any other key is an error that names it, as are a "command"
// with spaces and no "args" that is no existing file (write "argv"), and both "argv" and
// "command". Errors name the file and the entry.
func LoadConfig(path string) ([]Entry, error) {
	b, err := safeio.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("agents config: %w", err)
	}
	return parseConfig(path, b)
}

// acpxSettings are the top-level keys of an acpx config besides "agents" (acpx docs/config.md).
var acpxSettings = []string{"auth", "authPolicy", "defaultAgent", "defaultPermissions", "format", "mcpServers", "nonInteractivePermissions", "timeout", "ttl"}

// zedPreferences are the keys of a Zed agent_servers entry that set the editor's preferences
// for the agent (default mode and model, favourites), not how it is launched.
var zedPreferences = []string{"default_config_options", "default_mode", "default_model", "favorite_config_option_values", "favorite_models"}

// entryKeys are the keys an entry may have in each shape, besides zedPreferences.
var entryKeys = map[string][]string{
	"agents":        {"args", "argv", "command", "cwd", "env", "type"},
	"agent_servers": {"args", "command", "env", "type"},
}

func parseConfig(name string, b []byte) ([]Entry, error) {
	b, err := stripJSONC(trimBOM(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("%s: %s", name, describeJSONError(b, err))
	}
	_, zed := top["agent_servers"]
	if !zed {
		for _, k := range sortedKeys(top) {
			if k != "agents" && !slices.Contains(acpxSettings, k) {
				if hint := didYouMean(k, []string{"agents", "agent_servers"}); hint != "" {
					return nil, fmt.Errorf("%s: unknown top-level key %q%s", name, k, hint)
				}
				if _, ok := top["agents"]; ok {
					return nil, fmt.Errorf("%s: unknown top-level key %q", name, k)
				}
			}
		}
	}
	if _, ok := top["agents"]; !ok && !zed {
		return nil, fmt.Errorf("%s: no \"agents\" object (acpprobe's or acpx's agents config) and no \"agent_servers\" object (Zed's settings)", name)
	}
	dir := filepath.Dir(name)
	var out []Entry
	seen := map[string]bool{} // the ids so far: an id in both shapes is an error
	for _, shape := range []string{"agents", "agent_servers"} {
		raw, ok := top[shape]
		if !ok {
			continue
		}
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' && shape == "agents" {
			return nil, fmt.Errorf("%s: \"agents\" is an array: this looks like a registry index (see LoadFile), not an agents config file", name)
		}
		var agents map[string]json.RawMessage
		if err := json.Unmarshal(raw, &agents); err != nil || agents == nil {
			return nil, fmt.Errorf("%s: %q must be an object of named agents", name, shape)
		}
		for _, id := range sortedKeys(agents) {
			e, ok, err := parseConfigEntry(shape, id, agents[id], dir)
			if err != nil {
				return nil, fmt.Errorf("%s: agent %q: %w", name, id, err)
			}
			if !ok {
				continue
			}
			if seen[id] {
				return nil, fmt.Errorf("%s: agent %q is in both \"agents\" and \"agent_servers\"", name, id)
			}
			seen[id] = true
			e.Origin = name
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// parseConfigEntry reads the entry id of shape ("agents" or "agent_servers"); ok is false for
// an entry that is skipped (a Zed extension's agent).
func parseConfigEntry(shape, id string, raw json.RawMessage, dir string) (Entry, bool, error) {
	if strings.TrimSpace(id) == "" {
		return Entry{}, false, fmt.Errorf("an agent name must not be empty")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Entry{}, false, fmt.Errorf("must be an object with a \"command\"")
	}
	known := append(slices.Clone(entryKeys[shape]), zedPreferences...)
	for _, k := range sortedKeys(fields) {
		if !slices.Contains(known, k) {
			return Entry{}, false, fmt.Errorf("unknown key %q%s", k, didYouMean(k, known))
		}
	}
	e := Entry{ID: id, Name: id, Source: SourceConfig, Listed: true}
	env, err := configEnv(fields)
	if err != nil {
		return Entry{}, false, err
	}
	kind := "custom"
	if t, ok := fields["type"]; ok {
		if err := json.Unmarshal(t, &kind); err != nil {
			return Entry{}, false, fmt.Errorf("\"type\" must be a string, got %s", jsonKind(t))
		}
	}
	switch kind {
	case "custom":
	case "registry", "extension":
		for _, k := range []string{"command", "args", "argv", "cwd"} {
			if _, ok := fields[k]; ok {
				return Entry{}, false, fmt.Errorf("\"type\": %q names the %s's agent %q: it takes no %q", kind, kind, id, k)
			}
		}
		if kind == "extension" {
			return Entry{}, false, nil
		}
		e.RegistryRef, e.ExtraEnv = true, env
		return e, true, nil
	default:
		return Entry{}, false, fmt.Errorf("unknown \"type\" %q (want custom, registry or extension)", kind)
	}
	c := &Command{Env: env}
	argv, hasArgv := fields["argv"]
	cmdRaw, hasCommand := fields["command"]
	switch {
	case hasArgv && hasCommand:
		return Entry{}, false, fmt.Errorf("give \"argv\", or \"command\" and \"args\", not both")
	case hasArgv:
		words, err := stringList("argv", argv)
		if err != nil {
			return Entry{}, false, err
		}
		if len(words) == 0 || strings.TrimSpace(words[0]) == "" {
			return Entry{}, false, fmt.Errorf("\"argv\" must not be empty")
		}
		c.Command, c.Args = words[0], words[1:]
	case !hasCommand:
		return Entry{}, false, fmt.Errorf("\"command\" is required (or \"argv\")")
	default:
		if err := json.Unmarshal(cmdRaw, &c.Command); err != nil {
			return Entry{}, false, fmt.Errorf("\"command\" must be a string, got %s", jsonKind(cmdRaw))
		}
		if strings.TrimSpace(c.Command) == "" {
			return Entry{}, false, fmt.Errorf("\"command\" must not be empty")
		}
		if a, ok := fields["args"]; ok && !isNull(a) {
			if c.Args, err = stringList("args", a); err != nil {
				return Entry{}, false, err
			}
		}
	}
	if cw, ok := fields["cwd"]; ok && !isNull(cw) {
		if err := json.Unmarshal(cw, &c.Cwd); err != nil {
			return Entry{}, false, fmt.Errorf("\"cwd\" must be a string, got %s", jsonKind(cw))
		}
		if c.Cwd != "" && !filepath.IsAbs(c.Cwd) {
			c.Cwd = filepath.Join(dir, c.Cwd)
		}
	}
	if _, hasArgs := fields["args"]; hasCommand && !hasArgs && strings.ContainsAny(c.Command, " \t") && !isFile(c.Command, c.Cwd, dir) {
		return Entry{}, false, fmt.Errorf("\"command\" %q is not an executable: it is one, never split, and no file has that name; "+
			"write the command line as \"argv\": [\"…\", …] or as \"command\" and \"args\"", c.Command)
	}
	e.Command = c
	return e, true, nil
}

// configEnv reads an entry's "env": an object of strings with valid variable names.
func configEnv(fields map[string]json.RawMessage) (map[string]string, error) {
	ev, ok := fields["env"]
	if !ok || isNull(ev) {
		return nil, nil
	}
	var vars map[string]json.RawMessage
	if err := json.Unmarshal(ev, &vars); err != nil {
		return nil, fmt.Errorf("\"env\" must be an object of strings, got %s", jsonKind(ev))
	}
	var env map[string]string
	for _, k := range sortedKeys(vars) {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, fmt.Errorf("\"env\" has an invalid variable name %q", k)
		}
		var s string
		if err := json.Unmarshal(vars[k], &s); err != nil {
			return nil, fmt.Errorf("\"env\".%s must be a string, got %s", k, jsonKind(vars[k]))
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = s
	}
	return env, nil
}

// stringList reads the array of strings of key.
func stringList(key string, raw json.RawMessage) ([]string, error) {
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, fmt.Errorf("%q must be an array of strings, got %s", key, jsonKind(raw))
	}
	out := make([]string, 0, len(elems))
	for i, el := range elems {
		var s string
		if err := json.Unmarshal(el, &s); err != nil {
			return nil, fmt.Errorf("%q[%d] must be a string, got %s", key, i, jsonKind(el))
		}
		out = append(out, s)
	}
	return out, nil
}

// isFile says whether cmd names an existing file: as an absolute path, or relative to cwd or
// to the config file's directory.
func isFile(cmd, cwd, dir string) bool {
	candidates := []string{cmd}
	if !filepath.IsAbs(cmd) {
		candidates = []string{filepath.Join(cwd, cmd), filepath.Join(dir, cmd)}
	}
	for _, p := range candidates {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return true
		}
	}
	return false
}

// didYouMean suggests the known key closest to an unknown one, when one is close.
func didYouMean(key string, known []string) string {
	best, dist := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < dist {
			best, dist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// jsonKind names the JSON type of a raw value for error messages.
func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
