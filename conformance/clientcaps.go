package conformance

import (
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
)

// clientCaps are the capabilities the client advertised in its initialize request: an
// editor's in a tap record, acpprobe's own (none) in a session it drove. The agent may call a
// client method, or advertise a terminal auth method, only when the client enabled it.
type clientCaps struct {
	readTextFile, writeTextFile, terminal bool
	// authTerminal: clientCapabilities.auth.terminal (v1: true; v2: capabilities.auth.terminal
	// present).
	authTerminal bool
	// elicitation are the elicitation modes advertised (form, url): each is present as an
	// object; {} alone advertises none.
	elicitation map[string]bool
}

// clientCapsOf reads the client's first initialize request (all off when there is none).
func clientCapsOf(x *record.Index) clientCaps {
	ex := x.First(acp.MethodInitialize)
	if ex == nil {
		return clientCaps{}
	}
	params := acp.ParseObject(ex.Request.Msg.Params)
	c := params.Object("clientCapabilities")
	fs := c.Object("fs")
	caps := clientCaps{
		readTextFile:  fs.Bool("readTextFile"),
		writeTextFile: fs.Bool("writeTextFile"),
		terminal:      c.Bool("terminal"),
		authTerminal:  c.Object("auth").Bool("terminal") || params.Object("capabilities").Object("auth").Has("terminal"),
		elicitation:   map[string]bool{},
	}
	el := c.Object("elicitation")
	for _, mode := range []string{"form", "url"} {
		if el.Object(mode) != nil {
			caps.elicitation[mode] = true
		}
	}
	return caps
}

// gate names the client capability a client method needs and whether the client advertised
// it ("" when the method needs none). An elicitation needs the mode it asks for (params.mode).
func (c clientCaps) gate(method string, params acp.Object) (capability string, advertised bool) {
	switch {
	case method == acp.MethodReadTextFile:
		return "fs.readTextFile", c.readTextFile
	case method == acp.MethodWriteTextFile:
		return "fs.writeTextFile", c.writeTextFile
	case strings.HasPrefix(method, "terminal/"):
		return "terminal", c.terminal
	case method == acp.MethodElicitationCreate:
		mode := params.String("mode")
		if mode == "" {
			return "elicitation", len(c.elicitation) > 0
		}
		return "elicitation." + mode, c.elicitation[mode]
	}
	return "", true
}
