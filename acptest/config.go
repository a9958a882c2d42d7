package acptest

// The persona's session/new answer and its config options: the values a session starts with,
// and session/set_config_option, which answers the whole list with the new current values.

import (
	"encoding/json"
	"fmt"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// newSession registers a session with the persona's default config and answers session/new
// with the persona's result and the session's id.
func (a *agent) newSession() json.RawMessage {
	a.nextID++
	sid := fmt.Sprintf("%s-session-%d", a.p.Name, a.nextID)
	s := &session{config: a.defaultConfig()}
	a.sessions[sid] = s
	obj := acp.ParseObject(a.p.NewSession)
	if obj == nil {
		obj = acp.Object{}
	}
	obj["sessionId"], _ = json.Marshal(sid)
	out, _ := json.Marshal(obj)
	return out
}

// defaultConfig is the current value of each of the persona's config options.
func (a *agent) defaultConfig() map[string]string {
	config := map[string]string{}
	for _, o := range acp.ParseSessionResult(a.p.NewSession).ConfigOptions {
		config[o.ID] = o.Current()
	}
	if _, ok := config["mode"]; ok && a.cfg.AutoByDefault {
		config["mode"] = "auto"
	}
	return config
}

// setConfigOption accepts a value the option offers, records it in config and answers the
// complete option list.
func (a *agent) setConfigOption(config map[string]string, params acp.Object) (json.RawMessage, *jsonrpc.Error) {
	opts := acp.ParseSessionResult(a.p.NewSession).ConfigOptions
	id, value := params.String("configId"), params.String("value")
	for _, o := range opts {
		if o.ID != id {
			continue
		}
		values := o.Values()
		for i, v := range values {
			if v == value && a.cfg.RefuseLastValue && i == len(values)-1 {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params"}
			}
			if v == value {
				config[id] = value
				out, _ := json.Marshal(map[string]any{"configOptions": a.configOptions(config)})
				return out, nil
			}
		}
		return nil, invalidParams(fmt.Sprintf("%q is not a value of %s", value, id))
	}
	return nil, invalidParams("unknown config option " + id)
}

// configOptions is the persona's option list with the current values of config.
func (a *agent) configOptions(config map[string]string) []map[string]any {
	list := []map[string]any{}
	for _, o := range acp.ParseObject(a.p.NewSession).Array("configOptions") {
		var m map[string]any
		_ = json.Unmarshal(o, &m)
		if cur, ok := config[fmt.Sprint(m["id"])]; ok {
			m["currentValue"] = cur
		}
		list = append(list, m)
	}
	return list
}
