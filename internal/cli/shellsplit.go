package cli

import (
	"errors"
	"strings"
)

// shellSplit splits a command line the way a POSIX shell splits words, without expanding
// anything: single quotes keep everything literally, double quotes keep everything but
// backslash escapes of " \ $ ` and newline, a backslash outside quotes escapes the next
// character. It fails on an unterminated quote or a trailing backslash.
func shellSplit(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	const (
		plain = iota
		single
		double
	)
	state := plain
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch state {
		case single:
			if c == '\'' {
				state = plain
			} else {
				cur.WriteByte(c)
			}
		case double:
			switch {
			case c == '"':
				state = plain
			case c == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0:
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			default:
				cur.WriteByte(c)
			}
		default:
			switch c {
			case ' ', '\t', '\n':
				if inWord {
					words = append(words, cur.String())
					cur.Reset()
					inWord = false
				}
			case '\'':
				state, inWord = single, true
			case '"':
				state, inWord = double, true
			case '\\':
				if i+1 >= len(s) {
					return nil, errors.New("command ends with a backslash")
				}
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
				inWord = true
			default:
				cur.WriteByte(c)
				inWord = true
			}
		}
	}
	if state != plain {
		return nil, errors.New("command has an unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
