package sentinel

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/acpprobe/acpprobe/record"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxActive bounds the HTTP requests a sentinel serves at once; more get 503.
const maxActive = 64

// closeWait bounds how long close waits for the connections to end once they are closed.
const closeWait = 5 * time.Second

// httpSentinel is the streamable HTTP or SSE sentinel: the SDK's handler behind a wrapper
// that checks the token path, bounds and records every request and the messages in it.
type httpSentinel struct {
	hub       *Hub
	transport record.MCPTransport
	path      string // /<token>/mcp or /<token>/sse
	token     string
	server    *mcp.Server
	handler   http.Handler
	ln        net.Listener
	srv       *http.Server
	served    chan struct{}  // closed when Serve has returned
	extra     sync.WaitGroup // one per listener given to Hub.Serve
	conns     sync.WaitGroup // one per open connection, counted by the server's ConnState hook
	slots     chan struct{}  // one per running request, up to maxActive
}

func startHTTP(h *Hub, t record.MCPTransport) (*httpSentinel, error) {
	ln, err := listenLoopback()
	if err != nil {
		return nil, err
	}
	s := &httpSentinel{
		hub:       h,
		transport: t,
		token:     randomHex(16),
		server:    newServer(t, h.Tool(t), h.Marker(t)),
		ln:        ln,
		served:    make(chan struct{}),
		slots:     make(chan struct{}, maxActive),
	}
	getServer := func(*http.Request) *mcp.Server { return s.server }
	switch t {
	case record.MCPHTTP:
		s.path = "/" + s.token + "/mcp"
		s.handler = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{MaxRequestBodyBytes: maxMessage})
	case record.MCPSSE:
		s.path = "/" + s.token + "/sse"
		s.handler = mcp.NewSSEHandler(getServer, &mcp.SSEOptions{MaxRequestBodyBytes: maxMessage})
	default:
		ln.Close()
		return nil, fmt.Errorf("sentinel: %q is not an HTTP transport", t)
	}
	s.srv = &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		MaxHeaderBytes:    64 << 10,
		IdleTimeout:       time.Minute,
		ErrorLog:          log.New(io.Discard, "", 0), // an agent's odd request is an event, not a log line
		ConnState: func(_ net.Conn, state http.ConnState) {
			switch state {
			case http.StateNew:
				s.conns.Add(1)
			case http.StateClosed, http.StateHijacked:
				s.conns.Done()
			}
		},
	}
	go func() {
		defer close(s.served)
		s.srv.Serve(ln) // returns http.ErrServerClosed at close
	}()
	return s, nil
}

func (s *httpSentinel) url() string { return "http://" + s.ln.Addr().String() + s.path }

// ServeHTTP records the request, answers 404 off the token path, bounds and records the
// body's messages, and hands the request to the SDK.
func (s *httpSentinel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	remote, loopback := peer(r.RemoteAddr)
	ev := record.MCPEvent{Transport: s.transport, HTTPMethod: clip(r.Method), Remote: remote, Loopback: loopback}
	if r.URL.Path != s.path {
		ev.Kind, ev.Path, ev.Status = record.MCPRejected, clip(r.URL.Path), http.StatusNotFound
		s.hub.record(ev)
		http.NotFound(w, r)
		return
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		ev.Kind, ev.Path, ev.Status, ev.Error = record.MCPRejected, s.maskedPath(), http.StatusServiceUnavailable, "too many requests at once"
		s.hub.record(ev)
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	seen := r.Header.Get(CheckHeader) == s.hub.check
	ev.Kind, ev.Path, ev.ConfigSeen = record.MCPRequest, s.maskedPath(), &seen
	events := []record.MCPEvent{ev}
	if r.Method == http.MethodPost && r.Body != nil {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMessage))
		var tooBig *http.MaxBytesError
		bad := record.MCPEvent{Transport: s.transport, Size: len(body), Remote: remote, Loopback: loopback}
		switch {
		case errors.As(err, &tooBig):
			ev.Status, bad.Kind, bad.Status = http.StatusRequestEntityTooLarge, record.MCPOversize, http.StatusRequestEntityTooLarge
		case err != nil:
			ev.Status, bad.Kind, bad.Status, bad.Error = http.StatusBadRequest, record.MCPInvalid, http.StatusBadRequest, clip("reading the body: "+err.Error())
		}
		if bad.Kind != "" {
			s.hub.record(ev)
			s.hub.record(bad)
			http.Error(w, "body over the limit or unreadable", bad.Status)
			return
		}
		messages, _ := observe(body)
		for _, e := range messages {
			e.Transport, e.Remote, e.Loopback = s.transport, remote, loopback
			events = append(events, e)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	// The request and its messages are recorded once the SDK has chosen the status: a
	// message it refuses (>= 400) counts for no milestone.
	sw := &statusWriter{ResponseWriter: w, wrote: func(status int) {
		for _, e := range events {
			e.Status = status
			s.hub.record(e)
		}
	}}
	s.handler.ServeHTTP(sw, r)
	sw.note(http.StatusOK) // a handler that wrote nothing answered 200
}

// statusWriter calls wrote with the response's status when it is first written.
type statusWriter struct {
	http.ResponseWriter
	once  sync.Once
	wrote func(status int)
}

func (w *statusWriter) note(status int) { w.once.Do(func() { w.wrote(status) }) }

func (w *statusWriter) WriteHeader(status int) {
	w.note(status)
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.note(http.StatusOK)
	return w.ResponseWriter.Write(b)
}

// Flush and Unwrap keep http.ResponseController working: the SDK flushes SSE events.
func (w *statusWriter) Flush() {
	w.note(http.StatusOK)
	http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// maskedPath is the token path as recorded: the token is a per-run secret.
func (s *httpSentinel) maskedPath() string { return strings.Replace(s.path, s.token, "{token}", 1) }

// close stops the server, its connections and every MCP session on it, and waits until
// every connection's goroutine is done (net/http may linger up to half a second on a
// connection it closes after an oversize body).
func (s *httpSentinel) close() error {
	err := s.srv.Close() // closes the listener and every connection: running requests end
	<-s.served           // no connection is counted after this
	s.extra.Wait()
	s.closeSessions() // ends SSE streams and handlers waiting on a session
	done := make(chan struct{})
	go func() { s.conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
		return fmt.Errorf("sentinel: %s connections still open %v after close", s.transport, closeWait)
	}
	s.closeSessions() // any a request connected while closing
	return err
}

func (s *httpSentinel) closeSessions() {
	for ss := range s.server.Sessions() {
		ss.Close()
	}
}
