package sandbox

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/acpprobe/acpprobe/record"
)

// The network sink (Options.NetSink). In the agent's network namespace every IPv4 address is
// made local (a "local 0.0.0.0/0 dev lo" route: whatever the agent dials reaches its own
// loopback), and the sink listens there: on UDP port 53 of each IPv4 nameserver of
// /etc/resolv.conf, where it records the name asked for and answers NXDOMAIN, so that the
// agent's lookups fail at once as they would offline; and on TCP ports 80 and 443 of every
// address, where it records the address and port and closes the connection. A connection to
// any other port is refused by the kernel, unrecorded. What reaches a resolver by other means
// (a Unix socket, such as systemd-resolved's varlink, outside the namespace's reach) is not seen.
const (
	maxSinkSockets = 5   // three nameservers and the two TCP ports
	maxNameservers = 3   // as glibc's resolver (MAXNS)
	maxObserved    = 256 // names, and destinations, kept; the rest are counted
)

// sinkPorts are the TCP ports the sink answers on every address.
var sinkPorts = []int{80, 443}

// openSink is the helper's part: the route, then the sockets, described as "udp:IP:53" and
// "tcp:0.0.0.0:PORT" in the order of the files.
func openSink() (specs []string, files []*os.File, err error) {
	if err := localRoute(); err != nil {
		return nil, nil, fmt.Errorf("making every address local: %w", err)
	}
	defer func() {
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			files, specs = nil, nil
		}
	}()
	for _, ns := range nameservers("/etc/resolv.conf") {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: ns, Port: 53})
		if err != nil {
			return nil, nil, err
		}
		f, err := c.File()
		c.Close()
		if err != nil {
			return nil, nil, err
		}
		specs, files = append(specs, "udp:"+ns.String()+":53"), append(files, f)
	}
	for _, port := range sinkPorts {
		l, err := net.ListenTCP("tcp4", &net.TCPAddr{IP: net.IPv4zero, Port: port})
		if err != nil {
			return nil, nil, err
		}
		f, err := l.File()
		l.Close()
		if err != nil {
			return nil, nil, err
		}
		specs, files = append(specs, "tcp:0.0.0.0:"+strconv.Itoa(port)), append(files, f)
	}
	return specs, files, nil
}

// nameservers are the IPv4 nameservers of a resolv.conf, at most maxNameservers.
func nameservers(path string) []net.IP {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []net.IP
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < maxNameservers {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "nameserver" {
			if ip := net.ParseIP(fields[1]).To4(); ip != nil {
				out = append(out, ip)
			}
		}
	}
	return out
}

// localRoute adds "local 0.0.0.0/0 dev lo" to the local routing table, with one rtnetlink
// request: every IPv4 address is then this namespace's own.
func localRoute() error {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	const attrLen = syscall.SizeofRtAttr + 4
	msg := make([]byte, syscall.SizeofNlMsghdr+syscall.SizeofRtMsg+attrLen)
	*(*syscall.NlMsghdr)(unsafe.Pointer(&msg[0])) = syscall.NlMsghdr{
		Len: uint32(len(msg)), Type: syscall.RTM_NEWROUTE, Seq: 1,
		Flags: syscall.NLM_F_REQUEST | syscall.NLM_F_ACK | syscall.NLM_F_CREATE | syscall.NLM_F_EXCL,
	}
	*(*syscall.RtMsg)(unsafe.Pointer(&msg[syscall.SizeofNlMsghdr])) = syscall.RtMsg{
		Family: syscall.AF_INET, Table: syscall.RT_TABLE_LOCAL, Protocol: syscall.RTPROT_BOOT,
		Scope: syscall.RT_SCOPE_HOST, Type: syscall.RTN_LOCAL,
	}
	attr := msg[syscall.SizeofNlMsghdr+syscall.SizeofRtMsg:]
	*(*syscall.RtAttr)(unsafe.Pointer(&attr[0])) = syscall.RtAttr{Len: attrLen, Type: syscall.RTA_OIF}
	binary.NativeEndian.PutUint32(attr[syscall.SizeofRtAttr:], uint32(lo.Index))
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil {
		return err
	}
	replies, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return err
	}
	for _, r := range replies {
		if r.Header.Type == syscall.NLMSG_ERROR && len(r.Data) >= 4 {
			if code := int32(binary.NativeEndian.Uint32(r.Data[:4])); code != 0 {
				return syscall.Errno(-code)
			}
			return nil
		}
	}
	return errors.New("no answer from rtnetlink")
}

// sink is the parent's side: it serves the handed-over sockets and keeps what it saw.
type sink struct {
	socks []*os.File
	wg    sync.WaitGroup
	stop  []func() error

	mu       sync.Mutex
	lookups  []string
	seen     map[string]bool
	connects map[record.Connect]int
	order    []record.Connect
	dropped  int
}

// serve starts answering on the sockets.
func (k *sink) serve(specs []string) {
	k.seen, k.connects = map[string]bool{}, map[record.Connect]int{}
	for i, f := range k.socks {
		kind, _, _ := strings.Cut(specs[i], ":")
		switch kind {
		case "udp":
			pc, err := net.FilePacketConn(f)
			f.Close()
			if err != nil {
				continue
			}
			k.stop = append(k.stop, pc.Close)
			k.wg.Go(func() { k.answerDNS(pc) })
		case "tcp":
			l, err := net.FileListener(f)
			f.Close()
			if err != nil {
				continue
			}
			k.stop = append(k.stop, l.Close)
			k.wg.Go(func() { k.acceptAll(l) })
		default:
			f.Close()
		}
	}
}

// answerDNS records the name of every query and answers NXDOMAIN.
func (k *sink) answerDNS(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		name, reply, ok := nxdomain(buf[:n])
		if !ok {
			continue
		}
		k.mu.Lock()
		switch {
		case k.seen[name]:
		case len(k.lookups) < maxObserved:
			k.seen[name] = true
			k.lookups = append(k.lookups, name)
		default:
			k.dropped++
		}
		k.mu.Unlock()
		_, _ = pc.WriteTo(reply, from)
	}
}

// acceptAll records the address and port of every connection and closes it.
func (k *sink) acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
			key := record.Connect{Host: a.IP.String(), Port: a.Port}
			k.mu.Lock()
			switch {
			case k.connects[key] > 0:
				k.connects[key]++
			case len(k.order) < maxObserved:
				k.connects[key] = 1
				k.order = append(k.order, key)
			default:
				k.dropped++
			}
			k.mu.Unlock()
		}
		c.Close()
	}
}

// close stops serving and returns what was seen.
func (k *sink) close() record.Network {
	for _, stop := range k.stop {
		_ = stop()
	}
	k.wg.Wait()
	k.mu.Lock()
	defer k.mu.Unlock()
	n := record.Network{Observed: true, Lookups: append([]string{}, k.lookups...), Connects: []record.Connect{}, Dropped: k.dropped}
	for _, c := range k.order {
		c.Count = k.connects[c]
		n.Connects = append(n.Connects, c)
	}
	return n
}

// nxdomain reads a DNS query: the name of its first question, and the NXDOMAIN answer to it.
// ok is false for anything that is not a well-formed query.
func nxdomain(q []byte) (name string, reply []byte, ok bool) {
	if len(q) < 12 || q[2]&0x80 != 0 || binary.BigEndian.Uint16(q[4:6]) == 0 {
		return "", nil, false
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return "", nil, false
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) || len(labels) > 127 {
			return "", nil, false // a pointer, or too long: no query names itself so
		}
		labels = append(labels, presentLabel(q[i:i+l]))
		i += l
	}
	if i+4 > len(q) {
		return "", nil, false
	}
	end := i + 4 // QTYPE, QCLASS
	reply = make([]byte, end)
	copy(reply, q[:end])
	reply[2] = 0x80 | q[2]&0x79 // QR, the opcode and RD of the query
	reply[3] = 0x80 | 3         // RA, NXDOMAIN
	binary.BigEndian.PutUint16(reply[4:6], 1)
	clear(reply[6:12])
	name = strings.ToLower(strings.Join(labels, "."))
	if name == "" {
		name = "."
	}
	return name, reply, true
}

// presentLabel writes a label as DNS presentation text: printable ASCII as is, anything else
// (and the dot) as \DDD.
func presentLabel(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		if c > 0x20 && c < 0x7f && c != '.' && c != '\\' {
			s.WriteByte(c)
		} else {
			fmt.Fprintf(&s, "\\%03d", c)
		}
	}
	return s.String()
}

// ServeNetwork answers and records the agent's lookups and connection attempts with the
// sink's sockets (Options.NetSink), once the helper hands them over: start it before the agent
// launches (it waits for that, until ctx ends) and call record.Network once the agent is gone. Without
// the sink it returns at once.
func (s *Sandbox) ServeNetwork(ctx context.Context) error {
	if s.net == nil || !s.net.sink {
		return nil
	}
	if _, err := s.net.receive(ctx); err != nil {
		return err
	}
	h := s.net
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.served || len(h.sinkFiles) == 0 {
		return nil
	}
	h.served = true
	h.sinkServer = &sink{socks: h.sinkFiles}
	h.sinkFiles = nil
	h.sinkServer.serve(h.sinkSpecs)
	return nil
}

// record.Network stops the sink and says what was seen of the agent's network use.
func (s *Sandbox) Network() record.Network {
	n := record.Network{Lookups: []string{}, Connects: []record.Connect{}}
	switch {
	case s.level != record.LevelNet:
		n.Note = "not observed: the agent had the network (only the net level cuts it)"
		return n
	case !s.opts.NetSink:
		n.Note = "cut: the agent saw no network but its own loopback; its lookups and connection attempts were not recorded"
		return n
	}
	h := s.net
	h.mu.Lock()
	k, why := h.sinkServer, h.sinkErr
	h.sinkServer = nil
	h.mu.Unlock()
	if k == nil {
		n.Note = "cut: the agent saw no network but its own loopback; the sink that records its lookups was not set up"
		if why != "" {
			n.Note += " (" + why + ")"
		}
		return n
	}
	n = k.close()
	n.Note = "cut, and answered by a sink on the agent's loopback: lookups sent to the nameservers of /etc/resolv.conf are recorded and answered NXDOMAIN; connections to ports " +
		"80 and 443 of any address are recorded and closed, to other ports refused unrecorded; a resolver reached through a Unix socket is not seen"
	return n
}
