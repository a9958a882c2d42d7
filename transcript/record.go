package transcript

import (
	"os"
	"time"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Recording is the log of one session, redacted as each frame arrives, and the transcript file
// it is written to, if any.
type Recording struct {
	Log  *jsonrpc.Log
	Path string // "" when there is no transcript file
	file *os.File
	w    *Writer
}

// Record starts the log of a session. red filters every frame (nil: nothing is redacted).
// When path is not empty the session is also written there, line by line, as a transcript with
// header h; Record fills in its Start and Redacted, and redacts its command and argv.
func Record(path string, h Header, red *Redactor) (*Recording, error) {
	rec := &Recording{Log: jsonrpc.NewLog(), Path: path}
	if red != nil {
		rec.Log.SetFilter(red.Frame)
		h.Command, h.Argv = red.String(h.Command), red.Strings(h.Argv)
	}
	if path == "" {
		return rec, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	h.Start, h.Redacted = rec.Log.Start().UTC().Format(time.RFC3339Nano), red != nil
	w, err := NewWriter(f, h)
	if err != nil {
		f.Close()
		return nil, err
	}
	rec.file, rec.w = f, w
	rec.Log.Observe(w.Frame)
	return rec, nil
}

// Close closes the transcript file and reports the first error met while writing it.
func (r *Recording) Close() error {
	if r.file == nil {
		return nil
	}
	err := r.w.Err()
	if cerr := r.file.Close(); err == nil {
		err = cerr
	}
	return err
}
