package transport

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The cgroups of a host's agents (cgroup v2, the unified hierarchy). The host makes one cgroup
// for its run, acpprobe-<run>, beside itself in its own cgroup (the root of the hierarchy, or
// a subtree delegated to the user: systemd's user@.service, a container's own), and one for
// each launch inside it, named by the launch's token. The agent is started inside its launch's
// cgroup (clone3 CLONE_INTO_CGROUP: from its first instruction), so every process it starts
// is in it too, whatever that process changes of itself (its environment, its command line,
// its session, its namespaces): the sweeps list the cgroup, the teardown kills it at once
// (cgroup.kill, which no fork can outrun), and the watchdog kills the run's cgroup when the
// host dies. A process leaves only by writing cgroup.procs of a cgroup it may write to: one
// running as root, or a plain user's inside a delegated subtree; the marker, group, session
// and tree sweeps still look for it then.
type cgroupRun struct {
	dir string // the run's cgroup directory; "" when cgroups are not available
	why string // why not
	// mount and root: where the unified hierarchy is mounted, and the cgroup at its root
	// (as /proc/PID/cgroup names cgroups), so that a process's cgroup is a directory.
	mount, root string
}

// dirOf is the directory of the cgroup that /proc/PID/cgroup names path.
func (r cgroupRun) dirOf(path string) string {
	rel, _ := strings.CutPrefix(path, r.root)
	return filepath.Join(r.mount, rel)
}

var cgroupSetup struct {
	once sync.Once
	done atomic.Bool
	run  cgroupRun
}

// noCgroups turns the cgroups off (tests of the degraded path set it before the first launch).
var noCgroups bool

// runCgroup is the run's cgroup: none until the watchdog has started, which makes it
// (makeRunCgroup), so that one is never made that no watchdog would remove.
func runCgroup() cgroupRun {
	if !cgroupSetup.done.Load() {
		return cgroupRun{why: "no watchdog to end and remove it"}
	}
	return cgroupSetup.run
}

// makeRunCgroup makes the run's cgroup, once per host (see cgroupRun); the watchdog's first
// start calls it.
func makeRunCgroup() cgroupRun {
	defer cgroupSetup.done.Store(true)
	cgroupSetup.once.Do(func() {
		if noCgroups {
			cgroupSetup.run.why = "cgroups turned off"
			return
		}
		mount, root, path, err := ownCgroup()
		if err != nil {
			cgroupSetup.run.why = err.Error()
			return
		}
		cgroupSetup.run.mount, cgroupSetup.run.root = mount, root
		dir := filepath.Join(cgroupSetup.run.dirOf(path), "acpprobe-"+runToken())
		if err := unix.Mkdir(dir, 0o755); err != nil && err != unix.EEXIST {
			cgroupSetup.run.why = "no cgroup of its own can be made here (" + err.Error() + ": " + filepath.Dir(dir) + " is not delegated to this user)"
			return
		}
		if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
			_ = unix.Rmdir(dir)
			cgroupSetup.run.why = "the kernel has no cgroup.kill (before Linux 5.14)"
			return
		}
		cgroupSetup.run.dir = dir
	})
	return cgroupSetup.run
}

// ownCgroup finds this process's cgroup in the unified hierarchy (path, as /proc/self/cgroup
// names it) and where that hierarchy is mounted (mount, the mount's root cgroup being root).
func ownCgroup() (mount, root, path string, err error) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "", "", err
	}
	for _, line := range strings.Split(string(self), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if path == "" {
		return "", "", "", errors.New("no unified cgroup hierarchy (cgroup v2) here")
	}
	mounts, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", "", "", err
	}
	defer mounts.Close()
	s := bufio.NewScanner(mounts)
	for s.Scan() {
		// id parent major:minor root mountpoint options... - fstype source superoptions
		pre, post, ok := strings.Cut(s.Text(), " - ")
		f := strings.Fields(pre)
		if !ok || len(f) < 5 || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		if root := unescapeMount(f[3]); within(root, path) {
			return unescapeMount(f[4]), root, path, nil
		}
	}
	return "", "", "", errors.New("the unified cgroup hierarchy (cgroup v2) is not mounted here")
}

// within reports whether the slash-separated path is dir or below it.
func within(dir, path string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}

// cgroupOf is the directory of pid's cgroup in the unified hierarchy.
func (r cgroupRun) cgroupOf(pid int, buf *[]byte) (string, bool) {
	b, ok := readInto("/proc/"+strconv.Itoa(pid)+"/cgroup", buf)
	for ok && len(b) > 0 {
		var line []byte
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		if p, found := bytes.CutPrefix(line, []byte("0::")); found {
			return r.dirOf(string(p)), true
		}
	}
	return "", false
}

// unescapeMount undoes mountinfo's octal escapes (a space is \040).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// spare is a launch cgroup made ahead of need, off a launch's path: when the watchdog starts
// (early, on a goroutine of its own, in acpprobe's CLI), for the first launch. A later launch
// (check's short connections, a matrix's agents) makes its own.
var spare struct {
	sync.Mutex
	dir string
	fd  int
}

// prepareLaunchCgroup makes the spare launch cgroup unless there is one.
func prepareLaunchCgroup() {
	spare.Lock()
	have := spare.dir != ""
	spare.Unlock()
	if have {
		return
	}
	dir, fd := makeLaunchCgroup()
	if dir == "" {
		return
	}
	spare.Lock()
	defer spare.Unlock()
	if spare.dir != "" { // made meanwhile
		unix.Close(fd)
		_ = unix.Rmdir(dir)
		return
	}
	spare.dir, spare.fd = dir, fd
}

// newLaunchCgroup is the cgroup of a new launch, in the run's, open for CLONE_INTO_CGROUP:
// the spare one, else one made now. "" and -1 when cgroups are not available.
func newLaunchCgroup() (dir string, fd int) {
	spare.Lock()
	dir, fd = spare.dir, spare.fd
	spare.dir = ""
	spare.Unlock()
	if dir != "" {
		return dir, fd
	}
	return makeLaunchCgroup()
}

// makeLaunchCgroup makes a launch cgroup (a random name in the run's) and opens it.
func makeLaunchCgroup() (dir string, fd int) {
	run := runCgroup()
	if run.dir == "" {
		return "", -1
	}
	dir = filepath.Join(run.dir, randomHex())
	if err := unix.Mkdir(dir, 0o755); err != nil {
		return "", -1
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Rmdir(dir)
		return "", -1
	}
	return dir, fd
}

// dropLaunchCgroup removes a launch's cgroup once its agent has been torn down, off the
// teardown's path (the watchdog removes what is left when the host exits).
func dropLaunchCgroup(dir string, grace time.Duration) {
	go func() { _ = removeCgroup(dir, time.Now().Add(grace)) }()
}

// maxCgroups bounds the cgroups an agent may have made below its own that the host looks
// into (it may make them when it runs as root or owns its cgroup).
const maxCgroups = 256

// cgroupProcs lists the pids in the cgroup dir and in the cgroups below it.
func cgroupProcs(dir string, buf *[]byte) []int {
	var pids []int
	walkCgroups(dir, buf, func(d string) {
		b, ok := readInto(filepath.Join(d, "cgroup.procs"), buf)
		if !ok {
			return
		}
		for _, f := range bytes.Fields(b) {
			if pid, err := strconv.Atoi(string(f)); err == nil {
				pids = append(pids, pid)
			}
		}
	})
	return pids
}

// walkCgroups calls f with dir and each cgroup below it (at most maxCgroups), parents first.
// A cgroup's directory is listed only when its cgroup.stat counts cgroups below it (agents
// rarely make any: listing a cgroup's files costs more than reading its processes).
func walkCgroups(dir string, buf *[]byte, f func(string)) {
	queue := []string{dir}
	for n := 0; len(queue) > 0 && n < maxCgroups; n++ {
		d := queue[0]
		queue = queue[1:]
		f(d)
		if b, ok := readInto(filepath.Join(d, "cgroup.stat"), buf); ok && bytes.HasPrefix(b, []byte("nr_descendants 0\n")) {
			continue
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if e.IsDir() {
				queue = append(queue, filepath.Join(d, e.Name()))
			}
		}
	}
}

// killCgroup kills every process in the cgroup dir and below it at once (cgroup.kill): the
// kernel signals them all, and a process forked meanwhile is born into the cgroup and killed
// too.
func killCgroup(dir string) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
}

// removeCgroup waits, until deadline, for the cgroup dir to hold no live process, then
// removes it and the cgroups an agent made below it, deepest first. A cgroup whose processes
// could not be ended stays (the watchdog tries again when the host exits).
func removeCgroup(dir string, deadline time.Time) error {
	if err := waitEmpty(dir, deadline); err != nil {
		return err
	}
	var all []string
	var buf []byte
	walkCgroups(dir, &buf, func(d string) { all = append(all, d) })
	var first error
	for i := len(all) - 1; i >= 0; i-- {
		if err := unix.Rmdir(all[i]); err != nil && err != unix.ENOENT && first == nil {
			first = &os.PathError{Op: "rmdir", Path: all[i], Err: err}
		}
	}
	return first
}

// waitEmpty waits until the cgroup dir is not populated (cgroup.events says so, and the
// kernel wakes a poll on it when that changes), or the deadline.
func waitEmpty(dir string, deadline time.Time) error {
	fd, err := unix.Open(filepath.Join(dir, "cgroup.events"), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ENOENT {
			return nil
		}
		return err
	}
	defer unix.Close(fd)
	buf := make([]byte, 256)
	for {
		n, err := unix.Pread(fd, buf, 0)
		if err != nil {
			return err
		}
		if bytes.Contains(buf[:n], []byte("populated 0")) {
			return nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return errors.New("the cgroup " + dir + " still holds processes")
		}
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLPRI}}
		if _, err := unix.Poll(p, int(left/time.Millisecond)+1); err != nil && err != unix.EINTR {
			return err
		}
	}
}

// readInto reads a small kernel file into *buf (grown as needed).
func readInto(path string, buf *[]byte) ([]byte, bool) {
	var sc scanner
	sc.buf = *buf
	b, ok := sc.read(path, maxEnviron)
	*buf = sc.buf
	return b, ok
}
