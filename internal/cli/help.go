package cli

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
)

// helpWidth is the width help text is wrapped to: help goes to terminals, pipes and files
// alike, and 80 columns read everywhere.
const helpWidth = 80

// helpColumn is where a flag's description starts when its name and value fit before it.
const helpColumn = 28

// printFlags writes fs's flags as a person reads them: sorted, each spelled with two dashes (as
// the README and users write them; one dash works as well), the kind of value it takes, then
// its description, wrapped within helpWidth under one column, and its default when it has one.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var flags []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) { flags = append(flags, f) })
	sort.Slice(flags, func(i, j int) bool { return flags[i].Name < flags[j].Name })
	for _, f := range flags {
		kind, text := flag.UnquoteUsage(f)
		if k, ok := f.Value.(interface{ kind() string }); ok && kind == "value" {
			kind = k.kind()
		}
		name := "  --" + f.Name
		if kind != "" {
			name += " " + kind
		}
		if !isZeroValue(f) {
			if kind == "string" {
				text += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				text += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		lines := wrapWords(text, helpWidth-helpColumn)
		if len(name) <= helpColumn-2 {
			fmt.Fprintf(w, "%-*s%s\n", helpColumn, name, lines[0])
			lines = lines[1:]
		} else {
			fmt.Fprintln(w, name)
		}
		for _, l := range lines {
			fmt.Fprintf(w, "%*s%s\n", helpColumn, "", l)
		}
	}
}

// printSynopsis writes a command's "Usage:" line, wrapped within helpWidth under its start.
func printSynopsis(w io.Writer, synopsis string) {
	const prefix = "Usage: "
	for i, l := range wrapWords(synopsis, helpWidth-len(prefix)) {
		if i == 0 {
			fmt.Fprintln(w, prefix+l)
		} else {
			fmt.Fprintf(w, "%*s%s\n", len(prefix), "", l)
		}
	}
}

// printCommands writes the command list, names in one column as wide as the longest.
func printCommands(w io.Writer, cs []command) {
	width := 0
	for _, c := range cs {
		width = max(width, len(c.name))
	}
	for _, c := range cs {
		lines := wrapWords(c.summary, helpWidth-width-4)
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%*s%s\n", width+4, "", l)
		}
	}
}

// wrapWords cuts text at spaces into lines of at most width runes (a longer word stands alone
// on its line). It returns at least one line.
func wrapWords(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	return append(lines, line)
}

// isZeroValue reports whether f's default is its type's zero value (package flag does not
// print those, and neither does printFlags).
func isZeroValue(f *flag.Flag) (zero bool) {
	defer func() {
		if recover() != nil { // a Value whose String needs more than its zero value
			zero = false
		}
	}()
	t := reflect.TypeOf(f.Value)
	var empty reflect.Value
	if t.Kind() == reflect.Pointer {
		empty = reflect.New(t.Elem())
	} else {
		empty = reflect.Zero(t)
	}
	v, ok := empty.Interface().(flag.Value)
	if !ok {
		return f.DefValue == ""
	}
	return f.DefValue == v.String()
}
