package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/acpprobe/acpprobe/internal/safeio"
)

// LoadConfig reads an agents config file, the shape editors use for custom agent servers:
//
//	{"agents": {"my-agent": {"command": "my-agent", "args": ["--acp"], "env": {"K": "v"}, "cwd": "/src"}}}
//
// Each entry becomes an Entry with Source "config" and Kind "config", named by its key; with
// Registry.With it replaces a registry entry of the same id. "command" is required; "args"
// must be an array of strings, "env" an object of strings, "cwd" a string (a relative cwd is
// taken relative to the config file's directory; no ~ or $VAR expansion is done). Other keys
// of an entry, which editors use for their own settings, are ignored. Errors name the file
// and the entry.
func LoadConfig(path string) ([]Entry, error) {
	b, err := safeio.ReadFile(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("agents config: %w", err)
	}
	return parseConfig(path, b)
}

func parseConfig(name string, b []byte) ([]Entry, error) {
	b = trimBOM(b)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("%s: %s", name, describeJSONError(b, err))
	}
	raw, ok := top["agents"]
	if !ok {
		return nil, fmt.Errorf("%s: no \"agents\" object", name)
	}
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '[' {
		return nil, fmt.Errorf("%s: \"agents\" is an array: this looks like a registry index (see LoadFile), not an agents config file", name)
	}
	var agents map[string]json.RawMessage
	if err := json.Unmarshal(raw, &agents); err != nil || agents == nil {
		return nil, fmt.Errorf("%s: \"agents\" must be an object of named agents", name)
	}
	dir := filepath.Dir(name)
	out := make([]Entry, 0, len(agents))
	for _, id := range sortedKeys(agents) {
		e, err := parseConfigEntry(id, agents[id], dir)
		if err != nil {
			return nil, fmt.Errorf("%s: agent %q: %w", name, id, err)
		}
		e.Origin = name
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func parseConfigEntry(id string, raw json.RawMessage, dir string) (Entry, error) {
	if strings.TrimSpace(id) == "" {
		return Entry{}, fmt.Errorf("an agent name must not be empty")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return Entry{}, fmt.Errorf("must be an object with a \"command\"")
	}
	c := &Command{}
	cmdRaw, ok := fields["command"]
	if !ok {
		return Entry{}, fmt.Errorf("\"command\" is required")
	}
	if err := json.Unmarshal(cmdRaw, &c.Command); err != nil {
		return Entry{}, fmt.Errorf("\"command\" must be a string, got %s", jsonKind(cmdRaw))
	}
	if strings.TrimSpace(c.Command) == "" {
		return Entry{}, fmt.Errorf("\"command\" must not be empty")
	}
	if a, ok := fields["args"]; ok && !isNull(a) {
		var elems []json.RawMessage
		if err := json.Unmarshal(a, &elems); err != nil {
			return Entry{}, fmt.Errorf("\"args\" must be an array of strings, got %s", jsonKind(a))
		}
		for i, el := range elems {
			var s string
			if err := json.Unmarshal(el, &s); err != nil {
				return Entry{}, fmt.Errorf("\"args\"[%d] must be a string, got %s", i, jsonKind(el))
			}
			c.Args = append(c.Args, s)
		}
	}
	if ev, ok := fields["env"]; ok && !isNull(ev) {
		var vars map[string]json.RawMessage
		if err := json.Unmarshal(ev, &vars); err != nil {
			return Entry{}, fmt.Errorf("\"env\" must be an object of strings, got %s", jsonKind(ev))
		}
		for _, k := range sortedKeys(vars) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return Entry{}, fmt.Errorf("\"env\" has an invalid variable name %q", k)
			}
			var s string
			if err := json.Unmarshal(vars[k], &s); err != nil {
				return Entry{}, fmt.Errorf("\"env\".%s must be a string, got %s", k, jsonKind(vars[k]))
			}
			if c.Env == nil {
				c.Env = map[string]string{}
			}
			c.Env[k] = s
		}
	}
	if cw, ok := fields["cwd"]; ok && !isNull(cw) {
		if err := json.Unmarshal(cw, &c.Cwd); err != nil {
			return Entry{}, fmt.Errorf("\"cwd\" must be a string, got %s", jsonKind(cw))
		}
		if c.Cwd != "" && !filepath.IsAbs(c.Cwd) {
			c.Cwd = filepath.Join(dir, c.Cwd)
		}
	}
	return Entry{
		ID:      id,
		Name:    id,
		Command: c,
		Source:  SourceConfig,
		Listed:  true,
	}, nil
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
