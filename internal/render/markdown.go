package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/acpprobe/acpprobe/matrix"
)

// MatrixMarkdown writes the matrix as a GitHub-flavoured Markdown table. Every cell is agent
// data, written so that it stays text in its cell (mdEscape): no row split, no link, image or
// HTML. Under the table, each row that is not ok says why, in full (Reason), and a line says
// what "?" and "-" mean when a "?" is in it.
func MatrixMarkdown(w io.Writer, m *matrix.Matrix) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# ACP capability matrix\n\nGenerated %s by acpprobe %s.\n\n", m.GeneratedAt, m.Version)
	columns := ColumnsOf(m)
	b.WriteString("|")
	for _, c := range columns {
		b.WriteString(" " + c.Title + " |")
	}
	b.WriteString("\n|")
	for _, c := range columns {
		if c.Numeric {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	unknown := false
	for _, r := range m.Rows {
		b.WriteString("|")
		for _, c := range columns {
			v := c.Value(r)
			unknown = unknown || v == NotKnown
			b.WriteString(" " + mdEscape(v) + " |")
		}
		b.WriteString("\n")
	}
	notOK := reasons(m)
	if len(notOK) > 0 {
		b.WriteString("\nNot ok:\n\n")
	}
	for _, r := range notOK {
		// The id in bold: what it starts with cannot start a block (a heading, a quote) there.
		b.WriteString("- **" + mdEscape(r.id) + "**: " + mdEscape(r.why) + "\n")
	}
	if unknown {
		turns := ""
		if len(columns) > len(Columns) {
			turns = ", or the turn scenario was not part of the run"
		}
		b.WriteString("\n" + NotKnown + " not known: the agent never answered initialize, or session/new did not succeed (modes, models, config options, reasoning), or the method was not probed or got no answer" + turns + ". " + None + " none.\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// mdEscape makes s, a string from an agent, plain text inside a cell of a GitHub-flavoured
// Markdown table, shown exactly as Clean shows it. Controls and invisible characters are made
// visible first (Clean), so no CR or LF can end the row. Then a backslash goes before each
// character that could start anything but text: | (a cell), \ (an escape), < (HTML, an
// autolink), [ ] ! (a link, an image), ` (code), & (an entity), * and ~ (emphasis,
// strikethrough), and _ where it could emphasise (not between two letters or digits, as in
// auth_required); before the : of a scheme (http:, javascript:, mailto:: a letter, then a
// colon not followed by a space) and the @ of an address (after a character an address can
// hold), which GitHub would make links of;
// and after www (www\.). The #, > and - that start a block are left as they are: a table cell
// never starts a line.
func mdEscape(s string) string {
	s = Clean(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case strings.IndexByte("|\\<[]!`&*~", c) >= 0:
			b.WriteByte('\\')
		case c == '@' && i > 0 && (isWord(s[i-1]) || strings.IndexByte(".+-_", s[i-1]) >= 0):
			b.WriteByte('\\')
		case c == '_' && !(i > 0 && isWord(s[i-1]) && i+1 < len(s) && isWord(s[i+1])):
			b.WriteByte('\\')
		case c == ':' && i > 0 && isLetter(s[i-1]) && i+1 < len(s) && s[i+1] != ' ':
			b.WriteByte('\\')
		case c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isWord(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c >= 0x80 }
