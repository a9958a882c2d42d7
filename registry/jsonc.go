package registry

import (
	"bytes"
	"fmt"
)

// stripJSONC turns JSON with comments (// to the end of the line, /* … */) and trailing
// commas — what editors such as Zed accept in their settings — into JSON. Comments and
// trailing commas become spaces, newlines stay, so a decoding error's offset, line and column
// are those of the file as written. Strings are left alone, "//" inside them included. An
// unterminated block comment is an error.
func stripJSONC(b []byte) ([]byte, error) {
	out := bytes.Clone(b)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			end := bytes.IndexByte(out[i:], '\n')
			if end < 0 {
				end = len(out) - i
			}
			blank(i, i+end)
			i += end - 1
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			if end < 0 {
				line, col := lineCol(b, int64(i)+1)
				return nil, fmt.Errorf("unterminated comment at line %d, column %d", line, col)
			}
			blank(i, i+2+end+2)
			i += 2 + end + 1
		}
	}
	// Trailing commas: a comma whose next non-space byte closes an object or array.
	inString = false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			j := i + 1
			for j < len(out) && (out[j] == ' ' || out[j] == '\t' || out[j] == '\n' || out[j] == '\r') {
				j++
			}
			if j < len(out) && (out[j] == '}' || out[j] == ']') {
				out[i] = ' '
			}
		}
	}
	return out, nil
}
