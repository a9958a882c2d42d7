package record

import (
	"slices"

	"github.com/acpprobe/acpprobe/jsonrpc"
)

// Exchange is a request and the first answer to it.
type Exchange struct {
	Request jsonrpc.Frame
	// Answer is the first response whose id matches the request; nil when none came.
	Answer *jsonrpc.Frame
}

// Method is the request's method.
func (x *Exchange) Method() string { return x.Request.Msg.Method }

// Index is a record with its requests paired with their answers and its events by kind. It is
// built incrementally (Add), so a tap can judge each frame as it arrives, or at once (New).
//
// Pairing rule, the same everywhere (result, checks, replay): a response answers the most
// recent request with the same canonical id sent before it in the other direction; only the
// first response to a request is its answer, later ones are duplicates.
type Index struct {
	frames []jsonrpc.Frame

	calls  []*Exchange             // requests of both directions, in order
	bySeq  map[int64]*Exchange     // request seq → exchange
	open   [2]map[string]*Exchange // per direction of the request: id key → latest request with it
	reply  map[int64]Reply         // response seq → what it answered
	events map[Kind][]int          // kind → indices into frames
	folded []int                   // indices of folded runs (frames over the memory budget)
}

// Reply says what a response frame answered.
type Reply struct {
	// Exchange is the request the response's id names; nil when no request with that id was
	// sent before it (an unknown id).
	Exchange *Exchange
	// First is true when this response is the request's answer (the first one); false for a
	// duplicate.
	First bool
}

// New indexes a whole record.
func New(frames []jsonrpc.Frame) *Index {
	x := NewIndex()
	for _, f := range frames {
		x.Add(f)
	}
	return x
}

// NewIndex starts an empty index.
func NewIndex() *Index {
	return &Index{
		bySeq:  map[int64]*Exchange{},
		open:   [2]map[string]*Exchange{{}, {}},
		reply:  map[int64]Reply{},
		events: map[Kind][]int{},
	}
}

func side(d jsonrpc.Dir) int {
	if d == jsonrpc.DirAgent {
		return 1
	}
	return 0
}

// Add appends one frame (in record order) and indexes it.
func (x *Index) Add(f jsonrpc.Frame) {
	x.frames = append(x.frames, f)
	switch {
	case f.Dir == jsonrpc.DirFolded:
		x.folded = append(x.folded, len(x.frames)-1)
	case f.Dir == jsonrpc.DirEvent:
		x.events[Kind(f.Kind)] = append(x.events[Kind(f.Kind)], len(x.frames)-1)
	case f.Msg == nil || (f.Dir != jsonrpc.DirClient && f.Dir != jsonrpc.DirAgent):
	case f.Msg.Kind() == jsonrpc.Request:
		ex := &Exchange{Request: f}
		x.calls = append(x.calls, ex)
		x.bySeq[f.Seq] = ex
		if key, ok := jsonrpc.IDKey(f.Msg.ID); ok {
			x.open[side(f.Dir)][key] = ex
		}
	case f.Msg.Kind() == jsonrpc.Response:
		key, ok := jsonrpc.IDKey(f.Msg.ID)
		if !ok {
			x.reply[f.Seq] = Reply{}
			return
		}
		// A response travels the other way from its request.
		ex := x.open[1-side(f.Dir)][key]
		if ex == nil {
			x.reply[f.Seq] = Reply{}
			return
		}
		first := ex.Answer == nil
		if first {
			a := f
			ex.Answer = &a
		}
		x.reply[f.Seq] = Reply{Exchange: ex, First: first}
	}
}

// Frames is the record, in order. The slice is the index's own: do not modify it.
func (x *Index) Frames() []jsonrpc.Frame { return x.frames }

// Folded are the runs of frames the record counted but did not keep (over its memory budget).
func (x *Index) Folded() []*jsonrpc.Folded {
	out := make([]*jsonrpc.Folded, len(x.folded))
	for i, j := range x.folded {
		out[i] = x.frames[j].Folded
	}
	return out
}

// Calls are the requests of one direction (DirClient: the client's; DirAgent: the agent's),
// in order, each with its answer.
func (x *Index) Calls(dir jsonrpc.Dir) []*Exchange {
	var out []*Exchange
	for _, ex := range x.calls {
		if ex.Request.Dir == dir {
			out = append(out, ex)
		}
	}
	return out
}

// First is the client's first request for method, or nil.
func (x *Index) First(method string) *Exchange {
	for _, ex := range x.calls {
		if ex.Request.Dir == jsonrpc.DirClient && ex.Request.Msg.Method == method {
			return ex
		}
	}
	return nil
}

// Call is the exchange of the request at seq, or nil when seq is not a request.
func (x *Index) Call(seq int64) *Exchange { return x.bySeq[seq] }

// AnswerTo is the first answer to the request at seq.
func (x *Index) AnswerTo(seq int64) (jsonrpc.Frame, bool) {
	if ex := x.bySeq[seq]; ex != nil && ex.Answer != nil {
		return *ex.Answer, true
	}
	return jsonrpc.Frame{}, false
}

// ReplyOf says what the response at seq answered (the zero Reply for an unknown id or a frame
// that is not a response).
func (x *Index) ReplyOf(seq int64) Reply { return x.reply[seq] }

// Events are the events of a kind, in order.
func (x *Index) Events(k Kind) []jsonrpc.Frame {
	idx := x.events[k]
	out := make([]jsonrpc.Frame, len(idx))
	for i, j := range idx {
		out[i] = x.frames[j]
	}
	return out
}

// FirstEvent is the first event of a kind.
func (x *Index) FirstEvent(k Kind) (jsonrpc.Frame, bool) {
	if idx := x.events[k]; len(idx) > 0 {
		return x.frames[idx[0]], true
	}
	return jsonrpc.Frame{}, false
}

// EventSeq is the seq of the first event of a kind (0 when there is none).
func (x *Index) EventSeq(k Kind) int64 {
	f, _ := x.FirstEvent(k)
	return f.Seq
}

// AtStage reports whether an event of kind e (timeout, interrupted) names stage.
func (x *Index) AtStage(e Event[StageInfo], stage Stage) bool {
	for _, f := range x.Events(e.Kind) {
		if p, _ := e.Decode(f); p.Stage == stage {
			return true
		}
	}
	return false
}

// Spawn is the payload of the record's first spawn event (zero when there is none).
func (x *Index) Spawn() SpawnInfo {
	f, _ := x.FirstEvent(Spawn.Kind)
	s, _ := Spawn.Decode(f)
	return s
}

// IsTap reports whether the record is a session between an editor and an agent (acpprobe
// tap), not one acpprobe drove.
func (x *Index) IsTap() bool { return x.Spawn().Tap }

// Steps are the names of the steps that began, in order.
func (x *Index) Steps() []string {
	var names []string
	for _, f := range x.Events(Step.Kind) {
		if p, ok := Step.Decode(f); ok {
			names = append(names, p.Name)
		}
	}
	return names
}

// HasStep reports whether the named step began.
func (x *Index) HasStep(name string) bool { return slices.Contains(x.Steps(), name) }

// StepRange returns the frames between the start of the named active step and the next step
// or teardown event (nil when the step never began).
func (x *Index) StepRange(name string) []jsonrpc.Frame {
	start := -1
	for i, f := range x.frames {
		if f.Dir != jsonrpc.DirEvent {
			continue
		}
		if start < 0 {
			if p, ok := Step.Decode(f); ok && p.Name == name {
				start = i + 1
			}
			continue
		}
		if Step.Is(f) || Teardown.Is(f) {
			return x.frames[start:i]
		}
	}
	if start < 0 {
		return nil
	}
	return x.frames[start:]
}

// ActiveEnd is the seq where the probe's own exchanges before any active step ended: the first
// step or teardown event (0 when neither happened).
func (x *Index) ActiveEnd() int64 {
	var end int64
	for _, k := range []Kind{Step.Kind, Teardown.Kind} {
		if seq := x.EventSeq(k); seq != 0 && (end == 0 || seq < end) {
			end = seq
		}
	}
	return end
}

// GoneBefore reports whether the agent's output ended after seq and before the teardown began:
// the agent went away on its own while the request at seq waited.
func (x *Index) GoneBefore(seq int64) bool {
	for _, f := range x.Events(EOF.Kind) {
		if f.Seq > seq {
			teardown := x.EventSeq(Teardown.Kind)
			return teardown == 0 || f.Seq < teardown
		}
	}
	return false
}

// Connections are a record split into its connections: the main session, then the extra
// connections acpprobe check opened after it in the same log, each named by its purpose.
type Connections struct {
	// All is the whole record; the run-level events (side effects, the other identity of
	// --auth-ab) follow its last connection.
	All   []jsonrpc.Frame
	Main  []jsonrpc.Frame
	Extra []Connection
}

// Connection is one extra connection of a record.
type Connection struct {
	// Purpose is what it is for (PurposeDeep, PurposeForkProbe, or a purpose this version
	// does not know, from a newer recording).
	Purpose Purpose
	Frames  []jsonrpc.Frame
}

// Of is the frames of the first extra connection with the purpose (nil when there is none).
func (c Connections) Of(purpose Purpose) []jsonrpc.Frame {
	for _, e := range c.Extra {
		if e.Purpose == purpose {
			return e.Frames
		}
	}
	return nil
}

// Split separates a record into its connections. An extra connection begins with a spawn
// event that names a purpose (or, in a record written before purposes, says initializeOnly:
// the --deep connection) right after the done event that closed the connection before it.
// Anything else stays with the connection it follows, so a record of one connection, or a
// spawn without a purpose after a done, is all main.
func Split(frames []jsonrpc.Frame) Connections {
	c := Connections{All: frames}
	start, purpose := 0, Purpose("")
	cut := func(end int) {
		if start == 0 {
			c.Main = frames[:end]
		} else {
			c.Extra = append(c.Extra, Connection{Purpose: purpose, Frames: frames[start:end]})
		}
	}
	for i := 1; i < len(frames); i++ {
		if !Done.Is(frames[i-1]) {
			continue
		}
		if s, ok := Spawn.Decode(frames[i]); ok && s.purpose() != "" {
			cut(i)
			start, purpose = i, s.purpose()
		}
	}
	cut(len(frames))
	return c
}

// Position is where line seq sorts in a report: an answer at the line of the request it
// answers, any other line (a duplicate answer too) at its own. Answers to requests sent
// together come back in an order timing decides; sorted by their requests, findings and
// extension sightings come out the same whatever that order.
func (x *Index) Position(seq int64) int64 {
	if reply := x.ReplyOf(seq); reply.Exchange != nil && reply.First {
		return reply.Exchange.Request.Seq
	}
	return seq
}
