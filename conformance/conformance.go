// Package conformance judges a recorded ACP session: framing and JSON-RPC envelope, messages
// against the pinned official schema, version negotiation and protocol behaviour, whether
// advertised capabilities are true, vendor extensions and what the client sent. Each departure
// is a probe.Finding with a stable check id, a tier, a JSON pointer into the message and the
// transcript line (seq) it came from.
//
// Judging is a list of passes, one file each (see passes). A pass declares the checks it
// reports as package variables (a finding under an id no pass declares cannot be written), the
// scopes it applies to (a session acpprobe drove, or one between an editor and an agent seen
// by acpprobe tap: Evaluate runs only the passes of the record's scope), and it judges inputs
// that Evaluate computes once: the record's index, the result derived from it, the schema
// sets, the client's capabilities, whether method detection can be trusted, the vendor
// extension inventory and the prompt shapes. Passes return findings; they write nothing into
// the result they judge and share no state. A context bounds an evaluation: the passes whose
// cost grows with the record stop when it ends, and the outcome names them
// (Outcome.Unjudged).
//
// Checks are passive (Evaluate reads frames and the probe result, so a transcript can be
// judged offline) except for a few active exchanges (Steps) that the probe engine runs during
// a live session; their answers are judged by Evaluate like everything else.
package conformance

import (
	"context"
	"slices"
	"sort"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Options tune an evaluation.
type Options struct {
	// Schema is the schema set to validate against (schema.V1, V1Unstable, V2); empty means v1,
	// or v2 when protocol version 2 was negotiated.
	Schema string
	// Deep holds the frames of the initialize-only connection of --deep (see record.Split),
	// which asked for a version no agent supports.
	Deep []jsonrpc.Frame
	// ForkProbe holds the frames of check's fork-probe connection (see ForkProbe and
	// record.Split), which forked a session that does not exist.
	ForkProbe []jsonrpc.Frame
	// SessionLoad and SessionResume hold the frames of the sessions turn scenario's
	// connections after the main one (record.PurposeSessionLoad, PurposeSessionResume).
	SessionLoad, SessionResume []jsonrpc.Frame
	// Catalogue classifies vendor extensions (extensions.Default() when nil).
	Catalogue *extensions.Catalogue
	// From, when not 0, judges only the frames after this seq, frame by frame: the earlier
	// ones are context (the index pairs answers with their requests, the facts come from the
	// handshake) that an earlier evaluation judged. The tap's live judge evaluates a session
	// window by window this way, so that each frame is judged once.
	From int64
}

// Outcome is what an evaluation adds to a result: the findings, most severe first, and the
// facts derived on the way, which the passes judge (the vendor extension inventory, the prompt
// shapes).
type Outcome struct {
	Findings     []report.Finding
	Extensions   *extensions.Inventory
	PromptShapes *report.PromptShapes
	// Turns are the prompt-turn scenarios (acpprobe turn), each with its outcome.
	Turns []report.Turn
	// Unjudged names the passes that did not judge the whole record because the context ended
	// (nil when every pass finished): their findings, and the extension inventory when it is
	// among them, hold only what was judged before.
	Unjudged []string
}

// inputs are everything a pass may read, computed once by Evaluate (the extension inventory by
// the first pass that reads it). Passes only read them.
type inputs struct {
	// ctx bounds the evaluation: scans stop when it ends.
	ctx context.Context
	x   *record.Index
	// frames are the frames to judge one by one: the record's, or those after Options.From.
	frames []jsonrpc.Frame
	// r is the result derived from the record (the facts the passes judge).
	r       *report.Result
	schemas *schemas
	// client is what the client advertised in its initialize request.
	client clientCaps
	// detection says whether the agent answers an unknown method like the probed ones.
	detection detection
	catalogue *extensions.Catalogue
	// ext is the extension inventory, taken by the first call of extensions.
	ext    *extensionFacts
	shapes shapeFacts
	// turns are the facts of the prompt-turn scenarios, outcomes not yet settled.
	turns []report.Turn
	// deep is the --deep connection's own result (nil without --deep).
	deep *deepFacts
	// fork is the fork-probe connection's index (nil without one).
	fork *record.Index
}

// Evaluate judges a recorded session: its index and the result derived from it (which it does
// not modify). It runs the passes that apply to the record's scope. An error means the schema
// set could not be loaded.
//
// ctx bounds the time: the inputs and the passes whose cost grows with the record look at it as
// they go, and when it ends Evaluate returns at once with what was judged; Outcome.Unjudged
// names the passes that did not finish. The passes whose cost does not grow with the record
// (handshake, capability truth, state, steps) always run.
func Evaluate(ctx context.Context, x *record.Index, r *report.Result, opts Options) (Outcome, error) {
	in, err := prepare(ctx, x, r, opts)
	if err != nil {
		return Outcome{}, err
	}
	sc := scopeOf(x)
	lists := make([][]report.Finding, len(passes))
	cut := make([]bool, len(passes))
	for _, i := range runOrder {
		p := passes[i]
		if p.scope&sc == 0 {
			continue
		}
		if p.cost != fixed && ctx.Err() != nil {
			cut[i] = true
			continue
		}
		var out findings
		p.run(in, &out)
		lists[i], cut[i] = out.list, out.cut
	}
	var unjudged []string
	for i, p := range passes {
		if cut[i] {
			unjudged = append(unjudged, p.name)
		}
	}
	var inv *extensions.Inventory
	if in.ext != nil {
		inv = in.ext.inventory
	}
	return Outcome{Findings: sortFindings(x, mergeOverlaps(slices.Concat(lists...))), Extensions: inv, PromptShapes: in.shapes.shapes, Turns: settleTurns(in.turns), Unjudged: unjudged}, nil
}

// prepare computes the inputs of the passes: the schema sets, and the facts of the record that
// the derived result does not state (method detection, the prompt shapes, the --deep and
// fork-probe connections). The extension inventory, the one input whose cost grows with the record, is
// taken once, by the first pass that reads it (inputs.extensions).
func prepare(ctx context.Context, x *record.Index, r *report.Result, opts Options) (*inputs, error) {
	sets, err := loadSchemas(opts.Schema, r)
	if err != nil {
		return nil, err
	}
	cat := opts.Catalogue
	if cat == nil {
		cat = extensions.Default()
	}
	return &inputs{
		ctx: ctx, x: x, frames: after(x.Frames(), opts.From), r: r, schemas: sets, catalogue: cat,
		client:    clientCapsOf(x),
		detection: detectMethods(x, r),
		shapes:    deriveShapes(x, r),
		turns:     deriveTurns(x, sessionConns{load: opts.SessionLoad, resume: opts.SessionResume}),
		deep:      deriveDeep(opts.Deep, cat),
		fork:      indexOf(opts.ForkProbe),
	}, nil
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

// extensions is the vendor extension inventory, taken on the first call: it stops when the
// evaluation's context ends (the passes reading it are cut then too).
func (in *inputs) extensions() extensionFacts {
	if in.ext == nil {
		f := takeExtensions(in.ctx, in.x, in.frames, in.catalogue, in.schemas.known())
		in.ext = &f
	}
	return *in.ext
}
