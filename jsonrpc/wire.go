package jsonrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
)

// Line is one line read by a LineReader.
type Line struct {
	Raw          []byte // the line without its newline; a prefix only when Oversize
	Size         int64  // full length of the line
	Oversize     bool
	Unterminated bool // the stream ended without a newline after this line
}

// LineReader splits a byte stream into newline-terminated lines, with a maximum line size. It
// never fails on content: an oversize line is returned as such (prefix and size) and the
// reader moves on to the next line.
type LineReader struct {
	r   *bufio.Reader
	max int
}

// NewLineReader reads lines from r, keeping lines up to max bytes whole (max <= 0 means
// DefaultMaxLineSize).
func NewLineReader(r io.Reader, max int) *LineReader {
	if max <= 0 {
		max = DefaultMaxLineSize
	}
	return &LineReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line. At the end of the stream it returns io.EOF (after a final
// unterminated line, if any); a read error is returned with the partial line read before it.
func (lr *LineReader) Next() (Line, error) {
	var buf []byte
	var size int64
	oversize := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		terminated := err == nil
		if terminated {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		if !oversize {
			buf = append(buf, chunk...)
			if size > int64(lr.max) {
				oversize = true
				buf = append([]byte(nil), buf[:min(len(buf), OversizePrefix)]...)
			}
		}
		if terminated {
			return Line{Raw: buf, Size: size, Oversize: oversize}, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if size == 0 {
			return Line{}, err
		}
		line := Line{Raw: buf, Size: size, Oversize: oversize, Unterminated: true}
		if errors.Is(err, io.EOF) {
			return line, nil
		}
		return line, err
	}
}

// HasBOM reports whether raw starts with a UTF-8 byte order mark.
func HasBOM(raw []byte) bool { return bytes.HasPrefix(raw, []byte("\xef\xbb\xbf")) }

// Feed reads lines from r on its own goroutine and delivers them on lines, until the stream
// ends: done then receives the error that ended it (io.EOF at a clean end). It stops early
// when ctx ends. Agents that serve stdio (the reference agent, the replayer) loop over it.
func Feed(ctx context.Context, r io.Reader, max int) (lines <-chan Line, done <-chan error) {
	out := make(chan Line)
	end := make(chan error, 1)
	go func() {
		lr := NewLineReader(r, max)
		for {
			line, err := lr.Next()
			if err == nil || line.Size > 0 {
				select {
				case out <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				end <- err
				return
			}
		}
	}()
	return out, end
}
