package acptest

// The model persona's sessions. A session keeps its configuration, its history as the
// session/update payloads it sent (replayed by session/load) and its conversation in the
// model's wire form (so a loaded session goes on where it stopped), in memory and, once it
// has a prompt, in a file under $HOME/.acptest-sessions: a second agent process in the
// same HOME can list, load, resume and fork it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// The model persona's default option values.
const (
	defaultModel  = "acptest-small"
	defaultEffort = "medium"
)

// shutdownWait bounds how long the end of Serve waits for the turns it cancelled.
const shutdownWait = 5 * time.Second

// modelHost runs the prompt turns and keeps the sessions of a Model persona.
type modelHost struct {
	a     *agent
	env   map[string]string // Config.Env as a map
	ctx   context.Context   // ends with Serve: every turn and MCP connection derives from it
	stop  context.CancelFunc
	http  *http.Client
	store *sessionStore // nil without an absolute HOME
	turns sync.WaitGroup

	mu       sync.Mutex // guards sessions, the sessions' fields and leaked
	sessions map[string]*modelSession
	leaked   []*exec.Cmd // the LeakOnLoad children
}

// modelSession is one session of the model persona.
type modelSession struct {
	id, cwd, title string
	updated        time.Time
	config         map[string]string
	history        []json.RawMessage // session/update "update" objects, in the order sent
	messages       []json.RawMessage // the conversation, as Anthropic Messages API messages
	servers        []*mcpServer      // MCP servers connected for this session
	cancelTurn     context.CancelFunc
}

func newModelHost(ctx context.Context, a *agent) *modelHost {
	h := &modelHost{a: a, env: map[string]string{}, sessions: map[string]*modelSession{}}
	h.ctx, h.stop = context.WithCancel(ctx)
	for _, kv := range a.cfg.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			h.env[k] = v
		}
	}
	// No proxy: the model is on loopback, and a proxy from the environment must not see it.
	h.http = &http.Client{Transport: &http.Transport{Proxy: nil, ResponseHeaderTimeout: time.Minute, MaxIdleConnsPerHost: 4}}
	if home := h.env["HOME"]; filepath.IsAbs(home) {
		h.store = &sessionStore{dir: filepath.Join(home, ".acptest-sessions")}
	}
	return h
}

// shutdown ends what the host started, when Serve returns: it cancels the turns (and waits
// a little for them to answer), closes the MCP connections and kills the leaked children.
func (h *modelHost) shutdown() {
	h.stop()
	done := make(chan struct{})
	go func() { h.turns.Wait(); close(done) }()
	t := time.NewTimer(shutdownWait)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	h.mu.Lock()
	var servers []*mcpServer
	for _, s := range h.sessions {
		servers = append(servers, s.servers...)
		s.servers = nil
	}
	leaked := h.leaked
	h.leaked = nil
	h.mu.Unlock()
	closeServers(servers)
	for _, c := range leaked {
		_ = c.Process.Kill()
		_ = c.Wait()
	}
	h.http.CloseIdleConnections()
}

// newSessionID numbers the sessions of an agent without a store, as the other personas do
// (a record of it is reproducible); with a store the id is random, so that agent processes
// sharing a HOME never hand out the same one.
func (h *modelHost) newSessionID() string {
	if h.store == nil {
		h.a.nextID++ // only the reading loop makes sessions
		return fmt.Sprintf("%s-session-%d", h.a.p.Name, h.a.nextID)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "acptest-model-" + hex.EncodeToString(b)
}

func (h *modelHost) newSession(params acp.Object) (json.RawMessage, *jsonrpc.Error) {
	cwd := params.String("cwd")
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd must be an absolute path")
	}
	s := &modelSession{id: h.newSessionID(), cwd: cwd, updated: time.Now().UTC(), config: h.a.defaultConfig()}
	s.servers = h.connect(params.Array("mcpServers"))
	h.mu.Lock()
	h.sessions[s.id] = s
	h.mu.Unlock()
	return h.sessionResult(s.id, s.config), nil
}

// sessionResult answers session/new and session/fork: the id and the option list.
func (h *modelHost) sessionResult(id string, config map[string]string) json.RawMessage {
	out, _ := json.Marshal(map[string]any{"sessionId": id, "configOptions": h.a.configOptions(config)})
	return out
}

// method answers the session methods of the persona (params already validated).
func (h *modelHost) method(method string, params acp.Object) (json.RawMessage, *jsonrpc.Error) {
	switch method {
	case acp.MethodSessionList:
		return h.list(params.String("cwd"))
	case acp.MethodSessionLoad:
		return h.load(params, true)
	case acp.MethodSessionResume:
		return h.load(params, false)
	case acp.MethodSessionFork:
		return h.fork(params)
	case acp.MethodSessionClose:
		return h.close(params.String("sessionId"))
	case acp.MethodSetConfigOption:
		h.mu.Lock()
		defer h.mu.Unlock()
		s := h.sessions[params.String("sessionId")]
		if s == nil {
			return nil, errUnknownSession
		}
		return h.a.setConfigOption(s.config, params)
	}
	return nil, errNotFound
}

// find returns the session in memory, or reads it from the store (nil when neither has it).
func (h *modelHost) find(id string) *modelSession {
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s != nil {
		return s
	}
	rec, err := h.store.load(id)
	if err != nil {
		if !os.IsNotExist(err) {
			fmt.Fprintf(h.a.errw, "acptest: session store: %v\n", err)
		}
		return nil
	}
	return rec.session()
}

// load answers session/load (replay true: the history first, as session/update) and
// session/resume (no replay, but for the ResumeReplays fault; a notice with ResumeNotice). It
// connects the MCP servers given, closing those of an
// earlier load of the same session.
func (h *modelHost) load(params acp.Object, replay bool) (json.RawMessage, *jsonrpc.Error) {
	sid, cwd := params.String("sessionId"), params.String("cwd")
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd must be an absolute path")
	}
	s := h.find(sid)
	if s == nil {
		return nil, errUnknownSession
	}
	servers := h.connect(params.Array("mcpServers"))
	h.mu.Lock()
	if s.cancelTurn != nil {
		h.mu.Unlock()
		closeServers(servers)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: a prompt turn is running on this session"}
	}
	old := s.servers
	s.servers, s.cwd = servers, cwd
	h.sessions[sid] = s
	history, config := slices.Clone(s.history), s.config
	h.mu.Unlock()
	closeServers(old)
	if !replay && h.a.cfg.ResumeNotice {
		notice := map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "Config warning: acptest resumed this session."}}
		if err := h.a.notify(acp.MethodSessionUpdate, map[string]any{"sessionId": sid, "update": notice}); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error()}
		}
	}
	if replay || h.a.cfg.ResumeReplays {
		if h.a.cfg.LeakOnLoad {
			h.leak()
		}
		for _, u := range history {
			if h.a.cfg.LoadWithoutToolCalls && isToolUpdate(u) {
				continue
			}
			if err := h.a.notify(acp.MethodSessionUpdate, map[string]any{"sessionId": sid, "update": u}); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error: " + err.Error()}
			}
		}
	}
	out, _ := json.Marshal(map[string]any{"configOptions": h.a.configOptions(config)})
	return out, nil
}

func isToolUpdate(u json.RawMessage) bool {
	kind := acp.ParseObject(u).String("sessionUpdate")
	return kind == "tool_call" || kind == "tool_call_update"
}

// leak starts a child in the agent's process group that nothing waits for until the agent
// ends (the LeakOnLoad fault).
func (h *modelHost) leak() {
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(h.a.errw, "acptest: leak-on-load: %v\n", err)
		return
	}
	h.mu.Lock()
	h.leaked = append(h.leaked, cmd)
	h.mu.Unlock()
}

// fork copies a session's history and conversation under a new id, in the cwd given.
func (h *modelHost) fork(params acp.Object) (json.RawMessage, *jsonrpc.Error) {
	cwd := params.String("cwd")
	if !filepath.IsAbs(cwd) {
		return nil, invalidParams("cwd must be an absolute path")
	}
	src := h.find(params.String("sessionId"))
	if src == nil {
		return nil, errUnknownSession
	}
	servers := h.connect(params.Array("mcpServers"))
	h.mu.Lock()
	s := &modelSession{id: h.newSessionID(), cwd: cwd, title: src.title, updated: time.Now().UTC(), config: maps.Clone(src.config),
		history: slices.Clone(src.history), messages: slices.Clone(src.messages), servers: servers}
	h.sessions[s.id] = s
	h.mu.Unlock()
	h.persist(s)
	return h.sessionResult(s.id, s.config), nil
}

// close frees a session: its turn is cancelled, its MCP servers closed, and it leaves
// memory (its file stays, so it can be loaded again). The CloseKeeps fault answers and
// keeps it.
func (h *modelHost) close(sid string) (json.RawMessage, *jsonrpc.Error) {
	h.mu.Lock()
	s := h.sessions[sid]
	if s == nil {
		h.mu.Unlock()
		return nil, errUnknownSession
	}
	if h.a.cfg.CloseKeeps {
		h.mu.Unlock()
		return raw(`{}`), nil
	}
	delete(h.sessions, sid)
	if s.cancelTurn != nil {
		s.cancelTurn()
	}
	servers := s.servers
	s.servers = nil
	h.mu.Unlock()
	closeServers(servers)
	return raw(`{}`), nil
}

// list answers session/list: the sessions in memory and in the store, newest first, only
// those in cwd when it is given.
func (h *modelHost) list(cwd string) (json.RawMessage, *jsonrpc.Error) {
	infos := map[string]storedSession{}
	for _, rec := range h.store.list() {
		infos[rec.SessionID] = rec
	}
	h.mu.Lock()
	for _, s := range h.sessions {
		infos[s.id] = s.record(false)
	}
	h.mu.Unlock()
	out := []map[string]any{}
	for _, rec := range infos {
		if cwd != "" && rec.Cwd != cwd {
			continue
		}
		info := map[string]any{"sessionId": rec.SessionID, "cwd": rec.Cwd, "updatedAt": rec.UpdatedAt}
		if rec.Title != "" {
			info["title"] = rec.Title
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i]["updatedAt"].(string), out[j]["updatedAt"].(string)
		if a != b {
			return a > b
		}
		return out[i]["sessionId"].(string) < out[j]["sessionId"].(string)
	})
	res, _ := json.Marshal(map[string]any{"sessions": out})
	return res, nil
}

// cancel cancels the running turn of a session (session/cancel), unless the IgnoreCancel
// fault is set.
func (h *modelHost) cancel(sid string) {
	if h.a.cfg.IgnoreCancel {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sessions[sid]; s != nil && s.cancelTurn != nil {
		s.cancelTurn()
	}
}

// persist writes a session to the store; a failure is logged, not fatal.
func (h *modelHost) persist(s *modelSession) {
	if h.store == nil {
		return
	}
	h.mu.Lock()
	rec := s.record(true)
	h.mu.Unlock()
	if err := h.store.save(rec); err != nil {
		fmt.Fprintf(h.a.errw, "acptest: session store: %v\n", err)
	}
}

// record is the stored form of s (the host is locked); full adds the history and the
// conversation.
func (s *modelSession) record(full bool) storedSession {
	rec := storedSession{SessionID: s.id, Cwd: s.cwd, Title: s.title, UpdatedAt: s.updated.Format(time.RFC3339Nano)}
	if full {
		rec.Config, rec.History, rec.Messages = maps.Clone(s.config), slices.Clone(s.history), slices.Clone(s.messages)
	}
	return rec
}
