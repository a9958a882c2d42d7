package registry

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// indexServer serves body at /registry.json over TLS on loopback.
func indexServer(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

func serve(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/registry.json" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	}
}

func TestRefresh(t *testing.T) {
	srv := indexServer(t, serve(newerIndex))
	dir := filepath.Join(t.TempDir(), "cache", "acpprobe")
	x, err := Refresh(t.Context(), RefreshOptions{URL: srv.URL + "/registry.json", Client: srv.Client(), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, CacheFile)
	if x.Path != path || x.Version != "1.0.0" || len(x.Entries) != 3 || x.IsSnapshot() {
		t.Errorf("index %+v", x)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("cache file: %v, mode %v; want 0600", err, st.Mode())
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("cache dir: %v, mode %v; want 0700", err, st.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	got, err := LoadCache(dir)
	if err != nil || got.Path != path || got.Version != "1.0.0" || !got.FetchedAt.Equal(x.FetchedAt) || len(got.Entries) != 3 {
		t.Fatalf("LoadCache: %+v, %v", got, err)
	}
	// The fetched index replaces the snapshot: its agents resolve, the snapshot's are gone,
	// and its claude-acp replaces the built-in one.
	r := got.Registry()
	if l, err := r.Resolve("fast-agent", linux("uvx")); err != nil || !slices.Equal(l.Argv, []string{"uvx", "fast-agent-acp==0.10.1", "-x"}) {
		t.Errorf("fast-agent: %+v, %v", l, err)
	}
	if _, err := r.Lookup("gemini"); err == nil {
		t.Errorf("gemini of the snapshot still resolves after a refresh without it")
	}
	if e, err := r.Lookup("claude-acp"); err != nil || e.Source != SourceRegistry || !got.FromIndex(e) {
		t.Errorf("claude-acp: %+v, %v", e, err)
	}
	if e, err := r.Lookup("codebuddy-code"); err != nil || e.Source != SourceBuiltin || got.FromIndex(e) {
		t.Errorf("built-in codebuddy-code: %+v, %v", e, err)
	}
}

// TestRefreshFailures: whatever goes wrong, the error says what, and the copy already in the
// cache stays as it was.
func TestRefreshFailures(t *testing.T) {
	dir := t.TempDir()
	good := indexServer(t, serve(newerIndex))
	if _, err := Refresh(t.Context(), RefreshOptions{URL: good.URL + "/registry.json", Client: good.Client(), Dir: dir}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, CacheFile))
	if err != nil {
		t.Fatal(err)
	}
	badTarget := strings.Replace(newerIndex, `"cmd": "./codex-acp",`, `"cmd": "./codex-acp", "unpack": true,`, 1)
	noVersion := strings.Replace(newerIndex, `"version": "0.20.0",`, ``, 1)
	hang := make(chan struct{})
	defer close(hang)
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		url     string // default: the server's /registry.json
		want    string
	}{
		{"not found", serve(newerIndex), "/other.json", "404 Not Found"},
		{"not JSON", serve("<html>"), "", "not JSON"},
		{"schema", serve(badTarget), "", `does not match the registry's index schema: at /agents/2/distribution/binary/linux-x86_64`},
		{"no version", serve(noVersion), "", `does not match the registry's index schema: at /agents/2`},
		{"no extensions", serve(`{"version": "1.0.0", "agents": []}`), "", `missing property 'extensions'`},
		{"too big", func(w http.ResponseWriter, r *http.Request) {
			io.CopyN(w, neverEnding('x'), MaxFileSize+1)
		}, "", "more than the 16777216 bytes an index may have"},
		{"hangs", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-hang:
			}
		}, "", "no whole answer within 500ms"},
		{"redirect to http", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/registry.json", http.StatusFound)
		}, "", "fetched over https only"},
		{"plain http", nil, "http://127.0.0.1:1/registry.json", "fetched over https only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, client := tc.url, http.DefaultClient
			if tc.handler != nil {
				srv := indexServer(t, tc.handler)
				client = srv.Client()
				if url == "" {
					url = "/registry.json"
				}
				url = srv.URL + url
			}
			timeout := 30 * time.Second // a 16 MiB body under -race takes a while
			if tc.name == "hangs" {
				timeout = 500 * time.Millisecond
			}
			_, err := Refresh(t.Context(), RefreshOptions{URL: url, Client: client, Dir: dir, Timeout: timeout})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one that says %q", err, tc.want)
			}
			after, rerr := os.ReadFile(filepath.Join(dir, CacheFile))
			if rerr != nil || !bytes.Equal(after, before) {
				t.Errorf("the cached index changed (%v)", rerr)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestLoadCache(t *testing.T) {
	dir := t.TempDir()
	if _, err := LoadCache(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no cache: %v, want fs.ErrNotExist", err)
	}
	writeFile(t, dir, CacheFile, `{"version": "1.0.0", "agents": [{"id": "x"}], "extensions": []}`)
	if _, err := LoadCache(dir); err == nil || !strings.Contains(err.Error(), "does not match the registry's index schema") {
		t.Errorf("a cache that is no index: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, CacheFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, CacheFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCache(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory as the cache: %v", err)
	}
}

func TestIndexAge(t *testing.T) {
	snap := Snapshot()
	now := time.Date(2026, 2, 17, 12, 0, 0, 0, time.UTC)
	if snap.Name() != "the ACP registry snapshot of 2026-02-07" || snap.AgeText(now) != "10 days old" || !snap.IsSnapshot() {
		t.Errorf("snapshot: %q, %q", snap.Name(), snap.AgeText(now))
	}
	fetched := Index{Path: "/c/registry.json", FetchedAt: time.Date(2026, 2, 17, 1, 2, 0, 0, time.UTC)}
	if fetched.Name() != "the ACP registry fetched on 2026-02-17 01:02 UTC" || fetched.AgeText(now) != "less than a day old" {
		t.Errorf("fetched: %q, %q", fetched.Name(), fetched.AgeText(now))
	}
	if got := fetched.AgeText(now.Add(36 * time.Hour)); got != "1 day old" {
		t.Errorf("a day and a half: %q", got)
	}
}
