//go:build unix

package sandbox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/internal/safefs"
)

// ShimPrograms are the programs the shims stand in for, first on the agent's PATH: the four
// that open URLs on Linux and macOS (xdg-open, open, sensible-browser, www-browser), Debian's
// x-www-browser (which sensible-browser and xdg-open try), and the fallbacks gemini-cli tries
// when xdg-open fails (gnome-open, kde-open, firefox, chromium, google-chrome).
var ShimPrograms = []string{
	"xdg-open", "open", "sensible-browser", "www-browser", "x-www-browser",
	"gnome-open", "kde-open", "firefox", "chromium", "chromium-browser", "google-chrome",
}

// browserShim is the name of the shim $BROWSER points at; its launches are reported as
// program "$BROWSER".
const browserShim = "acpprobe-browser"

// Launch caps: records beyond maxLaunches are counted, not read; a record is read up to
// maxLaunchBytes.
const (
	maxLaunches    = 1000
	maxLaunchBytes = 64 << 10
)

// Launch is one attempt to open a browser or a URL.
type Launch struct {
	Time    time.Time `json:"time"`
	Program string    `json:"program"` // the shimmed program, or "$BROWSER"
	// Args are the arguments as given, URL included: the caller redacts them.
	Args []string `json:"args"`
	// Truncated is set when the record was cut (too long, or still being written).
	Truncated bool `json:"truncated,omitempty"`
}

// Shims is a directory of browser shims and the log they write. The shims are shell scripts
// that use nothing but shell builtins: they run no program, whatever PATH says, open nothing,
// and exit 1 (so the agent goes on without a browser, as on a headless machine). Each call
// writes its own record file (a unique name, created exclusively), so concurrent calls never
// mix. A record is "acpprobe-launch/1", the program, the argument count and the arguments,
// each followed by a NUL byte, which no argument can contain. The shims' directory is held
// open: what is read or changed there later goes through it, never through a link the agent
// put in its place.
type Shims struct {
	dir      *safefs.Dir // holds bin and launches
	own      bool        // a temporary directory of its own (NewTempShims), removed by Remove
	bin, log string
}

// NewTempShims writes the shims into a new temporary directory (acpprobe-shims-*), for a run
// outside a Sandbox; Remove removes it.
func NewTempShims() (*Shims, error) {
	d, err := safefs.Create(resolved(""), "acpprobe-shims-*")
	if err != nil {
		return nil, err
	}
	s, err := newShims(d)
	if err != nil {
		_ = d.Remove()
		return nil, err
	}
	s.own = true
	return s, nil
}

// newShims writes the shims into dir/bin and prepares their log in dir/launches.
func newShims(dir *safefs.Dir) (*Shims, error) {
	s := &Shims{dir: dir, bin: filepath.Join(dir.Path(), "bin"), log: filepath.Join(dir.Path(), "launches")}
	for _, d := range []string{"bin", "launches"} {
		if err := unix.Mkdirat(dir.Fd(), d, 0o700); err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(dir.Path(), d), Err: err}
		}
	}
	// One script, hard-linked under every name: the name it is run by says which program it
	// stands in for. A link costs a third of a file written (creating the shims is on every
	// probe's path to the spawn). bin was made just now: the script is created there, new.
	bin, err := dir.Open("bin")
	if err != nil {
		return nil, err
	}
	defer bin.Close()
	fd, err := unix.Openat(bin.Fd(), browserShim, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o500)
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: s.Browser(), Err: err}
	}
	f := os.NewFile(uintptr(fd), s.Browser())
	_, err = f.Write(shimScript(s.log))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	for _, name := range ShimPrograms {
		if err := unix.Linkat(bin.Fd(), browserShim, bin.Fd(), name, 0); err != nil {
			return nil, &os.LinkError{Op: "link", Old: browserShim, New: filepath.Join(s.bin, name), Err: err}
		}
	}
	// Read-only, so that nothing lands here by accident; Close makes it writable again.
	if err := unix.Fchmod(bin.Fd(), 0o500); err != nil {
		return nil, err
	}
	return s, nil
}

// Remove removes the temporary directory of NewTempShims (as Sandbox.Close removes a
// sandbox: through the directory held open, never through a link, never across a mount).
// What it could not remove is in the error (see Leftovers).
func (s *Shims) Remove() error {
	if !s.own {
		return errors.New("sandbox: these shims belong to a sandbox: Close removes them")
	}
	return s.dir.Remove()
}

// Dir is the directory holding the shims and their log.
func (s *Shims) Dir() string { return s.dir.Path() }

// Bin is the directory to put first on the agent's PATH.
func (s *Shims) Bin() string { return s.bin }

// Browser is the value for the agent's $BROWSER.
func (s *Shims) Browser() string { return filepath.Join(s.bin, browserShim) }

// Env returns environ with the shims in force: their directory first on PATH and BROWSER
// pointing at a shim. It is for runs outside a Sandbox (which sets both itself).
func (s *Shims) Env(environ []string) []string {
	path := ""
	out := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH":
			path = v
		case "BROWSER":
		default:
			out = append(out, kv)
		}
	}
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return append(out, "PATH="+s.bin+string(filepath.ListSeparator)+path, "BROWSER="+s.Browser())
}

// shimScript is the shell script of every shim, logging into dir. The program it stands in
// for is the name it was run by ($0; the browserShim stands for $BROWSER).
func shimScript(dir string) []byte {
	return []byte(`#!/bin/sh
# acpprobe browser shim: it records the call and opens nothing; its name is the program it
# stands in for. Only shell builtins run here (printf, test, arithmetic), whatever PATH holds.
set -C
p=${0##*/}
[ "$p" = ` + browserShim + ` ] && p='$BROWSER'
n=0
while [ "$n" -lt 64 ]; do
	{ printf 'acpprobe-launch/1\0%s\0%s\0' "$p" "$#"; printf '%s\0' "$@"; } 2>/dev/null >` + shQuote(dir) + `/"$$.$n" && exit 1
	n=$((n + 1))
done
exit 1
`)
}

// shQuote quotes s for the shell: single quotes, with each ' written as '\”.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Launches reads the records the shims wrote, oldest first. Beyond maxLaunches records the
// rest are only counted (dropped).
func (s *Shims) Launches() (launches []Launch, dropped int, err error) {
	dir, err := s.dir.Open("launches")
	if err != nil {
		return nil, 0, err
	}
	defer dir.Close()
	names, err := dir.Names()
	if err != nil {
		return nil, 0, err
	}
	if len(names) > maxLaunches {
		names, dropped = names[:maxLaunches], len(names)-maxLaunches
	}
	launches = []Launch{}
	for _, name := range names {
		if l, ok := readLaunch(dir, name); ok {
			launches = append(launches, l)
		}
	}
	sort.SliceStable(launches, func(i, j int) bool { return launches[i].Time.Before(launches[j].Time) })
	return launches, dropped, nil
}

// readLaunch reads one record, if it is a regular file in the record format.
func readLaunch(dir *safefs.Dir, name string) (Launch, bool) {
	f, err := dir.OpenFile(name)
	if err != nil {
		return Launch{}, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Launch{}, false
	}
	data, err := io.ReadAll(io.LimitReader(f, maxLaunchBytes+1))
	if err != nil {
		return Launch{}, false
	}
	l := Launch{Time: st.ModTime(), Args: []string{}}
	if len(data) > maxLaunchBytes {
		data, l.Truncated = data[:maxLaunchBytes], true
	}
	fields := bytes.Split(data, []byte{0})
	if len(fields) < 3 || string(fields[0]) != "acpprobe-launch/1" {
		return Launch{}, false
	}
	l.Program = string(fields[1])
	argc, err := strconv.Atoi(string(fields[2]))
	if err != nil || argc < 0 {
		return Launch{}, false
	}
	// Each field ends with NUL, so the split leaves one empty element at the end of a
	// complete record; with no argument, printf still wrote one empty field.
	args := fields[3:]
	complete := len(args) > argc
	if complete {
		args = args[:argc]
	} else if len(args) > 0 {
		args = args[:len(args)-1] // the last one was cut
	}
	if !complete {
		l.Truncated = true
	}
	for _, a := range args {
		l.Args = append(l.Args, string(a))
	}
	return l, true
}

// openDirFollow opens a directory that may be reached through a symbolic link, without
// blocking if it is something else (a FIFO).
func openDirFollow(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
