//go:build linux

package transport_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/acpprobe/acpprobe/transport"
)

// The test binary re-executes itself in the roles below when roleEnv says so.
const roleEnv = "TRANSPORT_TEST_ROLE"

func TestMain(m *testing.M) {
	switch role := os.Getenv(roleEnv); role {
	case "":
		os.Exit(m.Run())
	case "attacker":
		os.Exit(attacker())
	case "tty-host":
		os.Exit(ttyHost())
	default:
		fmt.Fprintln(os.Stderr, "unknown role", role)
		os.Exit(2)
	}
}

// self runs this test binary in a role.
func self(t *testing.T, role string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), roleEnv+"="+role, "GORACE=atexit_sleep_ms=0")
	return cmd
}

func errnoName(err error) string {
	var errno syscall.Errno
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &errno):
		return unix.ErrnoName(errno)
	}
	return err.Error()
}

// attacker is an agent that goes for the user's terminal: it opens /dev/tty, tries to make
// itself the terminal's foreground group (through /dev/tty, or else through the host's own
// terminal found by its fd path), reports, and says whether a Ctrl-C reached it.
func attacker() int {
	signal.Ignore(syscall.SIGTTOU) // a background tcsetpgrp would otherwise stop it
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	devtty := errnoName(err)
	if err != nil {
		tty, err = os.OpenFile(fmt.Sprintf("/proc/%d/fd/0", os.Getppid()), os.O_RDWR|syscall.O_NOCTTY, 0)
	}
	if err == nil {
		err = unix.IoctlSetPointerInt(int(tty.Fd()), unix.TIOCSPGRP, unix.Getpgrp())
	}
	fmt.Printf("attacker devtty=%s tiocspgrp=%s\n", devtty, errnoName(err))
	go func() {
		<-sigint
		fmt.Println("attacker got SIGINT")
	}()
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}

// ttyHost holds a terminal (the test's pty) and launches the attacker as its agent. It
// prints the attacker's report, then "ready", then who got the Ctrl-C the test types.
func ttyHost() int {
	sigint := make(chan os.Signal, 1)
	signal.Notify(sigint, os.Interrupt)
	exe, _ := os.Executable()
	a, err := transport.Command{Argv: []string{exe}, Env: []string{roleEnv + "=attacker"}}.Launch(context.Background(), nil)
	if err != nil {
		fmt.Println("verdict: launch:", err)
		return 1
	}
	defer a.Shutdown(context.Background(), transport.Ladder{Grace: time.Second})
	lines := bufio.NewScanner(a.Stdout())
	if !lines.Scan() {
		fmt.Println("verdict: no report from the attacker")
		return 1
	}
	fmt.Println("report:", lines.Text())
	later := make(chan string, 1)
	go func() {
		if lines.Scan() {
			later <- lines.Text()
		}
	}()
	fmt.Println("ready")
	select {
	case <-sigint:
		fmt.Println("verdict: host got SIGINT")
	case l := <-later:
		fmt.Println("verdict:", l)
	case <-time.After(20 * time.Second):
		fmt.Println("verdict: nobody got SIGINT")
	}
	return 0
}

// F5: under a terminal, the agent cannot open /dev/tty, cannot become the foreground group,
// and the user's Ctrl-C reaches the host, not the agent.
func TestAgentCannotReachTheTerminal(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skip("no pty:", err)
	}
	defer ptmx.Close()
	host := self(t, "tty-host")
	host.Stdin, host.Stdout, host.Stderr = tty, tty, tty
	host.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	defer host.Wait()
	defer host.Process.Kill()

	lines := make(chan string)
	go func() {
		defer close(lines)
		s := bufio.NewScanner(ptmx) // ends with EIO once the host is gone
		for s.Scan() {
			lines <- strings.TrimRight(s.Text(), "\r")
		}
	}()
	deadline := time.After(30 * time.Second)
	next := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the host ended before printing %q", prefix)
				}
				// The terminal echoes the Ctrl-C as "^C" ahead of the host's next line.
				if _, rest, ok := strings.Cut(l, prefix); ok {
					return rest
				}
			case <-deadline:
				t.Fatalf("no %q from the host", prefix)
			}
		}
	}
	report := next("report: ")
	next("ready")
	if _, err := ptmx.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	verdict := next("verdict: ")
	if !strings.Contains(report, "devtty=ENXIO") {
		t.Errorf("the agent opened /dev/tty, or failed otherwise: %s", report)
	}
	if strings.Contains(report, "tiocspgrp=ok") {
		t.Errorf("the agent made itself the terminal's foreground group: %s", report)
	}
	if verdict != "host got SIGINT" {
		t.Errorf("the user's Ctrl-C: %s", verdict)
	}
}
