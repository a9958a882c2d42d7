package cli

import (
	"slices"
	"testing"
)

func TestShellSplit(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{in: "gemini --acp", want: []string{"gemini", "--acp"}},
		{in: "  a\tb\n c  ", want: []string{"a", "b", "c"}},
		{in: `npx -y "@scope/pkg@1.0" 'it''s'`, want: []string{"npx", "-y", "@scope/pkg@1.0", "its"}},
		{in: `say "a \"quoted\" word" 'single $HOME \n'`, want: []string{"say", `a "quoted" word`, `single $HOME \n`}},
		{in: `a\ b c\\d`, want: []string{"a b", `c\d`}},
		{in: `"" x ''`, want: []string{"", "x", ""}},
		{in: `"keep \n backslash"`, want: []string{`keep \n backslash`}},
		{in: "", want: nil},
		{in: `"open`, err: true},
		{in: `'open`, err: true},
		{in: `trailing\`, err: true},
	}
	for _, tc := range cases {
		got, err := shellSplit(tc.in)
		if (err != nil) != tc.err || !slices.Equal(got, tc.want) {
			t.Errorf("shellSplit(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestJoinCommandRoundTrips(t *testing.T) {
	for _, argv := range [][]string{
		{"npx", "-y", "@zed-industries/claude-agent-acp"},
		{"sh", "-c", "echo 'hi' && exit 1"},
		{"prog", "", "a b", `back\slash`, "it's", "$HOME"},
	} {
		back, err := shellSplit(joinCommand(argv))
		if err != nil || !slices.Equal(back, argv) {
			t.Errorf("joinCommand(%q) = %q splits back to %q (%v)", argv, joinCommand(argv), back, err)
		}
	}
}
