package acptest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/acptest"
	"github.com/acpprobe/acpprobe/emulator"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/transport"
)

// wait bounds every wait of these tests: a broken agent fails the test, it never hangs it.
const wait = 20 * time.Second

// model is the emulator a test's agents talk to, with what reached it.
type model struct {
	srv       *emulator.Server
	requests  chan record.ModelRequestInfo
	responses chan record.ModelResponseInfo
	// early holds the responses reported before one of an earlier request (the emulator
	// reports a response once written, and the agent may send its next request first); next
	// is the Seq of the response that response returns next.
	early     map[int]record.ModelResponseInfo
	next      int
	home, cwd string
	env       []string // the agent's environment, from the acptest-model profile
}

// newModel starts an emulator answering with script, a throwaway HOME and workspace, and
// the environment the acptest-model profile gives the persona.
func newModel(t *testing.T, script emulator.Script) *model {
	t.Helper()
	m := &model{requests: make(chan record.ModelRequestInfo, 64), responses: make(chan record.ModelResponseInfo, 64),
		early: map[int]record.ModelResponseInfo{}, next: 1, home: t.TempDir(), cwd: t.TempDir()}
	srv, err := emulator.Start(context.Background(), emulator.Options{Script: script,
		OnRequest: func(r record.ModelRequestInfo) { m.requests <- r }, OnResponse: func(r record.ModelResponseInfo) { m.responses <- r }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	m.srv = srv
	profiles, err := emulator.LoadProfiles()
	if err != nil {
		t.Fatal(err)
	}
	p, _, ok := profiles.Match(emulator.Keys{AgentName: "acptest-model"})
	if !ok || p.Name != "acptest-model" {
		t.Fatalf("no acptest-model profile: %+v", p)
	}
	setup, err := p.Setup(emulator.ValuesFor(srv, m.home))
	if err != nil {
		t.Fatal(err)
	}
	if err := setup.Write(); err != nil {
		t.Fatal(err)
	}
	m.env = setup.Environ([]string{"HOME=" + m.home, "PATH=" + os.Getenv("PATH")})
	return m
}

// request is the next model request (the test fails after wait).
func (m *model) request(t *testing.T) record.ModelRequestInfo {
	t.Helper()
	select {
	case r := <-m.requests:
		return r
	case <-time.After(wait):
		t.Fatal("no model request")
	}
	return record.ModelRequestInfo{}
}

// response returns the responses in the order of their requests.
func (m *model) response(t *testing.T) record.ModelResponseInfo {
	t.Helper()
	for {
		if r, ok := m.early[m.next]; ok {
			delete(m.early, m.next)
			m.next++
			return r
		}
		select {
		case r := <-m.responses:
			m.early[r.Seq] = r
		case <-time.After(wait):
			t.Fatal("no model response")
			return record.ModelResponseInfo{}
		}
	}
}

// config is the model persona with faults, in m's environment.
func (m *model) config(faults acptest.ModelFaults) acptest.Config {
	return acptest.Config{Persona: "model", ModelFaults: faults, Env: m.env}
}

// client is a small ACP client over jsonrpc.Conn. It answers permission requests with its
// policy: "allow", "reject", "cancelled", or "hold" (no answer until release is closed, then
// cancelled).
type client struct {
	t       *testing.T
	conn    *jsonrpc.Conn
	agent   transport.Agent
	policy  string
	release chan struct{}
	// permissions receives the params of every permission request.
	permissions chan acp.Object
	seen        chan struct{} // signalled on every frame
}

func connect(t *testing.T, l transport.Launcher, policy string) *client {
	t.Helper()
	agent, err := l.Launch(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, agent: agent, policy: policy, release: make(chan struct{}), permissions: make(chan acp.Object, 16), seen: make(chan struct{}, 1)}
	c.conn = jsonrpc.NewConn(agent.Stdout(), agent.Stdin(), jsonrpc.ConnOptions{Handler: c.answer})
	c.conn.Log().Observe(func(jsonrpc.Frame) {
		select {
		case c.seen <- struct{}{}:
		default:
		}
	})
	c.conn.Start()
	t.Cleanup(c.stop)
	c.result(acp.MethodInitialize, map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	return c
}

// stop ends the agent (and lets a held permission go).
func (c *client) stop() {
	select {
	case <-c.release:
	default:
		close(c.release)
	}
	c.agent.Shutdown(context.Background(), transport.Patient(time.Second))
}

func (c *client) answer(ctx context.Context, req *jsonrpc.Message) (any, *jsonrpc.Error) {
	if req.Method != acp.MethodRequestPermission {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found"}
	}
	c.permissions <- acp.ParseObject(req.Params)
	outcome := map[string]string{"outcome": "cancelled"}
	switch c.policy {
	case "allow", "reject":
		outcome = map[string]string{"outcome": "selected", "optionId": c.policy}
	case "hold":
		select {
		case <-c.release:
		case <-ctx.Done():
		}
	}
	return map[string]any{"outcome": outcome}, nil
}

// call sends a request and returns its answer.
func (c *client) call(method string, params any) *jsonrpc.Message {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	m, err := c.conn.Call(ctx, method, params)
	if err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
	return m
}

// result sends a request that must succeed and returns its result.
func (c *client) result(method string, params any) acp.Object {
	c.t.Helper()
	m := c.call(method, params)
	if e := m.Err(); e != nil {
		c.t.Fatalf("%s: error %d %s", method, e.Code, e.Message)
	}
	return acp.ParseObject(m.Result)
}

func (c *client) newSession(cwd string, servers ...any) string {
	c.t.Helper()
	if servers == nil {
		servers = []any{}
	}
	sid := c.result(acp.MethodSessionNew, map[string]any{"cwd": cwd, "mcpServers": servers}).String("sessionId")
	if sid == "" {
		c.t.Fatal("session/new gave no sessionId")
	}
	return sid
}

// prompt sends a prompt and returns its answer.
func (c *client) prompt(sid string, blocks ...any) *jsonrpc.Message {
	c.t.Helper()
	return c.call(acp.MethodSessionPrompt, map[string]any{"sessionId": sid, "prompt": blocks})
}

// stopReason sends a prompt that must be answered with a stop reason, and returns it.
func (c *client) stopReason(sid string, blocks ...any) string {
	c.t.Helper()
	m := c.prompt(sid, blocks...)
	if e := m.Err(); e != nil {
		c.t.Fatalf("session/prompt: error %d %s", e.Code, e.Message)
	}
	return acp.ParseObject(m.Result).String("stopReason")
}

func text(s string) map[string]string { return map[string]string{"type": "text", "text": s} }

// frames are the agent's frames so far, in order.
func (c *client) frames() []jsonrpc.Frame {
	var out []jsonrpc.Frame
	for _, f := range c.conn.Log().Frames() {
		if f.Dir == jsonrpc.DirAgent && f.Msg != nil {
			out = append(out, f)
		}
	}
	return out
}

// update is a session/update as the client saw it.
type update struct {
	seq  int64
	kind string
	obj  acp.Object // the "update" object
}

// text is the content text of a chunk update.
func (u update) text() string { return u.obj.Object("content").String("text") }

// updates are the session/update notifications of sid with seq after from.
func (c *client) updates(sid string, from int64) []update {
	var out []update
	for _, f := range c.frames() {
		if f.Seq <= from || f.Msg.Method != acp.MethodSessionUpdate {
			continue
		}
		p := acp.ParseObject(f.Msg.Params)
		if p.String("sessionId") != sid {
			continue
		}
		u := p.Object("update")
		out = append(out, update{seq: f.Seq, kind: u.String("sessionUpdate"), obj: u})
	}
	return out
}

// kinds lists the kinds of updates, in order.
func kinds(us []update) []string {
	var out []string
	for _, u := range us {
		out = append(out, u.kind)
	}
	return out
}

// answerSeq is the seq of the agent's answer to the last request of method.
func (c *client) answerSeq(method string) int64 {
	c.t.Helper()
	var id json.RawMessage
	for _, f := range c.conn.Log().Frames() {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == method {
			id = f.Msg.ID
		}
	}
	for _, f := range c.frames() {
		if f.Msg.Kind() == jsonrpc.Response && string(f.Msg.ID) == string(id) {
			return f.Seq
		}
	}
	c.t.Fatalf("no answer to %s", method)
	return 0
}

// waitUpdate waits for an update of sid after from that ok accepts.
func (c *client) waitUpdate(sid string, from int64, ok func(update) bool) update {
	c.t.Helper()
	deadline := time.After(wait)
	for {
		for _, u := range c.updates(sid, from) {
			if ok(u) {
				return u
			}
		}
		select {
		case <-c.seen:
		case <-deadline:
			c.t.Fatalf("no such update; have %v", kinds(c.updates(sid, from)))
		}
	}
}

// permission waits for the next permission request.
func (c *client) permission() acp.Object {
	c.t.Helper()
	select {
	case p := <-c.permissions:
		return p
	case <-time.After(wait):
		c.t.Fatal("no permission request")
	}
	return nil
}

// noPermission checks that no permission request came.
func (c *client) noPermission() {
	c.t.Helper()
	select {
	case p := <-c.permissions:
		c.t.Fatalf("a permission request came: %v", p)
	default:
	}
}

func fileExists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return err == nil
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func hasTool(r record.ModelRequestInfo, prefix string) bool {
	return slices.ContainsFunc(r.Tools, func(n string) bool { return strings.HasPrefix(n, prefix) })
}

func contextWithWait() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), wait)
}

func mustJSON(o acp.Object) json.RawMessage {
	b, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	return b
}
