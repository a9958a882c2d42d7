package derive

import (
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
)

// ClientCaps are the capabilities the client advertised in its initialize request: an
// editor's in a tap record, acpprobe's own (none) in a session it drove. The agent may call a
// client method, or advertise a terminal auth method, only when the client enabled it.
type ClientCaps struct {
	ReadTextFile, WriteTextFile, Terminal bool
	// AuthTerminal: clientCapabilities.auth.terminal (v1: true; v2: capabilities.auth.terminal
	// present).
	AuthTerminal bool
	// Elicitation are the elicitation modes advertised (form, url): each is present as an
	// object; {} alone advertises none.
	Elicitation map[string]bool
	// Notices and Compaction are the v1 opt-ins to the notice and the compaction session
	// updates (schema >= 1.25.0): clientCapabilities.session.notices and .compaction, each
	// advertised by an object; omitted, null or malformed means unsupported.
	Notices, Compaction bool
}

// clientCapsOf reads the client's first initialize request (all off when there is none).
func clientCapsOf(x *record.Index) ClientCaps {
	ex := x.First(acp.MethodInitialize)
	if ex == nil {
		return ClientCaps{}
	}
	params := acp.ParseObject(ex.Request.Msg.Params)
	c := params.Object("clientCapabilities")
	fs := c.Object("fs")
	caps := ClientCaps{
		ReadTextFile:  fs.Bool("readTextFile"),
		WriteTextFile: fs.Bool("writeTextFile"),
		Terminal:      c.Bool("terminal"),
		AuthTerminal:  c.Object("auth").Bool("terminal") || params.Object("capabilities").Object("auth").Has("terminal"),
		Elicitation:   map[string]bool{},
		Notices:       c.Object("session").Object("notices") != nil,
		Compaction:    c.Object("session").Object("compaction") != nil,
	}
	el := c.Object("elicitation")
	for _, mode := range []string{"form", "url"} {
		if el.Object(mode) != nil {
			caps.Elicitation[mode] = true
		}
	}
	return caps
}

// Gate names the client capability a client method needs and whether the client advertised
// it ("" when the method needs none). An elicitation needs the mode it asks for (params.mode).
func (c ClientCaps) Gate(method string, params acp.Object) (capability string, advertised bool) {
	switch {
	case method == acp.MethodReadTextFile:
		return "fs.readTextFile", c.ReadTextFile
	case method == acp.MethodWriteTextFile:
		return "fs.writeTextFile", c.WriteTextFile
	case strings.HasPrefix(method, "terminal/"):
		return "terminal", c.Terminal
	case method == acp.MethodElicitationCreate:
		mode := params.String("mode")
		if mode == "" {
			return "elicitation", len(c.Elicitation) > 0
		}
		return "elicitation." + mode, c.Elicitation[mode]
	}
	return "", true
}

// UpdateGate names the client capability a v1 session update needs (by its sessionUpdate)
// and whether the client advertised it ("" when the update needs none). The schema says of
// each: "Agents MUST only send this update when the Client advertised" it.
func (c ClientCaps) UpdateGate(sessionUpdate string) (capability string, advertised bool) {
	switch sessionUpdate {
	case "notice":
		return "session.notices", c.Notices
	case "compaction_update", "compaction_summary_chunk":
		return "session.compaction", c.Compaction
	}
	return "", true
}
