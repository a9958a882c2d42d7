package schematable

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Source is a generated Go file of package pkg: header (a "Code generated … DO NOT EDIT."
// line), the imports the tables need and the declarations, formatted.
func Source(header, pkg string, decls ...string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\npackage %s\n\nimport \"github.com/acpprobe/acpprobe/internal/schematable\"\n", header, pkg)
	for _, d := range decls {
		b.WriteString("\n")
		b.WriteString(d)
	}
	return format.Source(b.Bytes())
}

// WriteGenerated is the main function of a generator: generate's source for the package in the
// working directory (go generate runs the generator there) is written to output; an error is
// printed and the program exits with status 1.
func WriteGenerated(output string, generate func(dir string) ([]byte, error)) {
	src, err := generate(".")
	if err == nil {
		err = os.WriteFile(output, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// Current reports why the checked-in dir/output is not what generate(dir) writes, or nil: the
// generators' tests keep the generated files current with it.
func Current(dir, output string, generate func(dir string) ([]byte, error)) error {
	want, err := generate(dir)
	if err != nil {
		return err
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%s is not what the generator writes from its sources: run go generate", output)
	}
	return nil
}

// Literal is the table as a Go expression: schematable.Table{…}.
func (t *Table) Literal() string {
	var b strings.Builder
	q := strconv.Quote
	b.WriteString("schematable.Table{\nDefs: []schematable.Def{\n")
	for _, d := range t.Defs {
		fmt.Fprintf(&b, "{Name: %s, Node: %d},\n", q(d.Name), d.Node)
	}
	b.WriteString("},\nNodes: []schematable.Node{\n")
	for id := 1; id < len(t.Nodes); id++ {
		n := &t.Nodes[id]
		var f []string
		add := func(s string, args ...any) { f = append(f, fmt.Sprintf(s, args...)) }
		add("Loc: %s", q(n.Loc))
		switch n.Boolean {
		case SchemaTrue:
			add("Boolean: schematable.SchemaTrue")
		case SchemaFalse:
			add("Boolean: schematable.SchemaFalse")
		}
		if n.Types != 0 {
			var ts []string
			for i, name := range typeNames {
				if n.Types&(1<<i) != 0 {
					ts = append(ts, "schematable.T"+strings.ToUpper(name[:1])+name[1:])
				}
			}
			add("Types: %s", strings.Join(ts, " | "))
		}
		if n.Lenient {
			add("Lenient: true")
		}
		for _, x := range []struct {
			name string
			v    int32
		}{{"Ref", n.Ref}, {"Not", n.Not}, {"Items", n.Items}, {"PropertyNames", n.PropertyNames},
			{"MinLength", n.MinLength}, {"MinItems", n.MinItems}, {"MaxItems", n.MaxItems}, {"MinProperties", n.MinProperties}} {
			if x.v != 0 {
				add("%s: %d", x.name, x.v)
			}
		}
		switch n.Addl {
		case 0:
		case AddlTrue:
			add("Addl: schematable.AddlTrue")
		case AddlFalse:
			add("Addl: schematable.AddlFalse")
		default:
			add("Addl: %d", n.Addl)
		}
		if n.Const.Kind != KNone {
			add("Const: %s", value(n.Const))
		}
		if len(n.Enum) > 0 {
			var vs []string
			for _, e := range n.Enum {
				vs = append(vs, value(e))
			}
			add("Enum: []schematable.Value{%s}", strings.Join(vs, ", "))
		}
		for _, x := range []struct{ name, v string }{{"Minimum", n.Minimum}, {"Maximum", n.Maximum}, {"Pattern", n.Pattern}, {"Format", n.Format}} {
			if x.v != "" {
				add("%s: %s", x.name, q(x.v))
			}
		}
		if len(n.Required) > 0 {
			var rs []string
			for _, r := range n.Required {
				rs = append(rs, q(r))
			}
			add("Required: []string{%s}", strings.Join(rs, ", "))
		}
		if len(n.Props) > 0 {
			var ps []string
			for _, p := range n.Props {
				ps = append(ps, fmt.Sprintf("{Name: %s, Node: %d}", q(p.Name), p.Node))
			}
			add("Props: []schematable.Prop{%s}", strings.Join(ps, ", "))
		}
		for _, x := range []struct {
			name string
			ids  []int32
		}{{"AllOf", n.AllOf}, {"AnyOf", n.AnyOf}, {"OneOf", n.OneOf}} {
			if len(x.ids) > 0 {
				var is []string
				for _, i := range x.ids {
					is = append(is, strconv.Itoa(int(i)))
				}
				add("%s: []int32{%s}", x.name, strings.Join(is, ", "))
			}
		}
		fmt.Fprintf(&b, "%d: {%s},\n", id, strings.Join(f, ", "))
	}
	b.WriteString("},\n}")
	return b.String()
}

func value(v Value) string {
	kinds := map[Kind]string{KString: "KString", KNumber: "KNumber", KBool: "KBool", KNull: "KNull"}
	return fmt.Sprintf("schematable.Value{Kind: schematable.%s, Text: %s}", kinds[v.Kind], strconv.Quote(v.Text))
}
