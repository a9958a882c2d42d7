// Package conformance judges a recorded ACP session: framing and JSON-RPC envelope, messages
// against the pinned official schema, version negotiation and protocol behaviour, whether
// advertised capabilities are true, vendor extensions and what the client sent. Each departure
// is a report.Finding with a stable check id, a tier, a JSON pointer into the message and the
// transcript line (seq) it came from.
//
// Judging is a list of passes, one file each (see passes). A pass declares the checks it
// reports as package variables (a finding under an id no pass declares cannot be written), the
// scopes it applies to (a session acpprobe drove, or one between an editor and an agent seen
// by acpprobe tap: Evaluate runs only the passes of the record's scope), and it judges the
// facts the derive package states (derive.Facts): the record's index, the result derived from
// it, the schema sets, the client's capabilities, whether method detection can be trusted, the
// vendor extension inventory and the prompt shapes. The judge computes no fact: a new fact is
// a file of derive, a new check a pass file here. Passes return findings; they write nothing
// into the result they judge and share no state. A context bounds an evaluation: the passes
// whose cost grows with the record stop when it ends, and the outcome names them
// (Outcome.Unjudged).
//
// Checks are passive (Evaluate reads facts and frames, so a transcript can be judged offline);
// some judge the answers to active exchanges that the engine ran during a live session (the
// probe package's CheckSteps), found in the record by their step names.
package conformance

import (
	"context"
	"slices"

	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/report"
)

// Outcome is what an evaluation adds to the facts it judged: the findings, most severe first,
// and the turns with their outcomes settled.
type Outcome struct {
	Findings []report.Finding
	// Turns are the prompt-turn scenarios (acpprobe turn), each with its outcome: failed when
	// it has a finding, passed otherwise (not-run stays as derived).
	Turns []report.Turn
	// Unjudged names the passes that did not judge the whole record because the context ended
	// (nil when every pass finished): their findings, and the extension inventory when it is
	// among them, hold only what was judged before.
	Unjudged []string
}

// inputs are everything a pass may read: the facts of the record (derived once by
// derive.Run; the extension inventory taken by the first pass that reads it) and the
// evaluation's context. Passes only read them.
type inputs struct {
	// ctx bounds the evaluation: scans stop when it ends.
	ctx context.Context
	*derive.Facts
}

// Evaluate judges the facts of a recorded run (which it does not modify, but for taking the
// extension inventory once). It runs the passes that apply to the record's scope.
//
// ctx bounds the time: the passes whose cost grows with the record look at it as they go, and
// when it ends Evaluate returns at once with what was judged; Outcome.Unjudged names the
// passes that did not finish. The passes whose cost does not grow with the record (handshake,
// capability truth, state, steps) always run.
func Evaluate(ctx context.Context, f *derive.Facts) Outcome {
	in := &inputs{ctx: ctx, Facts: f}
	sc := scopeOf(f.Main)
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
	return Outcome{Findings: sortFindings(f.Main, mergeOverlaps(slices.Concat(lists...))), Turns: settleTurns(f.Result.Turns), Unjudged: unjudged}
}
