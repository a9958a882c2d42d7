package derive

import (
	"encoding/json"
	"reflect"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// shapeFacts are the prompt shapes of a record (--prompt-shapes and the --allow-prompt run),
// derived once: a fact of the report (Result.PromptShapes) that the prompt pass judges.
type shapeFacts struct {
	// shapes is nil when the record has neither step.
	shapes *report.PromptShapes
	// promptAnswer is the answer to the --allow-prompt prompt (nil when none came).
	promptAnswer *jsonrpc.Frame
}

// deriveShapes reads the prompt-shape probes and the allowed prompt of a recording.
func deriveShapes(x *record.Index, r *report.Result) shapeFacts {
	sf := shapeFacts{shapes: shapeProbes(x, r)}
	frames := x.StepRange(record.StepAllowedPrompt)
	if frames == nil {
		return sf
	}
	run := &report.PromptRun{Updates: map[string]int{}}
	var reqSeq int64
	for _, f := range frames {
		switch {
		case f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request && f.Msg.Method == acp.MethodSessionPrompt:
			reqSeq = f.Seq
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Method == acp.MethodSessionUpdate:
			kind := acp.ParseObject(f.Msg.Params).Object("update").String("sessionUpdate")
			run.Updates[kind]++
		case record.PromptWindow.Is(f):
			p, _ := record.PromptWindow.Decode(f)
			run.WindowMs = p.WindowMs
		}
	}
	if reqSeq == 0 {
		return sf
	}
	if sf.shapes == nil {
		sf.shapes = &report.PromptShapes{Session: "nonexistent", SessionCreated: true, Probes: []report.ShapeProbe{}, InferredBranches: []report.ShapeBranch{}}
	}
	sf.shapes.Prompt = run
	answer, ok := x.AnswerTo(reqSeq)
	run.SchemaAccepted = true
	if !ok {
		return sf
	}
	sf.promptAnswer = &answer
	run.Answered = true
	if rpcErr := answer.Msg.Err(); rpcErr != nil {
		code := rpcErr.Code
		run.Code = &code
		run.SchemaAccepted = code != jsonrpc.CodeInvalidParams
		return sf
	}
	run.StopReason = acp.ParseObject(answer.Msg.Result).String("stopReason")
	return sf
}

// shapeOf is the prompt shape the probe sent as prompt.
func shapeOf(prompt json.RawMessage) (record.PromptShape, bool) {
	for _, sh := range record.PromptShapes {
		if string(sh.Prompt) == string(prompt) {
			return sh, true
		}
	}
	return record.PromptShape{}, false
}

// shapeProbes reads the prompt-shape probes of a recording (nil when there were none).
func shapeProbes(x *record.Index, r *report.Result) *report.PromptShapes {
	frames := x.StepRange(record.StepPromptShapes)
	if frames == nil {
		return nil
	}
	ps := &report.PromptShapes{
		Session:          "nonexistent",
		SessionCreated:   string(r.Raw.NewSession) != "null",
		Probes:           []report.ShapeProbe{},
		InferredBranches: []report.ShapeBranch{},
	}
	var control *report.ShapeProbe
	var errs []*jsonrpc.Error // each probe's error answer (nil when none)
	inf := newInference()
	for _, f := range frames {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		prompt := acp.ParseObject(f.Msg.Params)["prompt"]
		sh, known := shapeOf(prompt)
		if !known {
			continue
		}
		p := report.ShapeProbe{Name: sh.Name, Prompt: prompt, Seq: f.Seq, Outcome: report.ShapeNoAnswer, Answer: json.RawMessage("null")}
		var rpcErr *jsonrpc.Error
		if answer, ok := x.AnswerTo(f.Seq); ok {
			if rpcErr = answer.Msg.Err(); rpcErr != nil {
				code := rpcErr.Code
				p.Code = &code
				p.Answer = rpcErr.Raw
				p.Outcome = report.ShapeRejected
				inf.read(rpcErr)
			} else {
				p.Answer = answer.Msg.Result
				p.Outcome = report.ShapeAccepted
			}
		}
		if sh.Control {
			if p.Outcome == report.ShapeRejected {
				p.Outcome = report.ShapeAccepted // a valid shape: its error is about the session
			}
			c := p
			control = &c
		}
		ps.Probes = append(ps.Probes, p)
		errs = append(errs, rpcErr)
	}
	// An answer just like the control's means the shape got past validation to the session
	// lookup — if the agent validates first, which it does when it rejected any other shape
	// with a validation error. Otherwise the probe cannot tell.
	validatesFirst := false
	for i, p := range ps.Probes {
		if p.Outcome == report.ShapeRejected && (control == nil || !sameError(p.Answer, control.Answer)) && acp.IsValidationError(errs[i]) {
			validatesFirst = true
		}
	}
	for i := range ps.Probes {
		p := &ps.Probes[i]
		if control == nil || p.Name == control.Name || p.Outcome != report.ShapeRejected || !sameError(p.Answer, control.Answer) {
			continue
		}
		p.Outcome = report.ShapeUndetermined
		if validatesFirst {
			p.Outcome = report.ShapeAccepted
		}
	}
	ps.ErrorStyle = inf.style
	ps.InferredBranches = inf.branches()
	ps.RequiredFields = inf.requiredFields()
	ps.InferenceTruncated = inf.truncated
	return ps
}

// sameError reports whether two error answers are the same: code, message and data (qwen-code
// 0.24.4 answers -32603 "Internal error" both to a prompt for a session it does not have and to
// a malformed one, and only the data tells them apart: zod's issues, or the missing session).
func sameError(a, b json.RawMessage) bool {
	var ea, eb struct {
		Code    int
		Message string
		Data    json.RawMessage
	}
	if json.Unmarshal(a, &ea) != nil || json.Unmarshal(b, &eb) != nil || ea.Code != eb.Code || ea.Message != eb.Message {
		return false
	}
	return jsonEqual(ea.Data, eb.Data)
}

// jsonEqual reports whether two JSON values are equal as values (absent and null alike).
func jsonEqual(a, b json.RawMessage) bool {
	var va, vb any
	if len(a) > 0 && json.Unmarshal(a, &va) != nil {
		return false
	}
	if len(b) > 0 && json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
