package acptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Stress faults: floods, broken ids, odd bytes, slow or vanishing output. They test that the
// probe ends within its budget, leaves nothing behind and holds its memory, whatever an agent
// does.
type Stress struct {
	// StderrFlood writes this many bytes on stderr before the first answer.
	StderrFlood int64
	// HugeLine writes a valid notification line of this many bytes before the first answer.
	HugeLine int
	// HugeAnswers pads every result the agent answers (initialize, session/new, each prompt…)
	// with a _meta string of this many bytes.
	HugeAnswers int
	// WrongID answers initialize with another id (the real request is never answered).
	WrongID bool
	// DuplicateID answers initialize twice.
	DuplicateID bool
	// InvalidBytes writes a line with invalid UTF-8 and NUL bytes before the first answer.
	InvalidBytes bool
	// Notifications sends this many session/update notifications before answering session/new.
	Notifications int
	// Drip writes every output byte on its own, this long apart.
	Drip time.Duration
	// CloseStdoutBefore closes stdout when this method arrives and keeps running.
	CloseStdoutBefore string
	// ExitImmediately exits with status 0 before reading anything.
	ExitImmediately bool
	// Grandchild starts a process that inherits stdout and outlives the agent.
	Grandchild bool
	// SetsidDaemon starts a process (sleep 300) in a session of its own, out of the agent's
	// process group, that outlives the agent: only its marker finds it.
	SetsidDaemon bool
	// IgnoreSIGTERM ignores SIGTERM (as a process; only SIGKILL stops it).
	IgnoreSIGTERM bool
	// SideEffects does everything a probe must see and contain, as a process (Config.Env
	// set; an in-process agent does none of it): at start it writes SideEffectFiles under
	// $HOME, $XDG_CONFIG_HOME (default $HOME/.config) and $TMPDIR (default /tmp), and
	// UnlistedFiles under $HOME, and starts
	// the SetsidDaemon; on session/new it opens LoginURL with xdg-open, found on PATH, and
	// waits for it; every session/load request leaves a `sleep 300` child in its process
	// group that it never ends.
	SideEffects bool
	// NetEffects, on session/new, looks up NetEffectsHost and connects to NetEffectsAddr
	// (TEST-NET-1, port 443), for a network sink to record. As a process only. It reaches the
	// network where the network is not cut: use it only inside a net-level sandbox.
	NetEffects bool
}

// The NetEffects fault's lookup and connection.
const (
	NetEffectsHost = "telemetry.acptest.invalid"
	NetEffectsAddr = "192.0.2.9:443"
)

// SideEffectFiles are the SideEffects fault's files, each under the directory its variable
// names.
var SideEffectFiles = map[string]string{
	"HOME":            ".acptest/state.json",
	"XDG_CONFIG_HOME": "acptest/config.json",
	"TMPDIR":          "acptest-side-effect.tmp",
}

// UnlistedFiles are the SideEffects fault's files under $HOME in places no table of agents
// lists (as CodeBuddy Code's ~/.codebuddy was not): a probe sees them only by what appeared
// under HOME during the run.
var UnlistedFiles = []string{".acptest-unlisted/cache.db", ".local/state/acptest-unlisted/run.log"}

// LoginURL is the login the SideEffects fault opens before any authenticate: its query looks
// like a secret, which a report must not show.
const LoginURL = "https://login.acptest.invalid/oauth/authorize?client_id=acptest&state=s3cr3t-state-0123456789"

// InvalidLine is what the InvalidBytes fault writes.
const InvalidLine = "acptest \xff\xfe invalid UTF-8 and a NUL \x00 byte"

// stressStart runs the faults that act before the agent reads anything; done means Serve
// must return at once.
func (a *agent) stressStart() (done bool, err error) {
	s := a.cfg.Stress
	if s.ExitImmediately {
		return true, nil
	}
	if s.Grandchild {
		if f, ok := a.out.(*os.File); ok {
			cmd := exec.Command("sleep", "300")
			cmd.Stdout = f
			if err := cmd.Start(); err != nil {
				return false, err
			}
			go func() { _ = cmd.Wait() }()
		}
	}
	if s.SideEffects && a.cfg.Env != nil {
		if err := a.writeSideEffectFiles(); err != nil {
			return false, err
		}
	}
	if s.SetsidDaemon || s.SideEffects && a.cfg.Env != nil {
		cmd := exec.Command("sleep", "300")
		leaveSession(cmd)
		if err := cmd.Start(); err != nil {
			return false, err
		}
		go func() { _ = cmd.Wait() }()
	}
	return false, nil
}

// writeSideEffectFiles writes the SideEffects fault's files.
func (a *agent) writeSideEffectFiles() error {
	env := func(name string) string {
		v := ""
		for _, kv := range a.cfg.Env {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val
			}
		}
		return v
	}
	dirs := map[string]string{"HOME": env("HOME"), "XDG_CONFIG_HOME": env("XDG_CONFIG_HOME"), "TMPDIR": env("TMPDIR")}
	if dirs["XDG_CONFIG_HOME"] == "" && dirs["HOME"] != "" {
		dirs["XDG_CONFIG_HOME"] = filepath.Join(dirs["HOME"], ".config")
	}
	if dirs["TMPDIR"] == "" {
		dirs["TMPDIR"] = "/tmp"
	}
	var paths []string
	for name, rel := range SideEffectFiles {
		if dirs[name] != "" {
			paths = append(paths, filepath.Join(dirs[name], rel))
		}
	}
	for _, rel := range UnlistedFiles {
		if dirs["HOME"] != "" {
			paths = append(paths, filepath.Join(dirs["HOME"], rel))
		}
	}
	for _, p := range paths {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte("{\"written by\":\"acptest side-effects fault\"}\n"), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// sideEffectsOn runs the SideEffects fault's part for a request: the browser login on
// session/new, a leaked child on session/load.
func (a *agent) sideEffectsOn(method string) {
	if !a.cfg.SideEffects && !a.cfg.NetEffects || a.cfg.Env == nil {
		return
	}
	switch {
	case method == "session/new":
		if a.cfg.NetEffects {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_, _ = net.DefaultResolver.LookupHost(ctx, NetEffectsHost)
			cancel()
			if c, err := net.DialTimeout("tcp", NetEffectsAddr, 5*time.Second); err == nil {
				c.Close()
			}
		}
		if a.cfg.SideEffects {
			cmd := exec.Command("xdg-open", LoginURL)
			cmd.Env = a.cfg.Env
			_ = cmd.Run() // the shim exits 1: no browser here
		}
	case method == "session/load" && a.cfg.SideEffects:
		cmd := exec.Command("sleep", "300")
		if err := cmd.Start(); err == nil {
			go func() { _ = cmd.Wait() }()
		}
	}
}

// beforeFirstAnswer runs the faults that write ahead of the first answer.
func (a *agent) beforeFirstAnswer() error {
	s := a.cfg.Stress
	if s.StderrFlood > 0 {
		chunk := bytes.Repeat([]byte("acptest: stderr flood line to test the probe's memory\n"), 1200)
		for left := s.StderrFlood; left > 0; left -= int64(len(chunk)) {
			n := int64(len(chunk))
			if left < n {
				n = left
			}
			if _, err := a.errw.Write(chunk[:n]); err != nil {
				return err
			}
		}
	}
	if s.InvalidBytes {
		if err := a.writeRaw([]byte(InvalidLine)); err != nil {
			return err
		}
	}
	if s.HugeLine > 0 {
		text := strings.Repeat("x", s.HugeLine)
		line, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "session/update",
			"params": map[string]any{"sessionId": "pending", "update": map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": text}}}})
		if err := a.writeRaw(line); err != nil {
			return err
		}
	}
	return nil
}

// notifications sends the Notifications flood.
func (a *agent) notificationFlood() error {
	for i := 0; i < a.cfg.Stress.Notifications; i++ {
		if err := a.notify("session/update", map[string]any{"sessionId": "pending",
			"update": map[string]any{"sessionUpdate": "agent_thought_chunk", "content": map[string]string{"type": "text", "text": "thinking"}}}); err != nil {
			return err
		}
	}
	return nil
}

// dripWriter writes one byte at a time.
type dripWriter struct {
	w     io.Writer
	delay time.Duration
	ctx   context.Context
}

func (d dripWriter) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := d.w.Write(p[i : i+1]); err != nil {
			return i, err
		}
		t := time.NewTimer(d.delay)
		select {
		case <-t.C:
		case <-d.ctx.Done():
			t.Stop()
			return i + 1, d.ctx.Err()
		}
	}
	return len(p), nil
}

// ModelFaults make the model persona fail one turn or capability scenario each (they do
// nothing to the other personas).
type ModelFaults struct {
	// WriteWithoutPermission: the Write tool writes the file without asking
	// (no session/request_permission) and reports the call completed.
	WriteWithoutPermission bool
	// WriteAfterReject: the Write tool asks, then writes the file whatever the answer; a
	// refused call is still reported failed (to the client and to the model).
	WriteAfterReject bool
	// IgnoreModel: every model request asks for the default model (acptest-small), whatever
	// the model config option says.
	IgnoreModel bool
	// IgnoreThoughtLevel: every model request asks for the default effort (medium), whatever
	// the thought_level config option says.
	IgnoreThoughtLevel bool
	// IgnoreCancel: session/cancel is ignored: the turn streams to its end and ends end_turn.
	IgnoreCancel bool
	// UpdatesAfterAnswer: an agent_message_chunk (LateText) follows every session/prompt
	// answer.
	UpdatesAfterAnswer bool
	// TextAsThought: the model's text goes out as agent_thought_chunk only (live and in the
	// history).
	TextAsThought bool
	// DropBlocks: every prompt block is accepted, but only the text blocks reach the model.
	DropBlocks bool
	// NoMCP: MCP servers are accepted and never connected.
	NoMCP bool
	// HideMCPTools: MCP servers are connected and their tools listed, but the tools are never
	// offered to the model.
	HideMCPTools bool
	// DeferMCPTools: the MCP tools are not offered to the model but named in the system
	// prompt, behind a ToolSearch tool (as Claude Code 2.1 defers them): a search ("select:"
	// names, or words) returns the tools it found and offers them from the next request of
	// the turn on; a direct call of a tool not found yet fails.
	DeferMCPTools bool
	// LoadWithoutToolCalls: session/load replays the messages but not the tool calls.
	LoadWithoutToolCalls bool
	// LeakOnLoad: every session/load starts a `sleep 300` child in the agent's process group
	// that nothing reaps while the agent runs (it is killed when Serve returns).
	LeakOnLoad bool
	// CloseKeeps: session/close answers {} but keeps the session: a later prompt still works.
	CloseKeeps bool
	// RefuseLastValue: session/set_config_option refuses the last value of every option
	// (-32602), though the option lists it (codex-acp 2.6.0 refuses reasoning_effort "ultra").
	RefuseLastValue bool
	// ResumeReplays: session/resume replays the history, as session/load does.
	ResumeReplays bool
	// ResumeNotice is no fault but a variant: session/resume sends a fresh agent_message_chunk
	// notice, which is not history (codex-acp 2.6.0's "Config warning: …" after every resume).
	ResumeNotice bool
	// AutoByDefault is no fault but a variant: sessions start in mode auto, which writes
	// without asking (claude-agent-acp 0.101.0 starts in its mode auto); mode ask still asks.
	AutoByDefault bool
}
