package cli

import (
	"io"
	"reflect"
	"testing"
)

// TestParseArgs: flags anywhere before "--", a value taken whatever it looks like, everything
// after "--" positional.
func TestParseArgs(t *testing.T) {
	cases := []struct {
		args          []string
		json          bool
		cwd           string
		before, after []string
		dash          bool
	}{
		{args: []string{"id", "--json"}, json: true, before: []string{"id"}},
		{args: []string{"--json", "a", "--cwd", "d", "b"}, json: true, cwd: "d", before: []string{"a", "b"}},
		{args: []string{"--cwd", "--", "x"}, cwd: "--", before: []string{"x"}},
		{args: []string{"--cwd=-x", "--json=false", "x"}, cwd: "-x", before: []string{"x"}},
		{args: []string{"-json", "--", "npx", "--json", "-y"}, json: true, after: []string{"npx", "--json", "-y"}, dash: true},
		{args: []string{"-", "--"}, before: []string{"-"}, after: []string{}, dash: true},
	}
	for _, c := range cases {
		fs := newFlagSet("test")
		json := fs.Bool("json", false, "")
		cwd := fs.String("cwd", "", "")
		cl, err := parseArgs(fs, c.args, "test", io.Discard)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if *json != c.json || *cwd != c.cwd || !reflect.DeepEqual(cl.before, c.before) || !reflect.DeepEqual(cl.after, c.after) || cl.dash != c.dash {
			t.Errorf("%q: json %v cwd %q before %q after %q dash %v; want %v %q %q %q %v",
				c.args, *json, *cwd, cl.before, cl.after, cl.dash, c.json, c.cwd, c.before, c.after, c.dash)
		}
		if want := append(append([]string{}, c.before...), c.after...); !reflect.DeepEqual(append([]string{}, fs.Args()...), want) {
			t.Errorf("%q: fs.Args() = %q, want %q", c.args, fs.Args(), want)
		}
	}
	for _, bad := range [][]string{{"x", "--nope"}, {"--nope"}, {"--cwd"}} {
		if _, err := parseArgs(newFlagSet("test"), bad, "test", io.Discard); exitCode(err) != ExitUsage {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}
