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
//
// The line's Raw is allocated once, at its exact size: a line longer than the read buffer is
// gathered in the buffer's chunks and joined at its end, so that a kept line costs its length
// (what a Log's budget counts), not the up to twice as much that growing it by appending
// leaves, and reading it leaves one line's worth of garbage, not two.
func (lr *LineReader) Next() (Line, error) {
	var chunks [][]byte // the line's chunks before the last, each a copy
	var prefix []byte   // an oversize line's first OversizePrefix bytes
	var size int64
	oversize := false
	line := func(last []byte, unterminated bool) Line {
		if oversize {
			return Line{Raw: prefix, Size: size, Oversize: true, Unterminated: unterminated}
		}
		return Line{Raw: bytes.Join(append(chunks, last), nil), Size: size, Unterminated: unterminated}
	}
	for {
		chunk, err := lr.r.ReadSlice('\n')
		terminated := err == nil
		if terminated {
			chunk = chunk[:len(chunk)-1]
		}
		size += int64(len(chunk))
		if !oversize && size > int64(lr.max) {
			oversize = true
			for _, c := range append(chunks, chunk) {
				prefix = append(prefix, c[:min(len(c), OversizePrefix-len(prefix))]...)
			}
			chunks = nil
		}
		if terminated {
			return line(chunk, false), nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if !oversize {
				chunks = append(chunks, bytes.Clone(chunk))
			}
			continue
		}
		if size == 0 {
			return Line{}, err
		}
		if errors.Is(err, io.EOF) {
			return line(chunk, true), nil
		}
		return line(chunk, true), err
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
