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
	f, err := CreatePrivate(path)
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

// CreatePrivate creates (or truncates) a file that holds a record or a result, readable and
// writable by its owner only (0600): a transcript made with --no-redact holds secrets, and
// every record holds what the agent said.
func CreatePrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil { // an existing file keeps its mode otherwise
		f.Close()
		return nil, err
	}
	return f, nil
}
