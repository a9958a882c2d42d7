package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/internal/safeio"
	"github.com/acpprobe/acpprobe/internal/schematable"
)

// IndexURL is where the official registry publishes its current index.
const IndexURL = "https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json"

// CacheFile is the file Refresh keeps the fetched index in, inside the cache directory.
const CacheFile = "registry.json"

// RefreshTimeout bounds a whole fetch by default: connection, TLS, headers and body.
const RefreshTimeout = 30 * time.Second

// CacheDir is the directory Refresh keeps the fetched index in: os.UserCacheDir()/acpprobe
// ($XDG_CACHE_HOME/acpprobe or ~/.cache/acpprobe on Linux, ~/Library/Caches/acpprobe on macOS).
func CacheDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "acpprobe"), nil
}

// Index is the official registry's data that agent ids resolve through: the embedded
// snapshot, or a copy of the published index that Refresh fetched.
type Index struct {
	// Entries are the index's agents (Source "registry").
	Entries []Entry
	// FetchedAt is when the copy was fetched (its file's modification time); zero for the
	// snapshot.
	FetchedAt time.Time
	// Path is the file of the copy; "" for the snapshot.
	Path string
	// Version is the index's own "version" ("" for the snapshot).
	Version string
	// Problem, when set, is why the copy in the cache directory was not used (the index is
	// then the snapshot).
	Problem error
}

// Snapshot is the embedded snapshot as an Index.
func Snapshot() Index {
	embedded, err := Embedded()
	if err != nil {
		panic("registry: embedded snapshot: " + err.Error())
	}
	return Index{Entries: embedded}
}

// snapshotDate is SnapshotDate as a time.
var snapshotDate = sync.OnceValue(func() time.Time {
	t, err := time.Parse(time.DateOnly, SnapshotDate)
	if err != nil {
		panic("registry: SnapshotDate: " + err.Error())
	}
	return t
})

// IsSnapshot says whether the index is the embedded snapshot.
func (x Index) IsSnapshot() bool { return x.Path == "" }

// Name says which index it is, for people: "the ACP registry snapshot of 2026-02-07" or "the
// ACP registry fetched on 2026-08-20 14:03 UTC".
func (x Index) Name() string {
	if x.IsSnapshot() {
		return "the ACP registry snapshot of " + SnapshotDate
	}
	return "the ACP registry fetched on " + x.FetchedAt.UTC().Format("2006-01-02 15:04 MST")
}

// Age is how old the index is at now: since the snapshot's commit, or since the fetch.
func (x Index) Age(now time.Time) time.Duration {
	if x.IsSnapshot() {
		return now.Sub(snapshotDate())
	}
	return now.Sub(x.FetchedAt)
}

// AgeText is Age in words: "3 days old", or "less than a day old".
func (x Index) AgeText(now time.Time) string {
	switch days := int(x.Age(now).Hours() / 24); {
	case days < 1:
		return "less than a day old"
	case days == 1:
		return "1 day old"
	default:
		return fmt.Sprintf("%d days old", days)
	}
}

// Registry is the registry of the index and the built-in entries. The snapshot's is Default();
// a fetched index replaces the snapshot entirely, and its entries replace built-in entries of
// the same id.
func (x Index) Registry() *Registry {
	if x.IsSnapshot() {
		return Default()
	}
	return New(append(Builtins(), x.Entries...)...)
}

// FromIndex says whether e is an agent of the index x (and not of a registry file, a config
// or the built-ins).
func (x Index) FromIndex(e Entry) bool {
	if e.Source != SourceRegistry {
		return false
	}
	if x.IsSnapshot() {
		return strings.HasPrefix(e.Origin, "embedded:")
	}
	return e.Origin == x.Path
}

// LoadCache reads the index Refresh keeps in dir. Without one, the error wraps
// fs.ErrNotExist. The file is read as untrusted input, and checked as Refresh checks what it
// fetches.
func LoadCache(dir string) (Index, error) {
	path := filepath.Join(dir, CacheFile)
	st, err := os.Stat(path)
	if err != nil {
		return Index{}, err
	}
	entries, version, err := readIndex(path, MaxFileSize)
	if err != nil {
		return Index{}, err
	}
	return Index{Entries: entries, FetchedAt: st.ModTime(), Path: path, Version: version}, nil
}

// readIndex reads and checks the index in file path: a regular file of at most max bytes.
func readIndex(path string, max int64) ([]Entry, string, error) {
	b, err := safeio.ReadFile(path, max)
	if err != nil {
		return nil, "", err
	}
	return checkIndex(path, b)
}

// checkIndex validates an index against the registry's index schema (registry.schema.json
// with the newest agent.schema.json acpprobe knows, compiled into indexSchema), then reads its
// agents.
func checkIndex(name string, b []byte) ([]Entry, string, error) {
	inst, err := schematable.Decode(trimBOM(b))
	if err != nil {
		return nil, "", fmt.Errorf("%s: not JSON: %v", name, err)
	}
	if vs := indexSchema.Violations(indexSchema.Def(""), inst); len(vs) > 0 {
		at := vs[0].Pointer
		if at == "" {
			at = "/"
		}
		return nil, "", fmt.Errorf("%s: does not match the registry's index schema: at %s: %s", name, at, vs[0].Message)
	}
	entries, err := parseFile(name, b)
	if err != nil {
		return nil, "", err
	}
	var head struct {
		Version string `json:"version"`
	}
	_ = json.Unmarshal(trimBOM(b), &head) // the schema says it is a string
	return entries, head.Version, nil
}

//go:generate go run ./internal/gen

// RefreshOptions say where Refresh fetches from and where it keeps what it fetched.
type RefreshOptions struct {
	// URL is the index to fetch (IndexURL when ""); it must be https.
	URL string
	// Client makes the request (when nil, a client with the system's roots). Tests give the
	// client of a local TLS server.
	Client *http.Client
	// Dir is the cache directory (CacheDir() when "").
	Dir string
	// Timeout bounds the whole fetch (RefreshTimeout when 0).
	Timeout time.Duration
}

// Refresh fetches the official registry's current index over HTTPS, checks it as LoadCache
// does (the index schema, then every agent), and keeps it in Dir/registry.json: written to a
// temporary file in Dir and renamed over the old copy, so a reader sees the old index or the
// new one, never part of one. The directory is made 0700, the file 0600. The fetch is bounded
// by Timeout, the body by MaxFileSize, and redirects must stay on https. On any error the
// copy in Dir is left as it was.
func Refresh(ctx context.Context, o RefreshOptions) (Index, error) {
	if o.URL == "" {
		o.URL = IndexURL
	}
	if !strings.HasPrefix(o.URL, "https://") {
		return Index{}, fmt.Errorf("%s: the registry is fetched over https only", o.URL)
	}
	if o.Timeout == 0 {
		o.Timeout = RefreshTimeout
	}
	if o.Dir == "" {
		dir, err := CacheDir()
		if err != nil {
			return Index{}, fmt.Errorf("no cache directory: %w", err)
		}
		o.Dir = dir
	}
	client := &http.Client{}
	if o.Client != nil {
		*client = *o.Client
	}
	client.Timeout = o.Timeout
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "https" {
			return fmt.Errorf("redirected to %s: the registry is fetched over https only", req.URL)
		}
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	b, err := fetch(ctx, client, o.URL)
	if err != nil {
		if ctx.Err() != nil {
			return Index{}, fmt.Errorf("%s: no whole answer within %s", o.URL, o.Timeout)
		}
		return Index{}, err
	}
	entries, version, err := checkIndex(o.URL, b)
	if err != nil {
		return Index{}, err
	}
	path, err := writeAtomic(o.Dir, CacheFile, b)
	if err != nil {
		return Index{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return Index{}, err
	}
	for i := range entries {
		entries[i].Origin = path
	}
	return Index{Entries: entries, FetchedAt: st.ModTime(), Path: path, Version: version}, nil
}

// fetch GETs url and returns its body, at most MaxFileSize bytes.
func fetch(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", url, err)
	}
	if int64(len(b)) > MaxFileSize {
		return nil, fmt.Errorf("%s: more than the %d bytes an index may have", url, MaxFileSize)
	}
	return b, nil
}

// writeAtomic writes b to dir/name through a temporary file renamed over it, the directory
// 0700 and the file 0600.
func writeAtomic(dir, name string, b []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp") // created 0600
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	path := filepath.Join(dir, name)
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}
