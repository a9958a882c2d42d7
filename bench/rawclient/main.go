// Command rawclient is the floor of the benchmarks: the smallest client that does the ACP
// handshake acpprobe does. It spawns the agent given after "--" (in its own process group),
// sends initialize and session/new over NDJSON on stdio, closes the session with session/close
// when the agent advertises it (as acpprobe's teardown does), closes stdin and stops the agent:
//
//   - by default it waits for the agent to exit, with a fair ladder (2 s grace, SIGTERM, 2 s,
//     SIGKILL to the group): the floor of a client that lets the agent leave by itself (acpprobe
//     check);
//   - with --kill it signals the group at once (SIGTERM, then SIGKILL after 2 s), as real
//     clients and acpprobe probe do: the floor a user feels.
//
// It uses no acpprobe package. It prints what each step got and took. Exit 0: every request
// was answered (an error answer counts); 3: the handshake did not complete.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

func main() {
	args := os.Args[1:]
	kill := len(args) > 0 && args[0] == "--kill"
	if kill {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: rawclient [--kill] -- agent [args...]")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	time.AfterFunc(60*time.Second, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); os.Exit(3) })

	var steps []string
	since := func(t time.Time) string { return fmt.Sprintf("%.1fms", float64(time.Since(t).Microseconds())/1000) }
	in := bufio.NewReaderSize(stdout, 64<<10)
	call := func(id int, method, params string) (result json.RawMessage) {
		start := time.Now()
		fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params)
		for {
			line, err := in.ReadBytes('\n')
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: no answer: %v\n", method, err)
				os.Exit(3)
			}
			var m struct {
				ID     json.RawMessage
				Method string
				Result json.RawMessage
				Error  *struct{ Code int }
			}
			if json.Unmarshal(line, &m) != nil || string(m.ID) != fmt.Sprint(id) || m.Method != "" {
				if m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" { // a request to the client
					fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
				}
				continue
			}
			if m.Error != nil {
				steps = append(steps, fmt.Sprintf("%s: error %d %s", method, m.Error.Code, since(start)))
				return nil
			}
			steps = append(steps, fmt.Sprintf("%s: ok %s", method, since(start)))
			return m.Result
		}
	}
	var init struct {
		AgentCapabilities struct {
			SessionCapabilities struct{ Close json.RawMessage }
		}
	}
	var session struct{ SessionID string }
	cwd, _ := os.Getwd()
	cwdJSON, _ := json.Marshal(cwd)
	json.Unmarshal(call(1, "initialize", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false},"clientInfo":{"name":"rawclient","version":"0"}}`), &init)
	json.Unmarshal(call(2, "session/new", `{"cwd":`+string(cwdJSON)+`,"mcpServers":[]}`), &session)
	if c := string(init.AgentCapabilities.SessionCapabilities.Close); session.SessionID != "" && c != "" && c != "null" {
		id, _ := json.Marshal(session.SessionID)
		call(3, "session/close", `{"sessionId":`+string(id)+`}`)
	}
	closed := time.Now()
	stdin.Close()
	by := "stdin"
	ladder := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	if kill { // no wait for the agent to leave by itself
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		by, ladder = "sigterm", ladder[1:]
	}
	for _, sig := range ladder {
		select {
		case <-exited:
		case <-time.After(2 * time.Second):
			syscall.Kill(-cmd.Process.Pid, sig)
			by = map[syscall.Signal]string{syscall.SIGTERM: "sigterm", syscall.SIGKILL: "sigkill"}[sig]
			continue
		}
		break
	}
	<-exited
	fmt.Println(strings.Join(append(steps, "exit: "+by+" "+since(closed)), "; "))
}
