//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/acpprobe/acpprobe/internal/safefs"
	"github.com/acpprobe/acpprobe/record"
)

// Options configures a Sandbox. The zero value is a record.LevelEnvHome sandbox under os.TempDir()
// filtering os.Environ().
type Options struct {
	// Parent is where the sandbox directory is created (os.TempDir() when empty). Anywhere
	// works: the sandbox's TMPDIR is a sibling of its HOME, which is what codex checks before
	// creating its helper links (env.json).
	Parent string
	// KeepDir, when set, is where the sandbox is created instead (absent, or an empty
	// directory), and Close leaves it there for inspection (--keep-sandbox DIR).
	KeepDir string
	// Workspace is the agent's working directory (--cwd); a fresh directory inside the
	// sandbox when empty.
	Workspace string
	// Environ is the caller's environment to filter (os.Environ() when nil).
	Environ []string
	// Env holds KEY=VALUE pairs given to the agent on purpose (--env); PassEnv names
	// variables of Environ passed through on purpose (--pass-env). Neither may name a
	// variable the sandbox sets itself (HOME, TMPDIR, the XDG directories, BROWSER, the
	// agents' home variables).
	Env     []string
	PassEnv []string
	// Net asks for record.LevelNet; New fails when it is not available here.
	Net bool
	// NetSink, at record.LevelNet, answers and records the agent's DNS lookups and connection
	// attempts on its loopback (see ServeNetwork and Network).
	NetSink bool
	// Ports are TCP ports to listen on at 127.0.0.1 inside the agent's network namespace
	// (record.LevelNet only): Listeners hands them over once the agent started, so that a loopback
	// server of the caller (the model emulator) is reachable from the agent.
	Ports []int
	// FakeDisplay sets DISPLAY to a display that does not exist, so that agents which only
	// try a browser login on a desktop try it here too, where the shims record it.
	FakeDisplay bool
	// MaxEntries caps the entries a snapshot looks at (DefaultMaxEntries when 0).
	MaxEntries int
}

// fakeDisplay is an X display no server answers (no socket is ever created for it).
const fakeDisplay = ":65535"

// Sandbox is the throwaway place of one agent run. Its methods are safe for concurrent use.
type Sandbox struct {
	opts   Options
	dir    *safefs.Dir // the root, held open from its creation: its path may be replaced, not it
	root   string
	home   string
	tmp    string
	run    string
	work   string
	shims  *Shims
	env    []string
	envRep record.EnvReport
	level  record.Level
	net    *netHandoff // record.LevelNet only

	mu     sync.Mutex
	closed bool
	kept   bool
}

// New creates the sandbox directory and everything in it.
func New(opts Options) (*Sandbox, error) {
	if opts.Net {
		if c := Available(); !c.Net {
			return nil, fmt.Errorf("isolation level net is not available here: %s", c.NetUnavailable)
		}
	} else if len(opts.Ports) > 0 || opts.NetSink {
		return nil, errors.New("sandbox ports and the network sink need the net level")
	}
	s := &Sandbox{opts: opts, level: record.LevelEnvHome}
	if opts.Net {
		s.level = record.LevelNet
	}
	var err error
	if opts.KeepDir != "" {
		s.dir, err = makeKeepDir(opts.KeepDir)
		s.kept = true
	} else {
		s.dir, err = safefs.Create(resolved(opts.Parent), "acpprobe-sandbox-*")
	}
	if err != nil {
		return nil, err
	}
	if err := s.build(); err != nil {
		if s.kept {
			s.dir.Close()
		} else {
			_ = s.dir.Remove()
		}
		return nil, err
	}
	return s, nil
}

// resolved is dir (the system's temporary directory when empty) with its symbolic links
// resolved (/tmp may itself be a link, as on macOS): the sandbox's paths then hold none, and
// a link found in one later was planted.
func resolved(dir string) string {
	if dir == "" {
		dir = os.TempDir()
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return dir
}

// makeKeepDir makes dir (absent, or empty) the sandbox root and returns it open.
func makeKeepDir(dir string) (*safefs.Dir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(abs, 0o700); err != nil {
		if !os.IsExist(err) {
			return nil, err
		}
		f, rerr := openDirFollow(abs) // never blocks, should a FIFO be there
		if rerr != nil {
			return nil, rerr
		}
		entries, _ := f.ReadDir(1)
		f.Close()
		if len(entries) > 0 {
			return nil, fmt.Errorf("--keep-sandbox %s: the directory is not empty", dir)
		}
		if err := os.Chmod(abs, 0o700); err != nil {
			return nil, err
		}
	}
	return safefs.OpenDir(resolved(abs))
}

// build lays out the sandbox and its environment.
func (s *Sandbox) build() error {
	var err error
	root := s.dir.Path()
	s.root = root
	s.home = filepath.Join(root, "home")
	s.tmp = filepath.Join(root, "tmp")
	s.run = filepath.Join(root, "run")
	s.work = s.opts.Workspace
	if s.work == "" {
		s.work = filepath.Join(root, "workspace")
	} else if s.work, err = filepath.Abs(s.work); err != nil {
		return err
	} else if st, err := os.Stat(s.work); err != nil || !st.IsDir() {
		return fmt.Errorf("workspace %s: not a directory (%v)", s.work, err)
	}
	own := map[string]string{
		"HOME":            s.home,
		"TMPDIR":          s.tmp,
		"XDG_RUNTIME_DIR": s.run,
		"PWD":             s.work,
	}
	for name, rel := range xdgDefault {
		own[name] = filepath.Join(s.home, rel)
	}
	dirs := []string{s.home, s.tmp, s.run}
	if s.opts.Workspace == "" {
		dirs = append(dirs, s.work)
	}
	for _, name := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"} {
		dirs = append(dirs, own[name])
	}
	vars := func(name string) string { return own[name] }
	for _, a := range table().Agents {
		for name, expr := range a.Env {
			p := expand(expr, s.home, vars)
			if !within(s.home, p) {
				return fmt.Errorf("env.json: %s=%s is not inside the sandbox HOME", name, expr)
			}
			own[name] = p
		}
		for _, expr := range a.Create {
			dirs = append(dirs, expand(expr, s.home, vars))
		}
	}
	for _, d := range dirs {
		rel, err := filepath.Rel(root, d)
		if err != nil || !within(root, d) {
			return fmt.Errorf("sandbox: %s is not inside the sandbox", d)
		}
		if err := s.dir.MkdirAll(rel, 0o700); err != nil {
			return err
		}
	}
	if s.shims, err = newShims(s.dir); err != nil {
		return err
	}
	own["BROWSER"] = s.shims.Browser()
	if s.opts.FakeDisplay {
		own["DISPLAY"] = fakeDisplay
	}
	host := s.opts.Environ
	if host == nil {
		host = os.Environ()
	}
	s.env, s.envRep, err = buildEnv(host, own, s.shims.Bin(), s.opts.PassEnv, s.opts.Env)
	if err != nil {
		return err
	}
	if s.level == record.LevelNet {
		s.net = newNetHandoff(s.opts.Ports, s.opts.NetSink)
	}
	return nil
}

// within reports whether path is dir or inside it.
func within(dir, path string) bool {
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator))
}

// Dir is the sandbox's root directory.
func (s *Sandbox) Dir() string { return s.root }

// Home is the agent's HOME. record.Files a backend profile needs (codex's config.toml) go here,
// before the first Snapshot.
func (s *Sandbox) Home() string { return s.home }

// TempDir is the agent's TMPDIR.
func (s *Sandbox) TempDir() string { return s.tmp }

// Workspace is the agent's working directory.
func (s *Sandbox) Workspace() string { return s.work }

// Level is the isolation level in force.
func (s *Sandbox) Level() record.Level { return s.level }

// Env is the agent's complete environment (not a merge over os.Environ), sorted.
func (s *Sandbox) Env() []string { return append([]string(nil), s.env...) }

// record.EnvReport says, by name only, what became of the caller's environment.
func (s *Sandbox) EnvReport() record.EnvReport { return s.envRep }

// Dropped lists the names of the caller's variables that did not reach the agent.
func (s *Sandbox) Dropped() []string { return append([]string(nil), s.envRep.Dropped...) }

// Snapshot takes the metadata of everything in the agent's HOME, TMPDIR, XDG_RUNTIME_DIR and
// workspace, shown as "home/…", "tmp/…", "run/…" and "workspace/…". Take one before the
// agent starts and one after it is gone; Diff gives the changes.
func (s *Sandbox) Snapshot() *Snapshot {
	roots := []root{
		{label: "home", within: s.dir, path: "home"},
		{label: "tmp", within: s.dir, path: "tmp"},
		{label: "run", within: s.dir, path: "run"},
		{label: "workspace", within: s.dir, path: "workspace"},
	}
	if s.opts.Workspace != "" { // the user's own directory (--cwd), outside the sandbox
		roots[3] = root{label: "workspace", path: s.work}
	}
	return takeSnapshot(roots, s.opts.MaxEntries)
}

// HomeLabel is the label a snapshot of box shows a path inside its HOME under ("home/.codex").
func (s *Sandbox) HomeLabel(path string) (string, bool) {
	rel, err := filepath.Rel(s.home, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	return "home/" + filepath.ToSlash(rel), true
}

// RealHome is the caller's real HOME (in the environment the sandbox filtered) and the places
// agents keep their state there (HomePaths): an agent that writes there by absolute path,
// past the sandbox, is seen by comparing them too (SnapshotHome). "" when there is no HOME.
func (s *Sandbox) RealHome() (home string, paths []string) {
	host := s.opts.Environ
	if host == nil {
		host = os.Environ()
	}
	if home = LookupEnv(host, "HOME"); home == "" {
		return "", nil
	}
	return home, HomePaths(home, host)
}

// BrowserLaunches returns the browser and URL launches the shims recorded, and how many more
// there were beyond the cap.
func (s *Sandbox) BrowserLaunches() ([]Launch, int, error) { return s.shims.Launches() }

// Shims are the sandbox's browser shims.
func (s *Sandbox) Shims() *Shims { return s.shims }

// Prepare makes cmd run inside the sandbox. cmd.Env must be nil (it becomes Env()) or built
// from Env() (a caller may add its own variables, such as a run marker): a HOME other than the
// sandbox's is refused. An empty cmd.Dir becomes the workspace. At record.LevelNet the program is
// started through the namespace helper (see Init), in new user and network namespaces.
// Prepare keeps the caller's SysProcAttr settings (process group, session, death signal).
func (s *Sandbox) Prepare(cmd *exec.Cmd) error {
	if cmd.Err != nil {
		return cmd.Err
	}
	if cmd.Env == nil {
		cmd.Env = s.Env()
	} else if home := LookupEnv(cmd.Env, "HOME"); home != s.home {
		return fmt.Errorf("sandbox: the command's environment is not the sandbox's (HOME=%q)", home)
	}
	if cmd.Dir == "" {
		cmd.Dir = s.work
	}
	if s.level == record.LevelNet {
		return s.net.prepare(cmd)
	}
	return nil
}

// LookupEnv returns the last value of name in env, KEY=VALUE pairs ("" when absent): the
// value a process started with env sees.
func LookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// Keep makes Close leave the sandbox in place (at Dir) for inspection.
func (s *Sandbox) Keep() {
	s.mu.Lock()
	s.kept = true
	s.mu.Unlock()
}

// Kept reports whether Close leaves the sandbox in place.
func (s *Sandbox) Kept() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kept
}

// Close removes the sandbox, unless it is kept. Call it once the agent and all its
// descendants are gone. Removal goes through the sandbox's directory as it was created,
// whatever now has its name: it never follows a symbolic link (a link to a directory outside
// is removed, not what it points to), never enters a mount point (a directory of the user's
// mounted into the sandbox is left, with what it holds), and makes writable again only the
// directories it opened there to empty them. What it could not remove is in the error, a
// *safefs.RemoveError (see Leftovers). A kept sandbox gets its read-only shim directory back to
// writable, so the user can remove it with rm -r.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.net != nil {
		s.net.close()
	}
	if s.kept {
		defer s.dir.Close()
		return s.dir.Chmod("bin", 0o700)
	}
	return s.dir.Remove()
}

// Leftovers lists what a removal left behind (from the error of Close or Shims.Remove), as
// the side-effect report says it: nil when everything went.
func Leftovers(err error) []record.Leftover {
	if err == nil {
		return nil
	}
	var rerr *safefs.RemoveError
	if !errors.As(err, &rerr) {
		return []record.Leftover{{Path: ".", Reason: err.Error()}}
	}
	out := make([]record.Leftover, 0, len(rerr.Left)+1)
	for _, l := range rerr.Left {
		out = append(out, record.Leftover{Dir: rerr.Dir, Path: l.Path, Reason: l.Reason})
	}
	if rerr.More > 0 {
		out = append(out, record.Leftover{Dir: rerr.Dir, Path: "…", Reason: fmt.Sprintf("and %d more", rerr.More)})
	}
	return out
}
