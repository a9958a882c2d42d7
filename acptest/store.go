package acptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// sessionStore keeps the model persona's sessions as files, one <sessionId>.json each, so
// that another agent process with the same HOME can list and load them. A nil store keeps
// nothing.
type sessionStore struct{ dir string }

// storedSession is a session file.
type storedSession struct {
	SessionID string            `json:"sessionId"`
	Cwd       string            `json:"cwd"`
	Title     string            `json:"title,omitempty"`
	UpdatedAt string            `json:"updatedAt"`
	Config    map[string]string `json:"config,omitempty"`
	History   []json.RawMessage `json:"history,omitempty"`
	Messages  []json.RawMessage `json:"messages,omitempty"`
}

// Limits of the store: a session id is a safe file name; files and listings are bounded.
var storeID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`) })

const (
	maxSessionFile  = 32 << 20
	maxListedFiles  = 1000
	sessionFileMode = 0o600
)

// path is the file of session id; ok is false for an id that is not a safe file name.
func (st *sessionStore) path(id string) (string, bool) {
	if !storeID().MatchString(id) {
		return "", false
	}
	return filepath.Join(st.dir, id+".json"), true
}

// save writes rec whole (a temporary file renamed over the old one).
func (st *sessionStore) save(rec storedSession) error {
	file, ok := st.path(rec.SessionID)
	if !ok {
		return fmt.Errorf("session id %q is not a file name", rec.SessionID)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(st.dir, ".save-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), sessionFileMode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// load reads session id; an unknown id (or a nil store) is an os.ErrNotExist error.
func (st *sessionStore) load(id string) (*storedSession, error) {
	if st == nil {
		return nil, os.ErrNotExist
	}
	file, ok := st.path(id)
	if !ok {
		return nil, os.ErrNotExist
	}
	return readSession(file)
}

// readSession reads a session file: a regular file, at most maxSessionFile bytes.
func readSession(file string) (*storedSession, error) {
	fi, err := os.Lstat(file)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSessionFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxSessionFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", file, maxSessionFile)
	}
	var rec storedSession
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if want := strings.TrimSuffix(filepath.Base(file), ".json"); rec.SessionID != want {
		return nil, fmt.Errorf("%s holds session %q", file, rec.SessionID)
	}
	return &rec, nil
}

// list reads the stored sessions (at most maxListedFiles files); unreadable ones are skipped.
func (st *sessionStore) list() []storedSession {
	if st == nil {
		return nil
	}
	entries, err := os.ReadDir(st.dir)
	if err != nil {
		return nil
	}
	var out []storedSession
	for _, e := range entries {
		if len(out) >= maxListedFiles {
			break
		}
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !storeID().MatchString(id) {
			continue
		}
		if rec, err := readSession(filepath.Join(st.dir, e.Name())); err == nil {
			out = append(out, *rec)
		}
	}
	return out
}

// session makes a stored session live again (without MCP servers: a load connects its own).
func (rec *storedSession) session() *modelSession {
	updated, err := time.Parse(time.RFC3339Nano, rec.UpdatedAt)
	if err != nil {
		updated = time.Now().UTC()
	}
	config := rec.Config
	if config == nil {
		config = map[string]string{}
	}
	return &modelSession{id: rec.SessionID, cwd: rec.Cwd, title: rec.Title, updated: updated, config: config,
		history: rec.History, messages: rec.Messages}
}

var errOutside = errors.New("the path is outside the session's working directory")

// insideDir resolves p (relative to dir, or absolute) to a path inside dir: it must not
// leave dir lexically, nor through a symbolic link in an existing part of it.
func insideDir(dir, p string) (string, error) {
	if !filepath.IsAbs(dir) {
		return "", fmt.Errorf("the session's working directory %q is not absolute", dir)
	}
	if p == "" {
		return "", errors.New("no path given")
	}
	target := filepath.Clean(p)
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	if !within(filepath.Clean(dir), target) {
		return "", errOutside
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", err
	}
	// The deepest part of target that exists, with its links resolved, must stay inside.
	for probe := target; ; probe = filepath.Dir(probe) {
		if _, err := os.Lstat(probe); err == nil {
			real, err := filepath.EvalSymlinks(probe)
			if err != nil {
				return "", err
			}
			if !within(realDir, real) {
				return "", errOutside
			}
			return target, nil
		}
		if probe == filepath.Dir(probe) {
			return "", errOutside
		}
	}
}

// within reports whether path p is dir or inside it (both clean and absolute).
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
