package render

import (
	"regexp"
	"strings"
	"sync"
)

// Message is s made fit for the one line that says why a command failed: Go's wording of a
// JSON decoding error put in JSON terms (no Go type names), then cleaned (Clean), since an
// error may quote an agent or a file. cli.printError writes every error line through it.
func Message(s string) string {
	return Clean(strings.TrimSpace(jsonTerms(s)))
}

// goJSONError is encoding/json's message for a value of the wrong type: "json: cannot
// unmarshal string into Go struct field Event.seq of type int64", or "… into Go value of type
// T". The type runs to the end of the message.
var goJSONError = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field (\S*)|value) of type (.+)$`)
})

// jsonTerms rewrites encoding/json's message for a value of the wrong type as "FIELD: got JSON
// X, want Y" (the field as a JSON path, without the Go struct that holds it), or "got JSON X,
// want Y" at the top.
func jsonTerms(s string) string {
	m := goJSONError().FindStringSubmatchIndex(s)
	if m == nil {
		return s
	}
	got, field, goType := s[m[2]:m[3]], "", s[m[6]:m[7]]
	if m[4] >= 0 {
		field = s[m[4]:m[5]]
		if i := strings.IndexByte(field, '.'); i >= 0 {
			field = field[i+1:] // drop the Go struct's name
		}
	}
	text := "got JSON " + got + ", want " + jsonKind(goType)
	if field != "" {
		text = field + ": " + text
	}
	return s[:m[0]] + text
}

// jsonKind names the JSON a Go type decodes from, as far as its name tells.
func jsonKind(goType string) string {
	goType = strings.TrimLeft(goType, "*")
	switch {
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	case strings.HasPrefix(goType, "["):
		return "an array"
	case strings.HasPrefix(goType, "map["), strings.HasPrefix(goType, "struct"):
		return "an object"
	}
	return "another type" // a named type: its name is Go's, not the document's
}
