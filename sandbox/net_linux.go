package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/acpprobe/acpprobe/record"
)

// The namespace helper. At record.LevelNet the agent is started as this program (os.Executable)
// with argv[0] initArg0, in new user and network namespaces. The helper brings the loopback
// interface up (a new network namespace has only "lo", and it is down), opens the listeners
// the caller asked for and hands them over, drops the capability it was given for that, and
// execs the agent in place: same process, same pid, same process group. The helper writes its
// own uid and gid maps (the caller's ids mapped to themselves): the caller need not write the
// maps of a child, which it cannot do once it is not dumpable (transport makes acpprobe so,
// and a child's /proc files then belong to root until it execs).
const (
	initArg0 = "acpprobe-sandbox-init"
	initEnv  = "ACPPROBE_SANDBOX_INIT" // "exec", or "check" (bring lo up, test it, exit 0)
	portsEnv = "ACPPROBE_SANDBOX_PORTS"
	sinkEnv  = "ACPPROBE_SANDBOX_SINK" // "1": set up the network sink (netsink_linux.go)
	idsEnv   = "ACPPROBE_SANDBOX_IDS"  // "UID GID": the ids the helper maps to themselves
	// handoffFD is where the helper finds its end of the socket pair (cmd.ExtraFiles[0]).
	handoffFD = 3

	capSetgid         = 6
	capSetuid         = 7
	capNetBindService = 10
	capNetAdmin       = 12
	capSysAdmin       = 21
	prCapAmbient      = 47
	prCapAmbientClear = 4
)

// Init runs the namespace helper when this process was started as one, and then never
// returns; otherwise it returns at once. A program that uses record.LevelNet calls it first thing in
// main (and in TestMain): the helper is the program itself, re-executed.
func Init() {
	if len(os.Args) == 0 || os.Args[0] != initArg0 {
		return
	}
	mode := os.Getenv(initEnv)
	if mode != "exec" && mode != "check" {
		return
	}
	err := runInit(mode)
	fmt.Fprintf(os.Stderr, "acpprobe sandbox: %v\n", err)
	os.Exit(125)
}

// runInit is the helper's work; it returns only on failure (or exits 0 in check mode).
func runInit(mode string) error {
	if err := mapIDs(os.Getenv(idsEnv)); err != nil {
		return fmt.Errorf("mapping the user and group ids: %w", err)
	}
	if err := loopbackUp(); err != nil {
		return fmt.Errorf("bringing the loopback interface up: %w", err)
	}
	if mode == "check" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			return err
		}
		c.Close()
		os.Exit(0)
	}
	if os.Getenv(portsEnv) != "" || os.Getenv(sinkEnv) != "" {
		if err := handOver(os.Getenv(portsEnv), os.Getenv(sinkEnv) != ""); err != nil {
			return fmt.Errorf("listening inside the network namespace: %w", err)
		}
	}
	if len(os.Args) < 3 {
		return errors.New("no program to run")
	}
	env := make([]string, 0, len(os.Environ()))
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, initEnv+"=") && !strings.HasPrefix(kv, portsEnv+"=") && !strings.HasPrefix(kv, sinkEnv+"=") && !strings.HasPrefix(kv, idsEnv+"=") {
			env = append(env, kv)
		}
	}
	// The agent keeps no capability: the ambient set given to the helper is cleared, so a
	// non-root agent execs with none (a root agent keeps root's, inside its namespaces only).
	_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClear, 0, 0, 0, 0)
	return syscall.Exec(os.Args[1], os.Args[2:], env)
}

// mapIDs writes the helper's own uid and gid maps: ids ("UID GID", the caller's) mapped to
// themselves, setgroups denied first (what an unprivileged process may write for itself, with
// the CAP_SETUID, CAP_SETGID and CAP_SYS_ADMIN of its new namespace in its ambient set).
func mapIDs(ids string) error {
	var uid, gid int
	if _, err := fmt.Sscanf(ids, "%d %d", &uid, &gid); err != nil {
		return fmt.Errorf("%s=%q: %v", idsEnv, ids, err)
	}
	for _, w := range []struct{ file, data string }{
		{"/proc/self/setgroups", "deny"},
		{"/proc/self/uid_map", fmt.Sprintf("%d %d 1", uid, uid)},
		{"/proc/self/gid_map", fmt.Sprintf("%d %d 1", gid, gid)},
	} {
		if err := os.WriteFile(w.file, []byte(w.data), 0); err != nil {
			return err
		}
	}
	return nil
}

// ifreq is struct ifreq with the flags member of its union (40 bytes on 64-bit Linux).
type ifreq struct {
	name  [syscall.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// loopbackUp sets IFF_UP on "lo" with the SIOCSIFFLAGS ioctl: no "ip" tool needed.
func loopbackUp() error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	var req ifreq
	copy(req.name[:], "lo")
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCGIFFLAGS, uintptr(unsafe.Pointer(&req))); e != 0 {
		return e
	}
	req.flags |= syscall.IFF_UP | syscall.IFF_RUNNING
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.SIOCSIFFLAGS, uintptr(unsafe.Pointer(&req))); e != 0 {
		return e
	}
	return nil
}

// handOver listens on 127.0.0.1 at each port of the comma-separated list and, with sink, opens
// the network sink's sockets (openSink), and sends them all to the parent over the socket pair
// at handoffFD, in one message: the ports' listeners first. The message's text is "ok", then
// " sink=" and the sink's sockets (or " nosink=" and why the sink could not be set up: the
// agent then runs without it).
func handOver(list string, sink bool) error {
	f := os.NewFile(handoffFD, "sandbox-handoff")
	defer f.Close()
	conn, err := net.FileConn(f)
	if err != nil {
		return err
	}
	defer conn.Close()
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return errors.New("the handoff descriptor is not a unix socket")
	}
	var fds []int
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for _, p := range strings.Split(list, ",") {
		if p == "" {
			continue
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			return err
		}
		l, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port})
		if err != nil {
			_, _, _ = uc.WriteMsgUnix([]byte("error: "+err.Error()), nil, nil)
			return err
		}
		lf, err := l.File()
		l.Close()
		if err != nil {
			return err
		}
		files = append(files, lf)
		fds = append(fds, int(lf.Fd()))
	}
	msg := "ok"
	if sink {
		specs, sinkFiles, err := openSink()
		if err != nil {
			msg += " nosink=" + err.Error()
		} else {
			msg += " sink=" + strings.Join(specs, ",")
			for _, sf := range sinkFiles {
				files = append(files, sf)
				fds = append(fds, int(sf.Fd()))
			}
		}
	}
	_, _, err = uc.WriteMsgUnix([]byte(msg), syscall.UnixRights(fds...), nil)
	return err
}

// netHandoff is the parent's side of record.LevelNet: the command's namespaces, and the listeners
// the helper hands over.
type netHandoff struct {
	ports []int
	sink  bool // set up the network sink (Options.NetSink)

	mu            sync.Mutex
	prepared      bool
	preparedCh    chan struct{} // closed by prepare
	parent, child *os.File
	listeners     []net.Listener
	sinkFiles     []*os.File // the sink's sockets, as handed over
	sinkSpecs     []string   // what each is ("udp:10.0.0.2:53", "tcp:0.0.0.0:443")
	sinkErr       string     // why there is no sink
	served        bool       // the sink's sockets went to sinkServer
	sinkServer    *sink
	received      bool
	err           error
}

// netAttr starts cmd (the helper) in new user and network namespaces, with the caller's uid
// and gid for the helper to map to themselves (the only mapping an unprivileged process may
// write; mapIDs), and CAP_SETUID, CAP_SETGID and CAP_SYS_ADMIN (for that: setgroups asks
// for the last), CAP_NET_ADMIN (lo) and CAP_NET_BIND_SERVICE in its ambient set, all of them
// the namespace's only and none of them left to the agent.
func netAttr(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	attr := cmd.SysProcAttr
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	attr.AmbientCaps = append(attr.AmbientCaps, capSetuid, capSetgid, capSysAdmin, capNetAdmin, capNetBindService)
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%d %d", idsEnv, os.Getuid(), os.Getgid()))
}

// prepare wraps cmd in the helper.
func (h *netHandoff) prepare(cmd *exec.Cmd) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("sandbox: the namespace helper is this program: %w", err)
	}
	// Only the first command gets the ports and the sink; a later one (check's short extra
	// connections) gets new namespaces of its own with nothing but its loopback: its lookups
	// and connections fail at once, unrecorded.
	first := !h.prepared
	handoff := first && (len(h.ports) > 0 || h.sink)
	if len(cmd.ExtraFiles) > 0 && handoff {
		return errors.New("sandbox: the command already has extra files; the listener handoff needs descriptor 3")
	}
	args := cmd.Args
	if len(args) == 0 {
		args = []string{cmd.Path}
	}
	cmd.Args = append([]string{initArg0, cmd.Path}, args...)
	cmd.Path = exe
	cmd.Env = append(cmd.Env, initEnv+"=exec")
	if handoff {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		h.parent = os.NewFile(uintptr(fds[0]), "sandbox-handoff-parent")
		h.child = os.NewFile(uintptr(fds[1]), "sandbox-handoff-child")
		cmd.ExtraFiles = []*os.File{h.child}
		ports := make([]string, len(h.ports))
		for i, p := range h.ports {
			ports[i] = strconv.Itoa(p)
		}
		cmd.Env = append(cmd.Env, portsEnv+"="+strings.Join(ports, ","))
		if h.sink {
			cmd.Env = append(cmd.Env, sinkEnv+"=1")
		}
	}
	netAttr(cmd)
	if first {
		h.prepared = true
		close(h.preparedCh)
	}
	return nil
}

// Listeners returns the listening sockets the helper opened at Options.Ports on 127.0.0.1
// inside the agent's network namespace, in that order. It waits for the command to be
// prepared and for the helper to hand them over, until ctx ends: give it a context that also
// ends when the agent exits, since a helper that failed early sends nothing. Serving them (for example with http.Serve) makes a
// loopback server of the caller reachable from the agent, whose 127.0.0.1 is its own.
func (s *Sandbox) Listeners(ctx context.Context) ([]net.Listener, error) {
	if s.net == nil || len(s.net.ports) == 0 {
		return nil, errors.New("sandbox: no ports to hand over (they need the net level and Options.Ports)")
	}
	return s.net.receive(ctx)
}

func (h *netHandoff) receive(ctx context.Context) ([]net.Listener, error) {
	select {
	case <-h.preparedCh:
	case <-ctx.Done():
		return nil, fmt.Errorf("sandbox: waiting for the command to be prepared: %w", ctx.Err())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.received {
		return h.listeners, h.err
	}
	h.received = true
	conn, err := net.FileConn(h.parent)
	if err != nil {
		h.err = err
		return nil, err
	}
	defer conn.Close()
	uc := conn.(*net.UnixConn)
	stop := context.AfterFunc(ctx, func() { _ = uc.SetReadDeadline(time.Now()) })
	defer stop()
	buf := make([]byte, 512)
	oob := make([]byte, syscall.CmsgSpace(4*(len(h.ports)+maxSinkSockets)))
	n, oobn, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		h.err = fmt.Errorf("sandbox: waiting for the listeners: %w", err)
		return nil, h.err
	}
	text := string(buf[:n])
	if text != "ok" && !strings.HasPrefix(text, "ok ") {
		h.err = fmt.Errorf("sandbox: the helper could not listen: %s", strings.TrimPrefix(text, "error: "))
		return nil, h.err
	}
	if v, ok := strings.CutPrefix(text, "ok sink="); ok {
		h.sinkSpecs = strings.Split(v, ",")
	} else if v, ok := strings.CutPrefix(text, "ok nosink="); ok {
		h.sinkErr = v
	}
	msgs, err := syscall.ParseSocketControlMessage(oob[:oobn])
	var fds []int
	if err == nil && len(msgs) == 1 {
		fds, err = syscall.ParseUnixRights(&msgs[0])
	}
	if err != nil || len(fds) != len(h.ports)+len(h.sinkSpecs) {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		h.err = fmt.Errorf("sandbox: the helper sent %d sockets, want %d (%v)", len(fds), len(h.ports)+len(h.sinkSpecs), err)
		return nil, h.err
	}
	for _, fd := range fds[len(h.ports):] {
		h.sinkFiles = append(h.sinkFiles, os.NewFile(uintptr(fd), "sandbox-sink"))
	}
	fds = fds[:len(h.ports)]
	for _, fd := range fds {
		f := os.NewFile(uintptr(fd), "sandbox-listener")
		l, err := net.FileListener(f)
		f.Close()
		if err != nil && h.err == nil {
			h.err = err
		}
		if l != nil {
			h.listeners = append(h.listeners, l)
		}
	}
	if h.err != nil {
		for _, l := range h.listeners {
			l.Close()
		}
		h.listeners = nil
	}
	return h.listeners, h.err
}

// close releases what is left of the handoff (the listeners belong to the caller once
// handed over).
func (h *netHandoff) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parent != nil {
		h.parent.Close()
		h.child.Close()
	}
	for _, f := range h.sinkFiles {
		f.Close()
	}
	h.sinkFiles = nil
	if h.sinkServer != nil {
		h.sinkServer.close()
		h.sinkServer = nil
	}
	if !h.received {
		h.received = true
		h.err = errors.New("sandbox: closed")
	}
}

// Capabilities says which isolation levels this machine allows.
type Capabilities struct {
	Levels []record.Level `json:"levels"`
	// Net is whether record.LevelNet works here; NetUnavailable says why not.
	Net            bool   `json:"-"`
	NetUnavailable string `json:"netUnavailable,omitempty"`
}

var (
	availOnce sync.Once
	avail     Capabilities
)

// Available says which levels work here. record.LevelNet is tried for real, once per process: the
// namespace helper is started in new user and network namespaces and must bring the loopback
// interface up and connect to itself over it (so the program must call Init in main).
func Available() Capabilities {
	availOnce.Do(func() {
		avail = Capabilities{Levels: []record.Level{record.LevelEnvHome}}
		if why := netUnavailable(); why != "" {
			avail.NetUnavailable = why
			return
		}
		avail.Net = true
		avail.Levels = append(avail.Levels, record.LevelNet)
	})
	return avail
}

// netUnavailable tries record.LevelNet and says why it does not work ("" when it does).
func netUnavailable() string {
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil && strings.TrimSpace(string(b)) == "0" {
		return "user namespaces are disabled (/proc/sys/user/max_user_namespaces is 0)"
	}
	if b, err := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); err == nil && strings.TrimSpace(string(b)) == "0" && os.Getuid() != 0 {
		return "unprivileged user namespaces are disabled (/proc/sys/kernel/unprivileged_userns_clone is 0)"
	}
	exe, err := os.Executable()
	if err != nil {
		return "the namespace helper (this program) cannot be found: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Args = []string{initArg0}
	cmd.Env = []string{initEnv + "=check"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	netAttr(cmd)
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 300 {
			msg = msg[:300]
		}
		if msg != "" {
			return fmt.Sprintf("%v: %s", err, msg)
		}
		return err.Error()
	}
	return ""
}

func newNetHandoff(ports []int, sink bool) *netHandoff {
	return &netHandoff{ports: ports, sink: sink, preparedCh: make(chan struct{})}
}
