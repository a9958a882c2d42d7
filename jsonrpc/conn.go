package jsonrpc

import (
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
)

// Handler answers a request the peer sent. It returns the result to send, or an error object.
// Returning (nil, nil) sends the result null.
type Handler func(ctx context.Context, req *Message) (result any, rpcErr *Error)

// MaxConcurrentHandlers is how many of the peer's requests a Conn answers at once.
const MaxConcurrentHandlers = 64

// ErrClosed is returned by Call when the peer's output ended before the answer came.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ConnOptions configures a Conn.
type ConnOptions struct {
	// Log receives every frame in both directions; a new Log is made when nil.
	Log *Log
	// MaxLineSize bounds a kept line (DefaultMaxLineSize when 0).
	MaxLineSize int
	// Handler answers requests from the peer; when nil they get -32601 method not found.
	Handler Handler
	// Local is the direction this side writes as; the peer's lines are recorded with the
	// other direction. Default DirClient (we are the client, the peer is the agent).
	Local Dir
}

// Conn is one JSON-RPC connection over a pair of byte streams. Reading happens on its own
// goroutine once Start is called; calls may be made from any goroutine.
type Conn struct {
	r       io.Reader
	w       io.Writer
	log     *Log
	max     int
	handler Handler
	local   Dir
	remote  Dir

	wmu sync.Mutex // serialises writes so lines never interleave

	mu      sync.Mutex
	nextID  int64
	pending map[string]chan *Message

	handlerCtx    context.Context
	cancelHandler context.CancelFunc
	handlers      sync.WaitGroup
	// slots bounds the peer's requests being answered at once: past it, reading waits, so a
	// peer that floods requests meets back-pressure instead of costing a goroutine each.
	slots chan struct{}

	done    chan struct{}
	readErr error
}

// NewConn prepares a connection that reads the peer's output from r and writes to w.
func NewConn(r io.Reader, w io.Writer, opts ConnOptions) *Conn {
	c := &Conn{r: r, w: w, log: opts.Log, max: opts.MaxLineSize, handler: opts.Handler, local: opts.Local,
		pending: map[string]chan *Message{}, done: make(chan struct{}), slots: make(chan struct{}, MaxConcurrentHandlers)}
	if c.log == nil {
		c.log = NewLog()
	}
	if c.local == "" {
		c.local = DirClient
	}
	c.remote = DirAgent
	if c.local == DirAgent {
		c.remote = DirClient
	}
	c.handlerCtx, c.cancelHandler = context.WithCancel(context.Background())
	return c
}

// Log returns the connection's frame log.
func (c *Conn) Log() *Log { return c.log }

// Start begins reading the peer's output.
func (c *Conn) Start() { go c.readLoop() }

// Done is closed when the peer's output has ended (EOF or read error) and every pending call
// has been released.
func (c *Conn) Done() <-chan struct{} { return c.done }

// ReadErr is the error that ended reading (nil for a clean EOF). Valid after Done.
func (c *Conn) ReadErr() error { return c.readErr }

func (c *Conn) readLoop() {
	lr := NewLineReader(c.r, c.max)
	for {
		line, err := lr.Next()
		if err == nil || line.Size > 0 {
			f := c.log.Append(Frame{Dir: c.remote, Raw: line.Raw, Size: line.Size, Oversize: line.Oversize, Unterminated: line.Unterminated})
			c.dispatch(f)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.readErr = err
			}
			break
		}
	}
	c.cancelHandler()
	// Release pending calls and mark the end in one locked step, so no Call can register in
	// between and wait forever.
	c.mu.Lock()
	for k, ch := range c.pending {
		close(ch)
		delete(c.pending, k)
	}
	close(c.done)
	c.mu.Unlock()
}

func (c *Conn) dispatch(f Frame) {
	m := f.Msg
	if m == nil {
		return
	}
	switch m.Kind() {
	case Response:
		key, ok := IDKey(m.ID)
		if !ok {
			return
		}
		c.mu.Lock()
		ch := c.pending[key]
		delete(c.pending, key)
		c.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	case Request:
		c.slots <- struct{}{}
		c.handlers.Add(1)
		go func() {
			defer func() { <-c.slots; c.handlers.Done() }()
			c.answer(m)
		}()
	}
}

func (c *Conn) answer(req *Message) {
	var result any
	var rpcErr *Error
	if c.handler != nil {
		result, rpcErr = c.handler(c.handlerCtx, req)
	} else {
		rpcErr = &Error{Code: CodeMethodNotFound, Message: "Method not found"}
	}
	var line []byte
	var err error
	if rpcErr != nil {
		line, err = EncodeError(req.ID, rpcErr)
	} else {
		line, err = EncodeResult(req.ID, result)
	}
	if err != nil {
		// The peer must still get an answer: say that ours could not be encoded.
		line, _ = EncodeError(req.ID, &Error{Code: CodeInternalError, Message: "Internal error: the answer could not be encoded: " + err.Error()})
	}
	_ = c.WriteLine(line)
}

// WriteLine records line as written by this side and writes it followed by a newline. The log
// keeps its own copy of line.
func (c *Conn) WriteLine(line []byte) error {
	buf := make([]byte, 0, len(line)+1)
	buf = append(append(buf, line...), '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.log.Append(Frame{Dir: c.local, Raw: buf[:len(line):len(line)]})
	_, err := c.w.Write(buf)
	return err
}

// Call sends a request and waits for its answer, the end of ctx, or the end of the peer's
// output (ErrClosed). The returned message is a response; check Err() for an error answer.
func (c *Conn) Call(ctx context.Context, method string, params any) (*Message, error) {
	p, line, err := c.prepare(method, params)
	if err != nil {
		return nil, err
	}
	// Write on a goroutine so a peer that stops reading cannot hold the caller past ctx: the
	// write itself ends when the peer reads or its input is closed (teardown).
	written := make(chan error, 1)
	go func() { written <- c.WriteLine(line) }()
	select {
	case err := <-written:
		if err != nil {
			c.forget(p.key)
			return nil, err
		}
	case <-ctx.Done():
		c.forget(p.key)
		return nil, ctx.Err()
	}
	return p.Wait(ctx)
}

// Pending is a request that was written and awaits its answer.
type Pending struct {
	c   *Conn
	key string
	ch  chan *Message
}

// Request writes a request and returns at once; Wait collects the answer. Requests written
// one after another from one goroutine reach the peer in that order.
func (c *Conn) Request(method string, params any) (*Pending, error) {
	p, line, err := c.prepare(method, params)
	if err != nil {
		return nil, err
	}
	if err := c.WriteLine(line); err != nil {
		c.forget(p.key)
		return nil, err
	}
	return p, nil
}

// prepare registers a new request id and encodes the request line.
func (c *Conn) prepare(method string, params any) (*Pending, []byte, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	p := &Pending{c: c, key: "n:" + strconv.FormatInt(id, 10), ch: make(chan *Message, 1)}
	select {
	case <-c.done:
		c.mu.Unlock()
		return nil, nil, ErrClosed
	default:
	}
	c.pending[p.key] = p.ch
	c.mu.Unlock()
	line, err := EncodeRequest(id, method, params)
	if err != nil {
		c.forget(p.key)
		return nil, nil, err
	}
	return p, line, nil
}

// Wait waits for the answer, the end of ctx, or the end of the peer's output (ErrClosed).
func (p *Pending) Wait(ctx context.Context) (*Message, error) {
	select {
	case m, ok := <-p.ch:
		if !ok {
			return nil, ErrClosed
		}
		return m, nil
	case <-ctx.Done():
		p.c.forget(p.key)
		return nil, ctx.Err()
	}
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	line, err := EncodeNotification(method, params)
	if err != nil {
		return err
	}
	return c.WriteLine(line)
}

// Wait waits for the handlers of inbound requests that are still running.
func (c *Conn) Wait() { c.handlers.Wait() }

func (c *Conn) forget(key string) {
	c.mu.Lock()
	delete(c.pending, key)
	c.mu.Unlock()
}
