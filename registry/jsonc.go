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
//
// One pass: a comma outside strings is pending until the next byte that is neither space nor
// comment; if that byte closes an object or array, the comma was a trailing one.
func stripJSONC(b []byte) ([]byte, error) {
	out := bytes.Clone(b)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	comma := -1 // the pending comma, or -1
	for i := 0; i < len(out); i++ {
		switch c := out[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
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
		default:
			if comma >= 0 && (c == '}' || c == ']') {
				out[comma] = ' '
			}
			comma = -1
			switch c {
			case ',':
				comma = i
			case '"':
				i = stringEnd(out, i)
			}
		}
	}
	return out, nil
}

// stringEnd is the index of the quote that closes the JSON string opening at b[open] (the
// last index when it does not close).
func stringEnd(b []byte, open int) int {
	for i := open + 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(b) - 1
}
