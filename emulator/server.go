// Package emulator is a fake language model on loopback. It serves the wire formats coding
// agents use to reach their models (Anthropic Messages, OpenAI Responses, OpenAI Chat
// Completions, Gemini generateContent), answers each request from a Script (text, a call of
// one of the agent's own tools, a slow stream, an API error), and records every request as
// a JSON-serialisable value without secrets. Pointed at it with a backend Profile, a real
// agent runs a real prompt turn — its own tools, streaming, permissions and cancel — at zero
// tokens and without reaching any provider.
//
// The package knows nothing of ACP or of the probe: it is only the model's side.
package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/record"
)

// DummyKey is the credential profiles give agents: not a secret, and recognisable in a
// request (Request.Credential "dummy").
const DummyKey = "acpprobe-dummy-key"

// DefaultText is what the default Script answers.
const DefaultText = "Hello from the acpprobe model emulator."

// Defaults of Options.
const (
	DefaultMaxBody     = 16 << 20
	DefaultMaxResponse = 5 * time.Minute
	DefaultMaxRequests = 16
)

// BoundText is the answer past the MaxRequests bound when the Script's reply has no text.
const BoundText = "The acpprobe model emulator answers no more tool calls in this turn."

// Options configure a Server. The zero value works: it answers DefaultText.
type Options struct {
	// Script answers model requests; nil answers DefaultText. SetScript changes it later.
	Script Script
	// MaxRequests bounds the model requests one installed Script answers as it likes (default
	// DefaultMaxRequests). Past it the Script is still asked, but its tool call or error is
	// dropped and the answer is its text (BoundText when it has none), recorded as Bounded:
	// an agent that asks the model again and again, whatever it is answered, cannot loop.
	// Start and SetScript install a Script; the turn scenarios install one for each prompt,
	// so in practice this bounds the model requests of one turn.
	MaxRequests int
	// OnRequest receives each request once it has been read, before it is answered; OnResponse
	// receives what was answered once the answer ends. Calls of each are serialised, in
	// arrival order; they must not block for long.
	OnRequest  func(record.ModelRequestInfo)
	OnResponse func(record.ModelResponseInfo)
	// DummyKey is the key the agent was given (Request.Credential compares with it); empty
	// means the package's DummyKey.
	DummyKey string
	// MaxBody caps a request body in bytes (default 16 MiB); a larger body is answered 413.
	MaxBody int64
	// MaxInFlight bounds the request body bytes the emulator holds at once, over all the
	// requests being read (default and minimum MaxBody): a request takes its Content-Length
	// (MaxBody without one) before its body is read and gives it back once the body is
	// parsed and recorded; one that does not fit waits, in arrival order. Parsing costs
	// about as much again, so the emulator's memory for requests stays within a few times
	// MaxInFlight however many arrive at once. The record keeps at most 256 KiB of a body
	// (record.ModelRequestInfo.BodyTruncated).
	MaxInFlight int64
	// MaxResponse bounds the time of one answer, a slow stream included (default 5 min).
	MaxResponse time.Duration

	// bodyTimeout bounds the reading of a request, body included (defaultBodyTimeout);
	// tests shorten it. It does not bound the answer (MaxResponse does), nor the wait for a
	// share of MaxInFlight (the body's read deadline starts when the share is granted).
	bodyTimeout time.Duration
	// onShare, when set, is called when a request starts waiting for its share of
	// MaxInFlight (granted false) and when the share is granted (tests).
	onShare func(n int64, granted bool)
}

// defaultBodyTimeout bounds the reading of one request, body included.
const defaultBodyTimeout = time.Minute

// Server is a running emulator. Close it when the probe ends.
type Server struct {
	opts     Options
	ln       net.Listener
	srv      *http.Server
	base     context.Context
	cancel   context.CancelFunc
	served   chan struct{}
	extra    sync.WaitGroup // one per listener given to Serve
	stopOnce sync.Once

	mu        sync.Mutex // guards closed, handlers' Add, installed, seq, ids
	closed    bool
	handlers  sync.WaitGroup
	installed *installation
	seq       int
	ids       int

	recMu sync.Mutex // serialises OnRequest / OnResponse and Script calls

	inFlight *budget // of request bodies (Options.MaxInFlight)
}

// installation is one Script as installed by Start or SetScript, and what it answered.
type installation struct {
	script Script
	// asked counts the model requests put to the script, toolCalls the tool calls it
	// answered and searches those of them that were searches (ToolUse.Search); all only
	// under Server.recMu, which every Script call holds.
	asked, toolCalls, searches int
}

// Start listens on 127.0.0.1 on an ephemeral port and serves until Close, or until ctx ends.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxResponse <= 0 {
		opts.MaxResponse = DefaultMaxResponse
	}
	if opts.MaxInFlight < opts.MaxBody {
		opts.MaxInFlight = opts.MaxBody
	}
	if opts.MaxRequests <= 0 {
		opts.MaxRequests = DefaultMaxRequests
	}
	if opts.DummyKey == "" {
		opts.DummyKey = DummyKey
	}
	if opts.bodyTimeout <= 0 {
		opts.bodyTimeout = defaultBodyTimeout
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("emulator: listen on loopback: %w", err)
	}
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{opts: opts, ln: ln, base: base, cancel: cancel, served: make(chan struct{}), installed: &installation{script: opts.Script},
		inFlight: newBudget(opts.MaxInFlight)}
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       opts.bodyTimeout,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          log.New(io.Discard, "", 0), // what a client does wrong is in the record
	}
	go func() {
		defer close(s.served)
		_ = s.srv.Serve(ln)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = s.Close()
		case <-base.Done():
		}
	}()
	return s, nil
}

// Serve also serves ln, until Close, exactly as the emulator's own address: the same Script
// answers and the same callbacks record. It is for a listener handed over from elsewhere — the
// one a net-level sandbox opens at Port on the agent's own loopback (sandbox.Options.Ports),
// where URL then reaches the emulator too. It returns at once; Close closes ln (at once, when
// the emulator is already closed).
func (s *Server) Serve(ln net.Listener) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return
	}
	s.extra.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.extra.Done()
		_ = s.srv.Serve(ln) // closes ln when it returns, at Close
	}()
}

// URL is the emulator's base URL, "http://127.0.0.1:PORT" (no trailing slash).
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Port is the emulator's TCP port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// SetScript installs script for the requests that arrive from now on. The installation's
// counts start again: Call.Asked and Call.ToolCalls, and the MaxRequests bound.
func (s *Server) SetScript(script Script) {
	s.mu.Lock()
	s.installed = &installation{script: script}
	s.mu.Unlock()
}

// Close stops the emulator: it ends the answers in progress, closes every connection and
// returns once no handler runs any more. It is safe to call more than once, but not from a
// Script or a callback (it would wait for itself).
func (s *Server) Close() error {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.cancel()
		_ = s.srv.Close()
		s.handlers.Wait()
		<-s.served
		s.extra.Wait()
	})
	return nil
}

// next numbers the tool calls and messages of this emulator.
func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return s.ids
}

// serve handles one request: read, record, answer, record the answer.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "emulator closed", http.StatusServiceUnavailable)
		return
	}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()

	req, t, ep, status := s.read(w, r)

	s.recMu.Lock()
	s.mu.Lock()
	s.seq++
	req.Seq = s.seq
	in := s.installed
	s.mu.Unlock()
	if s.opts.OnRequest != nil {
		s.opts.OnRequest(req)
	}
	var reply Reply
	bounded := false
	if t != nil && req.Endpoint == "generate" {
		reply, bounded = s.ask(in, &Call{Request: &req, Tools: t.tools, Schema: t.schema})
		if reply.Error == nil && reply.Tool != nil && !t.structured && t.verdict == "" {
			in.toolCalls++
			if reply.Tool.Search != "" {
				in.searches++
			}
		}
	}
	s.recMu.Unlock()

	res := record.ModelResponseInfo{Seq: req.Seq, Bounded: bounded}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.MaxResponse)
	defer cancel()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.opts.MaxResponse))
	switch {
	case status != 0:
		s.fail(w, &res, ep.dialect, &APIError{Status: status, Message: req.Problem})
	case ep.kind == "":
		res.Status, res.Answer, res.Complete = http.StatusNotFound, "notFound", true
		writeJSON(w, http.StatusNotFound, errorBody(ep.dialect, &APIError{Status: http.StatusNotFound, Message: "not served by the acpprobe model emulator: " + r.URL.Path}))
	case ep.kind == "countTokens":
		res.Status, res.Answer, res.Complete = http.StatusOK, "countTokens", true
		writeJSON(w, http.StatusOK, ep.countTokens(tokens(req.BodySize)))
	case reply.Error != nil:
		s.fail(w, &res, ep.dialect, reply.Error)
	default:
		a := s.answer(t, &req, reply)
		res.Answer, res.Status, res.Thought = a.kind, http.StatusOK, a.thought != ""
		if a.tool != nil {
			called := Tool{Name: a.tool.Name, Namespace: a.tool.Namespace}
			if a.tool.Nested != "" {
				called = Tool{Name: a.tool.Nested, Namespace: a.tool.Namespace, Via: a.tool.Name}
			}
			res.Tool, res.ToolCallID, res.Search = called.QualifiedName(), a.toolID, a.tool.Search
		}
		var err error
		if t.stream {
			st := &stream{w: w, rc: http.NewResponseController(w), ctx: ctx, delay: a.delay}
			h := w.Header()
			h.Set("Content-Type", "text/event-stream")
			h.Set("Cache-Control", "no-cache")
			// An SSE answer must end the HTTP body or Claude Code never ends its turn (it
			// waits for the body, not for message_stop). Returning ends the chunked body;
			// closing the connection too leaves nothing for any client to wait on.
			h.Set("Connection", "close")
			w.WriteHeader(http.StatusOK)
			err = ep.stream(st, a)
			res.Chunks = st.chunks
		} else {
			err = pause(ctx, a.delay*time.Duration(max(len(a.chunks)-1, 0)))
			if err == nil {
				writeJSON(w, http.StatusOK, ep.json(a))
				res.Chunks = len(a.chunks)
			}
		}
		res.Complete = err == nil
		if err != nil {
			res.Problem = "answer cut short: " + err.Error()
		}
	}
	res.Time = time.Now()
	if s.opts.OnResponse != nil {
		s.recMu.Lock()
		s.opts.OnResponse(res)
		s.recMu.Unlock()
	}
}

// read reads and understands a request. For a request it cannot serve it returns the
// error status to answer (413, 400: a body too large, unreadable or not JSON; a body of an
// unexpected shape is read leniently, see decode); t is nil unless the endpoint takes a model
// request.
//
// What it holds is bounded: the body is read within the in-flight budget (takeBody), and the
// record keeps at most maxRecordedBody bytes of it and bounded excerpts of what was parsed.
func (s *Server) read(w http.ResponseWriter, r *http.Request) (req record.ModelRequestInfo, t *turn, ep endpoint, status int) {
	req = record.ModelRequestInfo{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Query: cleanQuery(r.URL.RawQuery),
		Headers: cleanHeaders(r.Header), Credential: credentialOf(r, s.opts.DummyKey), Endpoint: "unknown"}
	ep = route(r)
	if r.ContentLength > s.opts.MaxBody {
		req.Problem = fmt.Sprintf("body of %d bytes (Content-Length) larger than %d bytes: not read", r.ContentLength, s.opts.MaxBody)
		return req, nil, ep, http.StatusRequestEntityTooLarge
	}
	body, release, err := s.takeBody(w, r)
	defer release() // once the body is parsed and recorded: the deferred call below runs first
	defer func() { recordBody(&req, body, t != nil) }()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			req.Problem = fmt.Sprintf("body larger than %d bytes", s.opts.MaxBody)
			return req, nil, ep, http.StatusRequestEntityTooLarge
		}
		req.Problem = "cannot read body: " + err.Error()
		return req, nil, ep, http.StatusBadRequest
	}
	if ep.kind == "" {
		return req, nil, ep, 0
	}
	req.Dialect, req.Endpoint, req.Model = string(ep.dialect), ep.kind, excerptN(ep.model, maxName)
	if t, err = ep.parse(body); err != nil {
		req.Problem = "body is not JSON: " + err.Error()
		return req, nil, ep, http.StatusBadRequest
	}
	if t.skipped != "" {
		req.Problem = "read leniently, skipping " + t.skipped
	}
	req.Model, req.Stream, req.Structured, req.Reasoning = excerptN(t.model, maxName), t.stream, t.structured, excerptN(t.reasoning, maxName)
	req.ToolResults, req.LastUserText = t.results, t.lastText
	for _, k := range t.lastKinds[max(0, len(t.lastKinds)-maxKinds):] {
		req.LastUserKinds = append(req.LastUserKinds, excerptN(k, maxName))
	}
	for _, tl := range t.tools {
		req.Tools = append(req.Tools, excerptN(tl.QualifiedName(), maxName))
	}
	return req, t, ep, 0
}

// takeBody reads the request body once its share of the in-flight budget is free: its
// Content-Length, or MaxBody when it has none. A request waits for its share rather than
// being refused: an agent waits on a slow answer, but retries an error (a 503 with
// Retry-After included) and then reports it, and the wait is bounded, since a body being read
// holds its share only until the read deadline, which starts once the share is granted.
// release gives the share back.
func (s *Server) takeBody(w http.ResponseWriter, r *http.Request) (body []byte, release func(), err error) {
	share := r.ContentLength
	if share < 0 {
		share = s.opts.MaxBody
	}
	if share == 0 {
		return nil, func() {}, nil
	}
	var onWait func()
	if s.opts.onShare != nil {
		onWait = func() { s.opts.onShare(share, false) }
	}
	if err := s.inFlight.acquire(r.Context(), share, onWait); err != nil {
		return nil, func() {}, err
	}
	if s.opts.onShare != nil {
		s.opts.onShare(share, true)
	}
	release = func() { s.inFlight.release(share) }
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.opts.bodyTimeout))
	if r.ContentLength > 0 {
		// The server ends the body at its Content-Length: read it into a buffer of that
		// size, not one that grows by doubling.
		body = make([]byte, r.ContentLength)
		n, err := io.ReadFull(r.Body, body)
		return body[:n], release, err
	}
	body, err = readUnsized(http.MaxBytesReader(w, r.Body, s.opts.MaxBody), s.opts.MaxBody)
	return body, release, err
}

// readUnsized reads a body without a Content-Length from r, which ends it at limit bytes
// (http.MaxBytesReader): into a small buffer first, and a larger body into one buffer of
// limit bytes, its share, rather than into one that grows by doubling and holds about twice
// the body at the end.
func readUnsized(r io.Reader, limit int64) ([]byte, error) {
	small := make([]byte, min(limit, 64<<10))
	n, err := io.ReadFull(r, small)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return small[:n], nil
	}
	if err != nil {
		return small[:n], err
	}
	big := make([]byte, limit)
	copy(big, small)
	m, err := io.ReadFull(r, big[n:])
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return big[:n+m], nil
	}
	if err == nil { // full: the body ends here, or is too large
		var one [1]byte
		_, err = r.Read(one[:])
		if err == io.EOF {
			err = nil
		}
	}
	return big[:n+m], err
}

// recordBody puts the body into the record: whole when it is at most maxRecordedBody bytes
// (as JSON when it is JSON — a body the dialect parsed is), else its start as text, flagged
// BodyTruncated; BodySize is its whole length either way.
func recordBody(req *record.ModelRequestInfo, body []byte, parsed bool) {
	req.BodySize = len(body)
	switch {
	case len(body) > maxRecordedBody:
		cut := maxRecordedBody
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		req.BodyText, req.BodyTruncated = strings.ToValidUTF8(string(body[:cut]), "\uFFFD"), true
	case parsed || json.Valid(body):
		if len(body) > 0 {
			req.Body = bytes.Clone(body) // not the buffer it was read into, which may be larger
		}
	case len(body) > 0:
		req.BodyText = strings.ToValidUTF8(string(body), "\uFFFD")
	}
}

// ask puts a model request to the installed script (under recMu). Past MaxRequests the
// reply keeps only its text: bounded says so.
func (s *Server) ask(in *installation, c *Call) (reply Reply, bounded bool) {
	script := in.script
	if script == nil {
		script = Text(DefaultText)
	}
	c.Asked, c.ToolCalls, c.Searches = in.asked, in.toolCalls, in.searches
	in.asked++
	reply = script(c)
	if in.asked <= s.opts.MaxRequests {
		return reply, false
	}
	reply.Tool, reply.Error = nil, nil
	if reply.Text == "" && len(reply.Chunks) == 0 {
		reply.Text = BoundText
	}
	return reply, true
}

// fail sends an API error in the dialect's shape.
func (s *Server) fail(w http.ResponseWriter, res *record.ModelResponseInfo, d Dialect, e *APIError) {
	status := e.Status
	if status < 400 || status > 599 {
		status = http.StatusInternalServerError
	}
	res.Status, res.Answer, res.Complete, res.Problem = status, "error", true, e.Message
	writeJSON(w, status, errorBody(d, e))
}

// answer resolves a Reply into what the dialect writers send.
func (s *Server) answer(t *turn, req *record.ModelRequestInfo, reply Reply) *answer {
	n := s.next()
	a := &answer{model: t.model, n: n, inTokens: tokens(req.BodySize), usage: t.usage, delay: reply.Delay}
	switch {
	case t.structured:
		a.kind = "structured"
		obj, err := Minimal(t.schema)
		if err != nil {
			obj = json.RawMessage("{}")
		}
		a.chunks, a.delay = []string{string(obj)}, 0
	case t.verdict != "":
		a.kind, a.chunks, a.delay = "verdict", []string{t.verdict}, 0
	default:
		a.kind, a.thought = "text", reply.Thought
		a.chunks = reply.Chunks
		if len(a.chunks) == 0 && reply.Text != "" {
			a.chunks = []string{reply.Text}
		}
		if reply.Tool != nil {
			use := *reply.Tool // the script may reuse its ToolUse
			a.kind, a.tool = "toolCall", &use
			a.toolID = "call_emu_" + strconv.Itoa(n)
			if len(a.tool.Input) == 0 {
				a.tool.Input = json.RawMessage("{}")
			}
		}
	}
	out := len(a.thought)
	for _, c := range a.chunks {
		out += len(c)
	}
	if a.tool != nil {
		out += len(a.tool.Input) + len(a.tool.Custom)
	}
	a.outTokens = tokens(out)
	return a
}

// tokens estimates a token count from a byte count (4 bytes a token), at least 1.
func tokens(bytes int) int { return bytes/4 + 1 }

// answer is a resolved Reply: what every dialect writer sends.
type answer struct {
	kind      string // Response.Answer
	model     string
	n         int // this answer's number, for ids
	thought   string
	chunks    []string
	delay     time.Duration
	tool      *ToolUse
	toolID    string
	inTokens  int
	outTokens int
	usage     bool // the client asked for usage in the stream (Chat Completions)
}

// text is the whole answer text.
func (a *answer) text() string { return strings.Join(a.chunks, "") }

// writeJSON sends v as a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// pause waits d, or until ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stream writes server-sent events, flushing each one, and paces chunks.
type stream struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	ctx    context.Context
	delay  time.Duration
	chunks int // text deltas written
}

// event writes one SSE event (name may be empty) with v as its JSON data.
func (st *stream) event(name string, v any) error {
	if err := st.ctx.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return st.raw(name, data)
}

// raw writes one SSE event with data as it is.
func (st *stream) raw(name string, data []byte) error {
	buf := make([]byte, 0, len(data)+len(name)+16)
	if name != "" {
		buf = append(append(append(buf, "event: "...), name...), '\n')
	}
	buf = append(append(append(buf, "data: "...), data...), "\n\n"...)
	if _, err := st.w.Write(buf); err != nil {
		return err
	}
	return st.rc.Flush()
}

// delta writes text delta i as an event and counts it; every delta after the first waits
// the answer's delay first.
func (st *stream) delta(i int, name string, v any) error {
	if i > 0 {
		if err := pause(st.ctx, st.delay); err != nil {
			return err
		}
	}
	if err := st.event(name, v); err != nil {
		return err
	}
	st.chunks++
	return nil
}
