package render

import "testing"

// TestMessage: an error line names JSON types, never Go's, and shows controls escaped.
func TestMessage(t *testing.T) {
	for in, want := range map[string]string{
		"cannot read: t.ndjson: line 2: json: cannot unmarshal string into Go struct field Event.seq of type int64": "cannot read: t.ndjson: line 2: seq: got JSON string, want a number",
		"r.json: json: cannot unmarshal string into Go struct field AgentRef.agent.argv of type []string":           "r.json: agent.argv: got JSON string, want an array",
		`not JSON: json: cannot unmarshal array into Go value of type struct { Schema string "json:\"schema\"" }`:   "not JSON: got JSON array, want an object",
		"json: cannot unmarshal number into Go struct field .schema of type string":                                 "schema: got JSON number, want a string",
		"json: cannot unmarshal object into Go value of type probe.Result":                                          "got JSON object, want another type",
		"json: cannot unmarshal string into Go struct field Options.x.on of type bool":                              "x.on: got JSON string, want a boolean",
		"json: cannot unmarshal array into Go struct field R.m of type map[string]int":                              "m: got JSON array, want an object",
		"  the agent said \x1b[2J\n": `the agent said \x1b[2J`,
	} {
		if got := Message(in); got != want {
			t.Errorf("Message(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}
