package cli

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/acpprobe/acpprobe/registry"
)

// currentIndex is a registry index as the registry publishes it, with a newer gemini.
const currentIndex = `{"version": "1.0.0", "extensions": [], "agents": [
  {"id": "gemini", "name": "Gemini CLI", "version": "0.61.0", "description": "Google's official CLI for Gemini",
   "distribution": {"npx": {"package": "@google/gemini-cli@0.61.0", "args": ["--acp"]}}}]}`

// TestAgentsRefresh: agents --refresh fetches the index over HTTPS (here from a TLS server on
// loopback, trusted through the options only tests set), and ids then resolve through it;
// a fetch that fails lists the index in use and says which it is and how old.
func TestAgentsRefresh(t *testing.T) {
	var healthy atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthy.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, currentIndex)
	}))
	defer srv.Close()
	dir := t.TempDir()
	run := func() (string, string, error) {
		var out, errOut bytes.Buffer
		opts := &AgentsOptions{IO: Stdio{Out: &out, Err: &errOut}, Refresh: true,
			Fetch: registry.RefreshOptions{URL: srv.URL + "/registry.json", Client: srv.Client()}}
		opts.Sources.cacheDir = dir
		err := agentsRun(t.Context(), opts)
		return out.String(), errOut.String(), err
	}

	// The first fetch fails: the snapshot is listed, and the error says how old it is.
	out, _, err := run()
	if exitCode(err) != ExitIO || !regexp.MustCompile(`^cannot fetch the current registry: .*: 503 Service Unavailable; still using the ACP registry snapshot of 2026-02-07 \(\d+ days old\)$`).MatchString(err.Error()) {
		t.Errorf("failed fetch without a copy: %v (exit %d)", err, exitCode(err))
	}
	if !strings.HasPrefix(out, "ACP registry snapshot 2026-02-07") || !regexp.MustCompile(`(?m)^gemini +Gemini CLI +0\.27\.3 `).MatchString(out) {
		t.Errorf("failed fetch without a copy: the snapshot is not listed:\n%s", out)
	}

	healthy.Store(true)
	out, errOut, err := run()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, registry.CacheFile)
	if errOut != "acpprobe agents: fetched the ACP registry (index 1.0.0, 1 agents) into "+path+"\n" {
		t.Errorf("stderr %q", errOut)
	}
	if !strings.HasPrefix(out, "ACP registry fetched on ") || !regexp.MustCompile(`(?m)^gemini +Gemini CLI +0\.61\.0 +npx +registry`).MatchString(out) {
		t.Errorf("the fetched index is not listed:\n%s", out)
	}

	// Every command now resolves ids through it.
	var pf probeFlags
	pf.register(newFlagSet("probe"), jsonFlag|commandFlag|agentsFlag|budgetFlags|transcriptFlag)
	pf.agents.cacheDir = dir
	opts, err := pf.resolveID("gemini", nil, "acpprobe probe")
	if err != nil && exitCode(err) != ExitNotProbed { // npx may be missing here: then it cannot run
		t.Fatal(err)
	}
	if argv := opts.Launcher.CommandLine(); !slices.Equal(argv, []string{"npx", "-y", "@google/gemini-cli@0.61.0", "--acp"}) {
		t.Errorf("gemini after a refresh runs %q", argv)
	}

	// A later fetch that fails keeps the copy, and says so.
	healthy.Store(false)
	out, _, err = run()
	if exitCode(err) != ExitIO || !regexp.MustCompile(`; still using the ACP registry fetched on .* \(less than a day old\)$`).MatchString(err.Error()) {
		t.Errorf("failed fetch with a copy: %v", err)
	}
	if !strings.Contains(out, "0.61.0") {
		t.Errorf("failed fetch with a copy: the copy is not listed:\n%s", out)
	}
}
