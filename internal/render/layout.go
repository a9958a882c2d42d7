package render

import (
	"io"
	"strings"
	"unicode/utf8"
)

// minText is the fewest columns a wrapped line keeps for its text: a hanging indent that
// would leave less is reduced.
const minText = 24

// wrap lays the clean line out to width columns (0: no limit). It breaks at spaces (never in
// the indentation the line starts with), or inside a word longer than a line, between two
// characters and never inside an escape that Clean wrote. Each continuation line starts with
// hang spaces, but for a word too long for the column hang leaves (a path, a URL, an id): it
// stands alone, whole, on a line of its own four columns deeper than the line starts, when
// it fits there.
func wrap(line string, width, hang int) []string {
	if width <= 0 || Width(line) <= width {
		return []string{line}
	}
	if hang > width-minText {
		hang = max(0, min(indentOf(line)+2, width-minText))
	}
	lead := min(hang, indentOf(line)+4) // where a long word stands alone
	var out []string
	prefix, avail := "", width
	rest := line
	for Width(rest) > avail {
		if len(out) > 0 && lead < hang {
			word, after, _ := strings.Cut(rest, " ")
			if n := Width(word); n > avail && n <= width-lead {
				out = append(out, strings.Repeat(" ", lead)+word)
				rest = strings.TrimLeft(after, " ")
				continue
			}
		}
		start := indentOf(rest) // spaces of the indentation are not break points
		cols, brk, hard := 0, -1, -1
		for i := 0; i < len(rest); {
			n := cleanUnit(rest, i)
			w := Width(rest[i : i+n])
			if cols+w > avail {
				hard = i
				break
			}
			if rest[i] == ' ' && i > start {
				brk = i
			}
			cols += w
			i += n
		}
		if rest[hard] == ' ' {
			brk = hard
		}
		piece, next := rest[:hard], rest[hard:]
		if brk > 0 {
			piece, next = rest[:brk], rest[brk:]
		} else if hard == 0 { // not even one character fits: take one anyway
			n := cleanUnit(rest, 0)
			piece, next = rest[:n], rest[n:]
		}
		out = append(out, prefix+strings.TrimRight(piece, " "))
		prefix, avail = strings.Repeat(" ", hang), width-hang
		rest = strings.TrimLeft(next, " ")
	}
	if rest != "" || len(out) == 0 {
		out = append(out, prefix+rest)
	}
	return out
}

// indentOf counts the spaces line starts with.
func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " ")) }

// cleanUnit is the size of the character at byte i of clean text s: an escape Clean wrote
// counts as one.
func cleanUnit(s string, i int) int {
	if s[i] == '\\' {
		for _, k := range []int{2, 4, 6, 10} {
			if i+k <= len(s) && isEscape(s[i:i+k]) {
				return k
			}
		}
	}
	_, n := utf8.DecodeRuneInString(s[i:])
	return n
}

// writeTable writes rows of cells as aligned columns, two spaces apart, the last cell of a row
// not padded (the layout text/tabwriter gave, measured in terminal columns). Every cell is
// cleaned. With a width, a row that does not fit has its last cell wrapped under itself, or,
// when that cell starts too far right, on lines of its own below the row.
func writeTable(w io.Writer, rows [][]string, width int) error {
	var widths []int
	for _, row := range rows {
		for i, c := range row {
			row[i] = Clean(c)
			if i == len(row)-1 {
				continue
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], Width(row[i]))
		}
	}
	out := &sticky{w: w}
	var b strings.Builder
	for _, row := range rows {
		if len(row) == 0 {
			continue
		}
		b.Reset()
		for i, c := range row[:len(row)-1] {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-Width(c)+2))
		}
		start := Width(b.String())
		last := row[len(row)-1]
		var lines []string
		switch {
		case width <= 0 || start+Width(last) <= width:
			lines = []string{b.String() + last}
		case width-start >= minText:
			lines = wrap(b.String()+last, width, start)
		default:
			lead := indentOf(row[0]) + 4
			lines = append(wrap(strings.TrimRight(b.String(), " "), width, lead), wrap(strings.Repeat(" ", lead)+last, width, lead)...)
		}
		for _, l := range lines {
			io.WriteString(out, l+"\n")
		}
	}
	return out.err
}
