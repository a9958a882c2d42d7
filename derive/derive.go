// Package derive states the facts of a recorded run, and nothing else: what the agent said and
// did, read from the record (the frames of every connection of the run, stderr, and the
// events around them) in the vocabulary of the report. It is the one place where a record
// becomes facts: the handshake and the error of a probe that could not complete, method
// support, timings and counts, the side effects and the auth oracle, the prompt shapes and
// what the agent's errors say about its validator, the turn scenarios (runs, model truth,
// permission, cancel, MCP milestones, session continuity), the --deep and fork-probe
// connections, which schema sets apply, what the client advertised, and the vendor extension
// inventory.
//
// Judging the facts is the conformance package's job: Run returns Facts, conformance.Evaluate
// turns them into findings, and acpprobe.Analyze applies the verdict. A fact that is judged
// has its home here, in the file of its part of the record; its check has its own pass file in
// conformance.
//
// Deriving is bounded by the caller's context: the facts read from a fixed number of frames
// (the handshake, the events, the exit) are always derived; the walks whose cost grows with
// the record (the totals, the timings, method detection, the extension inventory) stop when it
// ends, and the result says its totals are partial (Coverage.Partial).
package derive

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Options say how a record is read.
type Options struct {
	// Catalogue classifies vendor extensions (extensions.Default() when nil).
	Catalogue *extensions.Catalogue
	// Schema is the schema set the record is read against (schema.V1Next, V1, V1Unstable, V2
	// …); empty means schema.Default, or v2 when protocol version 2 was negotiated.
	Schema string
	// From, when not 0, makes only the frames after this seq the ones to judge one by one
	// (Facts.Frames) and to inventory: the earlier ones are context that an earlier
	// evaluation judged (the tap's live judge, window by window).
	From int64
}

// Facts are what the derivation states about a run: the report's facts, and the facts the
// conformance passes judge that the report does not carry.
type Facts struct {
	// Result holds the report's facts: everything but the findings, the turns' outcomes, the
	// verdict and the extension inventory (see Extensions).
	Result *report.Result
	// Main indexes the main connection; Frames are its frames to judge one by one (Main's, or
	// those after Options.From).
	Main   *record.Index
	Frames []jsonrpc.Frame
	// From is Options.From: a fact of a line at or before it was judged by an earlier
	// evaluation.
	From int64
	// Others index the other connections acpprobe drove as it drives the main one: the turn
	// scenarios' fresh agent processes and the sessions scenario's (purposes turn,
	// session-load, session-resume). Their frames are judged one by one too (Judged); the
	// initialize-only connections of check (deep, fork-probe) have checks of their own.
	Others []*record.Index
	// Schemas are the schema sets the record is read against.
	Schemas *Schemas
	// Client is what the client advertised in its initialize request.
	Client ClientCaps
	// Detection is what the extension step's unknown request says of method detection.
	Detection Detection
	// PromptAnswer is the answer to the --allow-prompt prompt (nil when none came).
	PromptAnswer *jsonrpc.Frame
	// StdinWait is how long the teardown waited for the agent to leave after closing its
	// stdin.
	StdinWait StdinWait
	// Deep is the --deep connection (nil without one); Fork indexes the fork-probe
	// connection (nil without one).
	Deep *Deep
	Fork *record.Index
	// Catalogue is the catalogue the facts are classified with.
	Catalogue *extensions.Catalogue

	once  sync.Once
	exts  Extensions
	taken bool
	cut   bool
}

// Run derives the facts of a run from its connections (record.Split of its record). The error
// is non-nil only when the schema set named cannot be loaded.
func Run(ctx context.Context, conns record.Connections, o Options) (*Facts, error) {
	cat := o.Catalogue
	if cat == nil {
		cat = extensions.Default()
	}
	x := record.New(conns.Main)
	r := Connection(ctx, x, cat)
	runFacts(r, x, conns.All) // the run's own facts follow its last connection
	sets, err := loadSchemas(o.Schema, r)
	if err != nil {
		return nil, err
	}
	r.ACPSchema = sets.Ref()
	shapes := deriveShapes(x, r)
	r.PromptShapes = shapes.shapes
	turnConns := []*record.Index{x}
	var others []*record.Index
	for _, c := range conns.Extra {
		switch c.Purpose {
		case record.PurposeTurn:
			turnConns = append(turnConns, record.New(c.Frames))
			others = append(others, turnConns[len(turnConns)-1])
		case record.PurposeSessionLoad, record.PurposeSessionResume:
			others = append(others, record.New(c.Frames))
		}
	}
	r.Turns = deriveTurns(turnConns, sessionConns{load: conns.Of(record.PurposeSessionLoad), resume: conns.Of(record.PurposeSessionResume)}, runModelOf(x, conns.All))
	r.Route = turnRoute(x, r, conns.All)
	f := &Facts{
		Result: r, Main: x, Frames: after(x.Frames(), o.From), From: o.From, Others: others, Schemas: sets,
		Client:       clientCapsOf(x),
		Detection:    detectMethods(x, r),
		PromptAnswer: shapes.promptAnswer,
		StdinWait:    stdinWait(x),
		Deep:         deriveDeep(ctx, conns.Of(record.PurposeDeep), cat),
		Fork:         indexOf(conns.Of(record.PurposeForkProbe)),
		Catalogue:    cat,
	}
	all := []Part{{X: x, Frames: x.Frames()}} // every line: a fact, whatever was judged before
	for _, o := range others {
		all = append(all, Part{X: o, Frames: o.Frames()})
	}
	r.ZeroMeta = zeroMeta(all, cat)
	return f, nil
}

// Part is a connection's frames to judge one by one, and the index of that connection (which
// pairs its responses with their requests).
type Part struct {
	X      *record.Index
	Frames []jsonrpc.Frame
}

// Judged are the frames judged one by one: the main connection's Frames, then every frame of
// the Others, each with its connection's index.
func (f *Facts) Judged() []Part {
	parts := []Part{{X: f.Main, Frames: f.Frames}}
	for _, x := range f.Others {
		parts = append(parts, Part{X: x, Frames: x.Frames()})
	}
	return parts
}

// Extensions is the vendor extension inventory of the judged frames (Judged), taken on the first call, within
// ctx: its cost grows with the record, so it is taken by the first pass that reads it, after
// the cheaper passes have judged. cut says the context ended before it had taken every
// message (the passes that read it did not judge the whole record then).
func (f *Facts) Extensions(ctx context.Context) (e Extensions, cut bool) {
	f.once.Do(func() {
		f.exts = takeExtensions(ctx, f.Judged(), f.Catalogue, f.Schemas.Places())
		f.taken, f.cut = true, ctx.Err() != nil
	})
	return f.exts, f.cut
}

// Inventory is the inventory for the report once it has been taken (nil before: no pass
// needed it, or the context ended first).
func (f *Facts) Inventory() *extensions.Inventory {
	if !f.taken {
		return nil
	}
	return f.exts.Inventory
}

// indexOf indexes the frames of an extra connection (nil when there is none).
func indexOf(frames []jsonrpc.Frame) *record.Index {
	if frames == nil {
		return nil
	}
	return record.New(frames)
}

// after is the frames after seq from (all of them when from is 0); frames are in seq order.
func after(frames []jsonrpc.Frame, from int64) []jsonrpc.Frame {
	return frames[sort.Search(len(frames), func(i int) bool { return frames[i].Seq > from }):]
}

// StdinWait is how long a teardown waited for the agent to leave after closing its stdin
// before it signalled: a probe that signals at once (Waited false) shows nothing of the
// agent's behaviour on EOF.
type StdinWait struct {
	Waited bool
	// Ms is the wait; nil in recordings from before it was recorded, which always waited a
	// grace.
	Ms *float64
}

// String says the wait as a finding words it.
func (w StdinWait) String() string {
	if w.Ms == nil {
		return "a grace"
	}
	return fmt.Sprintf("%.0f ms", *w.Ms)
}

// stdinWait reads the ladder's teardown event of x. A connection stopped by a signal (Ctrl-C)
// did not wait what the event says: the interrupt cut the wait short (to InterruptGrace, or to
// nothing during the teardown), so it shows nothing of the agent's behaviour on EOF either.
func stdinWait(x *record.Index) StdinWait {
	if len(x.Events(record.Interrupted.Kind)) > 0 {
		return StdinWait{}
	}
	for _, f := range x.Events(record.Teardown.Kind) {
		if p, ok := record.Teardown.Decode(f); ok && p.Step == record.TeardownLadder && p.StdinWaitMs != nil {
			return StdinWait{Waited: *p.StdinWaitMs > 0, Ms: p.StdinWaitMs}
		}
	}
	return StdinWait{Waited: true}
}
