package render

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, / and \\ kept":      "plain text, / and \\ kept",
		"\x1b]0;title\x07":               `\x1b]0;title\x07`,
		"a\rb\nc\td":                     `a\rb\nc\td`,
		"\x00\x7f":                       `\x00\x7f`,
		"csi \u009b31m":                  `csi \u009b31m`,
		"\u202eevil\u202c \u2066x\u2069": `\u202eevil\u202c \u2066x\u2069`,
		"zero\u200bwidth\ufeff":          `zero\u200bwidth\ufeff`,
		"line\u2028para\u2029":           `line\u2028para\u2029`,
		"tag\U000e0041 filler\u3164":     `tag\U000e0041 filler\u3164`,
		"bad \xff\xc2 utf-8":             `bad \xff\xc2 utf-8`,
		"é 日本 ❤ e\u0301":                 "é 日本 ❤ e\u0301",
	} {
		if got := Clean(in); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWidth(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "日本": 4, "e\u0301": 1, "…": 1, "": 0} {
		if got := Width(s); got != want {
			t.Errorf("Width(%q) = %d, want %d", s, got, want)
		}
	}
}

// checkCut asserts what Cut promises for s and n: at most n columns, clean, and a prefix of
// Clean(s) that ends between two of its characters (never inside one, never inside an
// escape), with the ellipsis exactly when something was cut.
func checkCut(t *testing.T, s string, n int) {
	t.Helper()
	got := Cut(s, n)
	clean := Clean(s)
	if Width(got) > n || !utf8.ValidString(got) {
		t.Fatalf("Cut(%q, %d) = %q: %d columns, valid UTF-8 %v", s, n, got, Width(got), utf8.ValidString(got))
	}
	for _, r := range got {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) {
			t.Fatalf("Cut(%q, %d) = %q holds %U", s, n, got, r)
		}
	}
	kept, cut := strings.CutSuffix(got, "…")
	if !cut || got == clean {
		if got != clean {
			t.Fatalf("Cut(%q, %d) = %q, neither Clean(s) nor cut", s, n, got)
		}
		return
	}
	boundary := map[int]bool{}
	for i := range s {
		boundary[len(Clean(s[:i]))] = true
	}
	if !strings.HasPrefix(clean, kept) || !boundary[len(kept)] {
		t.Fatalf("Cut(%q, %d) = %q does not end between two characters of %q", s, n, got, clean)
	}
}

// TestCut: Cut never splits an escape or a character (an OSC sequence cut short used to hide
// the rest of the matrix table).
func TestCut(t *testing.T) {
	for _, s := range []string{"\x1b]0;title\x07rest of the cell", "日本語のエージェント", "e\u0301e\u0301e\u0301e\u0301", "a\u202eb\xffc", "short"} {
		for n := 1; n <= Width(Clean(s))+1; n++ {
			checkCut(t, s, n)
		}
	}
	if got := Cut("\x1b]0;title\x07rest", 6); got != `\x1b]…` {
		t.Errorf("Cut of an OSC sequence = %q", got)
	}
}

func FuzzCut(f *testing.F) {
	f.Add("\x1b]8;;http://evil/\x1b\\link\x1b]8;;\x1b\\", 7)
	f.Add("日本\u202e\xff", 3)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 1 || n > 200 || len(s) > 1000 {
			return
		}
		checkCut(t, s, n)
		for _, l := range wrap(Clean(s), n+8, 4) {
			if Width(l) > n+8 {
				t.Fatalf("wrap(%q, %d): line %q is %d wide", Clean(s), n+8, l, Width(l))
			}
		}
	})
}

// TestWrap: lines fit, words are kept whole when they fit a line, continuation lines hang; a
// word too long for the hanging column stands alone, whole, four columns in.
func TestWrap(t *testing.T) {
	const long = "/a/path/too/long/for/the/value/column/of/a/line"
	line := "  key:                       a value long enough to wrap at least twice, with a " + long + " in it"
	got := wrap(line, 60, 30)
	for i, l := range got {
		if Width(l) > 60 {
			t.Errorf("line %d is %d wide: %q", i, Width(l), l)
		}
		if l == "      "+long {
			continue
		}
		if i > 0 && (!strings.HasPrefix(l, strings.Repeat(" ", 30)) || l[30] == ' ') {
			t.Errorf("continuation %q does not hang at 30", l)
		}
	}
	if !slices.Contains(got, "      "+long) {
		t.Errorf("the long word does not stand alone at 6: %q", got)
	}
	// The value of a key that does not fit its column at all: on the line after the key.
	if got := wrap("  sandbox kept:               "+long+"/and/more/of/it", 80, 30); len(got) != 2 || got[0] != "  sandbox kept:" || got[1] != "      "+long+"/and/more/of/it" {
		t.Errorf("a path too long for the value column: %q", got)
	}
	// A hang that would leave less than minText columns falls back to the indentation + 2.
	for _, l := range wrap(line, 40, 30)[1:] {
		if !strings.HasPrefix(l, "    ") || l[4] == ' ' {
			t.Errorf("at 40 columns, continuation %q does not hang at 4", l)
		}
	}
	words := strings.Join(strings.Fields(strings.Join(got, " ")), " ")
	if strings.ReplaceAll(words, " ", "") != strings.ReplaceAll(line, " ", "") {
		t.Errorf("wrap lost or changed text: %q", got)
	}
	if got := wrap(`ab\x1bcd`, 5, 0); got[0] != "ab" && got[0] != `ab\x1b` {
		t.Errorf("wrap split an escape: %q", got)
	}
}
