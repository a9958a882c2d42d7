// Package transcript is acpprobe's lossless record of a session: an NDJSON file with a header
// line and one line per frame (client and agent lines, stderr chunks, engine events), written
// as the session happens so that a crash still leaves a readable file. It also holds the
// Replayer, which plays a recording back as a fake agent, and the Redactor, which keeps
// secrets out of every record.
//
// The format is documented in docs/transcript.md and described by transcript.schema.json.
package transcript

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/internal/safeio"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// FormatVersion is the version of the transcript format written by this package.
const FormatVersion = 1

// JSONSchema is the JSON Schema (draft 2020-12) of one transcript line (header or event).
//
//go:embed transcript.schema.json
var JSONSchema []byte

// Header is the first line of a transcript.
type Header struct {
	// Format is FormatVersion; its key marks the file as an acpprobe transcript.
	Format  int    `json:"acpprobeTranscript"`
	Version string `json:"acpprobeVersion"`
	// Tool is what recorded it: probe, check, tap, matrix.
	Tool    string   `json:"tool"`
	Command string   `json:"command"`
	Argv    []string `json:"argv"`
	Cwd     string   `json:"cwd"`
	Start   string   `json:"start"` // RFC 3339 wall-clock time of t=0
	// Redacted is false when the recording was made with --no-redact.
	Redacted bool `json:"redacted"`
}

// Event is one line after the header: a frame of the session.
type Event struct {
	Seq int64   `json:"seq"`
	T   float64 `json:"t"`   // milliseconds since the start (monotonic), to the nanosecond
	Dir string  `json:"dir"` // client, agent, stderr, event
	// Raw is the line exactly as it crossed the wire, without its newline, when it is valid
	// UTF-8; RawBase64 carries it otherwise, so that no byte is lost.
	Raw       *string `json:"raw,omitempty"`
	RawBase64 string  `json:"rawBase64,omitempty"`
	// Size is the full length of an oversize line (Raw then holds a prefix).
	Size         int64 `json:"size,omitempty"`
	Oversize     bool  `json:"oversize,omitempty"`
	Unterminated bool  `json:"unterminated,omitempty"`
	// Kind and Data describe an engine event (spawn, exit, timeout, teardown…).
	Kind string          `json:"kind,omitempty"`
	Data json.RawMessage `json:"data,omitempty"`
}

// EventOf converts a frame to its transcript line.
func EventOf(f jsonrpc.Frame) Event {
	e := Event{Seq: f.Seq, T: float64(f.At.Nanoseconds()) / 1e6, Dir: string(f.Dir), Oversize: f.Oversize, Unterminated: f.Unterminated}
	if f.Oversize {
		e.Size = f.Size
	}
	if f.Dir == jsonrpc.DirEvent {
		e.Kind = f.Kind
		if len(f.Raw) == 0 {
			return e
		}
		// A compact JSON payload is carried as data (readable); anything else as raw bytes, so
		// that it reads back byte for byte.
		var compact bytes.Buffer
		if json.Compact(&compact, f.Raw) == nil && bytes.Equal(compact.Bytes(), f.Raw) && f.Raw[0] == '{' {
			e.Data = append(json.RawMessage(nil), f.Raw...)
			return e
		}
	}
	if utf8.Valid(f.Raw) {
		s := string(f.Raw)
		e.Raw = &s
	} else {
		e.RawBase64 = base64.StdEncoding.EncodeToString(f.Raw)
	}
	return e
}

// Frame converts a transcript line back to a frame (client and agent lines are decoded).
func (e Event) Frame() (jsonrpc.Frame, error) {
	f := jsonrpc.Frame{Seq: e.Seq, Dir: jsonrpc.Dir(e.Dir), At: time.Duration(math.Round(e.T * 1e6)),
		Oversize: e.Oversize, Unterminated: e.Unterminated, Kind: e.Kind}
	switch f.Dir {
	case jsonrpc.DirClient, jsonrpc.DirAgent, jsonrpc.DirStderr, jsonrpc.DirEvent:
	default:
		return f, fmt.Errorf("seq %d: unknown dir %q", e.Seq, e.Dir)
	}
	if (f.Dir == jsonrpc.DirEvent) != (e.Kind != "") {
		return f, fmt.Errorf("seq %d: an event line needs a kind, and only an event line has one", e.Seq)
	}
	switch {
	case e.Raw != nil:
		f.Raw = []byte(*e.Raw)
	case e.RawBase64 != "":
		b, err := base64.StdEncoding.DecodeString(e.RawBase64)
		if err != nil {
			return f, fmt.Errorf("seq %d: rawBase64: %v", e.Seq, err)
		}
		f.Raw = b
	case e.Data != nil:
		f.Raw = append([]byte(nil), e.Data...)
	}
	f.Size = int64(len(f.Raw))
	if e.Oversize {
		f.Size = e.Size
	}
	if (f.Dir == jsonrpc.DirClient || f.Dir == jsonrpc.DirAgent) && !f.Oversize {
		f.Msg, f.DecodeErr = jsonrpc.Decode(f.Raw)
	}
	return f, nil
}

// Writer writes a transcript line by line as frames arrive. Each line is written with one
// Write call, so what reached the file before a crash is whole lines plus at most one partial
// line, which Read tolerates.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// NewWriter writes the header and returns a writer for the events.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Format = FormatVersion
	if h.Argv == nil {
		h.Argv = []string{}
	}
	tw := &Writer{w: w}
	tw.line(h)
	return tw, tw.err
}

// Frame writes one frame. Errors are kept and reported by Err; writing stops at the first.
func (w *Writer) Frame(f jsonrpc.Frame) { w.line(EventOf(f)) }

func (w *Writer) line(v any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // Encode ends the line with \n
		w.err = err
		return
	}
	_, w.err = w.w.Write(buf.Bytes())
}

// Err is the first error met while writing.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// ErrNotTranscript means the first line is not an acpprobe transcript header.
var ErrNotTranscript = errors.New("not an acpprobe transcript (no header line with \"acpprobeTranscript\")")

// ReadOptions bound what reading a transcript may cost: it is a file a user hands us.
type ReadOptions struct {
	// Budget bounds the frames kept whole in memory, as for a live record (record.Budget);
	// a zero Budget keeps everything.
	Budget jsonrpc.Budget
	// MaxLine bounds one line of the transcript (MaxLine when 0).
	MaxLine int
}

// MaxLine is the longest transcript line read by default: a whole agent line of
// jsonrpc.DefaultMaxLineSize, JSON-escaped, with room for escapes. Reading a line costs about
// three times its length in memory.
const MaxLine = jsonrpc.DefaultMaxLineSize + jsonrpc.DefaultMaxLineSize/2

// Read reads a whole transcript (see ReadWith).
func Read(r io.Reader) (Header, []jsonrpc.Frame, error) { return ReadWith(r, ReadOptions{}) }

// ReadFile reads the transcript at path, which must be a regular file. Errors name the file.
func ReadFile(path string, o ReadOptions) (Header, []jsonrpc.Frame, error) {
	f, _, err := safeio.Open(path)
	if err != nil {
		return Header{}, nil, err
	}
	defer f.Close()
	h, frames, err := ReadWith(f, o)
	if err != nil {
		err = fmt.Errorf("%s: %w", path, err)
	}
	return h, frames, err
}

// ReadWith reads a transcript. A last line cut short by a crash is ignored; any other bad line,
// or a line longer than the limit, is an error naming its line number. The frames keep the
// recorded seq and times; over the budget they are folded as a live record's would be.
func ReadWith(r io.Reader, o ReadOptions) (Header, []jsonrpc.Frame, error) {
	var h Header
	max := o.MaxLine
	if max <= 0 {
		max = MaxLine
	}
	lr := jsonrpc.NewLineReader(bufio.NewReader(r), max)
	first, err := lr.Next()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return h, nil, ErrNotTranscript
		}
		return h, nil, err
	}
	if first.Oversize || json.Unmarshal(first.Raw, &h) != nil || h.Format == 0 {
		return h, nil, ErrNotTranscript
	}
	if h.Format > FormatVersion {
		return h, nil, fmt.Errorf("transcript format %d is newer than this acpprobe reads (%d)", h.Format, FormatVersion)
	}
	log := jsonrpc.NewLog()
	log.SetBudget(o.Budget)
	for n := 2; ; n++ {
		line, err := lr.Next()
		if errors.Is(err, io.EOF) {
			return h, log.Frames(), nil
		}
		if err != nil {
			return h, log.Frames(), err
		}
		if line.Size == 0 {
			continue
		}
		var e Event
		if line.Oversize {
			return h, log.Frames(), fmt.Errorf("line %d: %d bytes, longer than the %d a transcript line may have", n, line.Size, max)
		}
		if uerr := json.Unmarshal(line.Raw, &e); uerr != nil {
			if line.Unterminated {
				return h, log.Frames(), nil // the recorder was cut off mid-line
			}
			return h, log.Frames(), fmt.Errorf("line %d: %v", n, uerr)
		}
		f, ferr := e.Frame()
		if ferr != nil {
			return h, log.Frames(), fmt.Errorf("line %d: %v", n, ferr)
		}
		log.AppendRecorded(f)
	}
}
