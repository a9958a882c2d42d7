//go:build linux

package sandbox_test

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/sandbox"
)

// TestNet: at the net level the agent reaches the listener handed over to the test, but
// neither a listener on the test's own loopback nor any outside address.
func TestNet(t *testing.T) {
	c := sandbox.Available()
	if !c.Net {
		t.Skipf("net level unavailable here: %s", c.NetUnavailable)
	}
	if !strings.Contains(strings.Join(levels(c.Levels), ","), "net") {
		t.Errorf("levels %v lack net", c.Levels)
	}
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go serve(host, "host")
	// The port the test's own listener has is free in the agent's fresh namespace: the
	// emulator keeps its base URL by listening there at the same port.
	port := host.Addr().(*net.TCPAddr).Port
	s, err := sandbox.New(sandbox.Options{
		Parent:  t.TempDir(),
		Environ: hostEnv(t.TempDir()),
		Net:     true,
		Ports:   []int{port},
		Env:     []string{"ACPPROBE_TEST_PORT=" + strconv.Itoa(port), "ACPPROBE_TEST_HOSTPORT=" + strconv.Itoa(port)},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Level() != record.LevelNet {
		t.Fatalf("level %s", s.Level())
	}
	type result struct {
		rep agentReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := runAgentIn(s, "net")
		done <- result{rep, err}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ls, err := s.Listeners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0].Addr().String() != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("listeners %v", ls)
	}
	go serve(ls[0], "inside")
	defer ls[0].Close()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	rep := r.rep
	if rep.Net["served"] != "read: inside" {
		t.Errorf("the handed-over listener: %s, want read: inside", rep.Net["served"])
	}
	if !strings.Contains(rep.Net["outside"], "network is unreachable") {
		t.Errorf("an outside address: %s, want network is unreachable", rep.Net["outside"])
	}
	if rep.Net["host"] != "read: inside" {
		// The same port inside is the handed-over listener, not the test's: the agent never
		// reached the test's loopback (which would answer "host").
		t.Errorf("127.0.0.1:%d inside: %s", port, rep.Net["host"])
	}
	if os.Getuid() != 0 && rep.CapEff != "0000000000000000" {
		t.Errorf("the agent kept capabilities %s: the helper's ambient set must not reach it", rep.CapEff)
	}
	if env := envMap(rep.Env); env["ACPPROBE_SANDBOX_INIT"] != "" || env["ACPPROBE_SANDBOX_PORTS"] != "" {
		t.Errorf("the helper's variables reached the agent: %v", env)
	}
}

// TestNetNoPorts: a net-level agent with no listener handed over finds its loopback up and
// empty, and cannot reach the test's.
func TestNetNoPorts(t *testing.T) {
	if c := sandbox.Available(); !c.Net {
		t.Skipf("net level unavailable here: %s", c.NetUnavailable)
	}
	host, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	go serve(host, "host")
	port := strconv.Itoa(host.Addr().(*net.TCPAddr).Port)
	s, err := sandbox.New(sandbox.Options{Parent: t.TempDir(), Environ: hostEnv(t.TempDir()), Net: true, Env: []string{"ACPPROBE_TEST_PORT=" + port, "ACPPROBE_TEST_HOSTPORT=" + port}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep := runIn(t, s, "net")
	if !strings.Contains(rep.Net["host"], "connection refused") {
		t.Errorf("the test's loopback from inside: %s, want connection refused (lo up, nothing listening)", rep.Net["host"])
	}
	if _, err := s.Listeners(context.Background()); err == nil {
		t.Error("Listeners without ports succeeded")
	}
}

// serve answers every connection with word.
func serve(l net.Listener, word string) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		_, _ = c.Write([]byte(word))
		c.Close()
	}
}

func levels(ls []record.Level) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}
