package render

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/internal/jsonout"
	"golang.org/x/text/width"
)

// Clean returns s as it may be shown on a terminal, in a table or in Markdown: every
// character that could act on a terminal or hide text is written visibly, as a Go escape.
// That is every C0 control (\x1b, \x07, and \t, \n, \r by name: a line of ours stays one
// line), DEL (\x7f), the C1 controls (\u009b), the Unicode format characters (category Cf:
// bidi overrides and isolates such as \u202e, zero-width characters such as \u200b, the BOM,
// tag characters), the line and paragraph separators (\u2028, \u2029), the other
// default-ignorable characters (Hangul fillers, the combining grapheme joiner), and each byte
// that is not UTF-8 (\xff). Everything else, backslashes included, is kept as is.
//
// Every human-readable writer of this package passes what it did not write itself (agent
// strings, file contents, paths, error messages) through Clean, so that an agent cannot set
// the window title, clear the screen, plant a link, overwrite a line with CR, or disguise
// text with a bidi override.
func Clean(s string) string {
	if printableASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		u, n := unitAt(s, i)
		b.WriteString(u)
		i += n
	}
	return b.String()
}

// Cut returns Clean(s) shortened to at most n columns, marking the cut with an ellipsis. It
// cuts between characters, never inside one nor inside the escape that shows a control
// character.
func Cut(s string, n int) string {
	if len(s) <= n && printableASCII(s) {
		return s
	}
	var b strings.Builder
	cols, cut := 0, -1
	for i := 0; i < len(s); {
		u, size := unitAt(s, i)
		w := Width(u)
		if cols+w > n {
			cut = b.Len()
			break
		}
		b.WriteString(u)
		cols += w
		i += size
	}
	if cut < 0 {
		return b.String()
	}
	// Make room for the ellipsis: drop whole units from the end until one column is free.
	out := b.String()
	for cols > n-1 && out != "" {
		j := lastUnit(out)
		cols -= Width(out[j:])
		out = out[:j]
	}
	return out + "…"
}

// Width is the number of terminal columns that clean text takes: wide (East Asian) characters
// take two, combining marks none.
func Width(s string) int {
	if printableASCII(s) {
		return len(s)
	}
	n := 0
	for _, r := range s {
		n += runeWidth(r)
	}
	return n
}

func runeWidth(r rune) int {
	switch {
	case r < 0x7f:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// printableASCII says whether s is made only of printable ASCII (the common case, kept fast).
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// unitAt is the character of s at byte i as Clean shows it, and its size in s.
func unitAt(s string, i int) (string, int) {
	c := s[i]
	if c >= 0x20 && c < 0x7f {
		return s[i : i+1], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	switch {
	case r == utf8.RuneError && n == 1:
		return fmt.Sprintf(`\x%02x`, c), 1
	case r == '\t':
		return `\t`, 1
	case r == '\n':
		return `\n`, 1
	case r == '\r':
		return `\r`, 1
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf(`\x%02x`, r), n
	case jsonout.Hidden(r) && r > 0xffff:
		return fmt.Sprintf(`\U%08x`, r), n
	case jsonout.Hidden(r):
		return fmt.Sprintf(`\u%04x`, r), n
	}
	return s[i : i+n], n
}

// lastUnit is the start of the last character of clean text s, an escape counting as one.
func lastUnit(s string) int {
	_, n := utf8.DecodeLastRuneInString(s)
	j := len(s) - n
	// An escape Clean wrote: \t, \xNN, \uNNNN, \UNNNNNNNN.
	for _, k := range []int{2, 4, 6, 10} {
		if e := len(s) - k; e >= 0 && isEscape(s[e:]) {
			return e
		}
	}
	return j
}

// isEscape says whether u is exactly one escape as Clean writes them.
func isEscape(u string) bool {
	if len(u) < 2 || u[0] != '\\' {
		return false
	}
	hex := func(h string, n int) bool {
		if len(h) != n {
			return false
		}
		for i := 0; i < len(h); i++ {
			if !strings.ContainsRune("0123456789abcdef", rune(h[i])) {
				return false
			}
		}
		return true
	}
	switch u[1] {
	case 't', 'n', 'r':
		return len(u) == 2
	case 'x':
		return hex(u[2:], 2)
	case 'u':
		return hex(u[2:], 4)
	case 'U':
		return hex(u[2:], 8)
	}
	return false
}
