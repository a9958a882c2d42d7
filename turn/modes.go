package turn

import (
	"context"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/probe"
	"github.com/acpprobe/acpprobe/record"
)

// sessionMode is one mode a session can be put in, and how.
type sessionMode struct {
	record.PermissionRunInfo
	// set selects the mode (nil for the mode the session is in).
	set func(ctx context.Context, s *probe.Session, id string) bool
}

// modesOf lists the modes of a session (its session/new result): the values of its mode
// config option when it has one (set with session/set_config_option), else its modes (set
// with session/set_mode). Each says whether it promises to ask and whether it is the mode the
// session started in.
func modesOf(result acp.SessionResult) []sessionMode {
	var out []sessionMode
	if opt := acp.ModeOption(result.ConfigOptions); opt != nil {
		for _, v := range opt.Options {
			m := sessionMode{PermissionRunInfo: record.PermissionRunInfo{Mode: v.Value, Name: v.Name, Description: v.Description,
				Asks: acp.PromisesToAsk(v.Value, v.Name, v.Description), Default: v.Value == opt.Current()}}
			if !m.Default {
				configID := opt.ID
				m.SetBy = acp.MethodSetConfigOption
				m.set = func(ctx context.Context, s *probe.Session, id string) bool {
					return call(ctx, s, s.RequestTimeout, acp.MethodSetConfigOption, map[string]any{"sessionId": id, "configId": configID, "value": v.Value}) != nil
				}
			}
			out = append(out, m)
		}
		return out
	}
	for _, mode := range result.Modes {
		m := sessionMode{PermissionRunInfo: record.PermissionRunInfo{Mode: mode.ID, Name: mode.Name, Description: mode.Description,
			Asks: acp.PromisesToAsk(mode.ID, mode.Name, mode.Description), Default: mode.ID == result.CurrentModeID}}
		if !m.Default {
			modeID := mode.ID
			m.SetBy = acp.MethodSetMode
			m.set = func(ctx context.Context, s *probe.Session, id string) bool {
				return call(ctx, s, s.RequestTimeout, acp.MethodSetMode, map[string]any{"sessionId": id, "modeId": modeID}) != nil
			}
		}
		out = append(out, m)
	}
	return out
}

// askingMode is the mode a permission run that must be asked runs in: the default mode when it
// promises to ask, else the first that does; else the default mode (the run then shows what
// the agent does by default, and an unasked write is no violation). ok is false for an agent
// without modes.
func askingMode(modes []sessionMode) (sessionMode, bool) {
	var def *sessionMode
	for i := range modes {
		if modes[i].Default {
			def = &modes[i]
			if modes[i].Asks {
				return modes[i], true
			}
		}
	}
	for _, m := range modes {
		if m.Asks {
			return m, true
		}
	}
	if def != nil {
		return *def, true
	}
	return sessionMode{}, false
}

// defaultMode is the mode a session starts in (ok false without modes).
func defaultMode(modes []sessionMode) (sessionMode, bool) {
	for _, m := range modes {
		if m.Default {
			return m, true
		}
	}
	return sessionMode{}, false
}
