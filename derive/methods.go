package derive

import (
	"encoding/json"
	"fmt"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// Method detection asks each optional method with params no handler can accept, so that the
// dispatcher answers and the handler never runs: -32601 means the method does not exist,
// -32602 (or an error that reads as a validation failure) means it does. It answers in
// milliseconds, creates nothing, and leaves agents that would otherwise start work (a CLI
// process per session/load of a made-up session) free to exit.
//
// A control request for a method no agent has goes with them: when the agent answers it with
// -32601, any other answer proves a handler. Only an answer that cannot be told from the
// control's — an agent that answers unknown methods like known ones — is asked again the old
// way, on a session id that does not exist (NonexistentSessionID).

// detectionAmbiguousExplanation starts the message of a method whose answer could not be told
// from the control's.
const detectionAmbiguousExplanation = "answers like an unknown method"

// DetectionParams are params no handler of method can accept: an empty object (every probed
// method but session/list has required fields), or for session/list, whose fields are all
// optional, a cwd of the wrong type.
func DetectionParams(method string) map[string]any {
	if method == acp.MethodSessionList {
		return map[string]any{"cwd": 1}
	}
	return map[string]any{}
}

// MethodParams are the fallback detection calls: well-formed, naming a session that does not
// exist, or only reading.
func MethodParams(method, cwd string) map[string]any {
	sid := record.NonexistentSessionID
	switch method {
	case acp.MethodSetConfigOption:
		return map[string]any{"sessionId": sid, "configId": "acpprobe-nonexistent-option", "value": "acpprobe-nonexistent-value"}
	case acp.MethodSetMode:
		return map[string]any{"sessionId": sid, "modeId": "acpprobe-nonexistent-mode"}
	case acp.MethodSetModel:
		return map[string]any{"sessionId": sid, "modelId": "acpprobe-nonexistent-model"}
	case acp.MethodSessionLoad, acp.MethodSessionResume, acp.MethodSessionFork:
		return map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}
	case acp.MethodSessionList:
		return map[string]any{"cwd": cwd}
	case acp.MethodSessionSetTitle:
		return map[string]any{"sessionId": sid, "title": "acpprobe-nonexistent-title"}
	default: // session/close, session/delete, session/status, session/archive, session/unarchive, session/stop
		return map[string]any{"sessionId": sid}
	}
}

// detectionForm tells from a request's params how it detects: with invalid params, or on a
// made-up session (the only form of recordings made before invalid-params detection).
func detectionForm(method string, params json.RawMessage) report.DetectedBy {
	var got, invalid any
	b, _ := json.Marshal(DetectionParams(method))
	if json.Unmarshal(params, &got) == nil && json.Unmarshal(b, &invalid) == nil && fmt.Sprint(got) == fmt.Sprint(invalid) {
		return report.DetectedByInvalidParams
	}
	return report.DetectedByNonexistentSession
}

// Classify reads the answer to a detection request sent in form. control is the answer to
// record.DetectionControlMethod (nil when there was none, as in recordings made before it).
// decided is false when an invalid-params answer cannot be told from the control's: the
// method must be asked again on a made-up session (the engine does, live; the derivation then
// reads the second answer).
func Classify(form report.DetectedBy, answer, control *jsonrpc.Message) (s report.MethodSupport, decided bool) {
	rpcErr := answer.Err()
	if rpcErr == nil {
		return report.MethodSupport{Support: report.Supported}, true
	}
	code := rpcErr.Code
	s = report.MethodSupport{Support: report.Supported, Code: &code, Message: rpcErr.Message}
	switch {
	case code == jsonrpc.CodeMethodNotFound:
		s.Support = report.Unsupported
		return s, true
	case form == report.DetectedByNonexistentSession && control != nil && sameRPCError(rpcErr, control.Err()):
		s.Support = report.Unknown
		s.Message = detectionAmbiguousExplanation + ": " + rpcErr.Message
		return s, true
	case form == report.DetectedByNonexistentSession:
		// Any other answer but -32601 is a handler's (recordings without a control read the
		// same way; conformance judges agents that answer unknown methods alike:
		// capability.detection-unreliable).
		return s, true
	case code == jsonrpc.CodeInvalidParams, acp.IsValidationError(rpcErr):
		return s, true
	case control == nil:
		return s, true
	}
	if c := control.Err(); c != nil && c.Code == jsonrpc.CodeMethodNotFound {
		return s, true // the dispatcher knows "not found": this answer came from a handler
	}
	s.Support = report.Unknown
	s.Message = detectionAmbiguousExplanation + ": " + rpcErr.Message
	return s, false
}

// sameError reports whether two error answers say the same thing (code and message).
func sameRPCError(a, b *jsonrpc.Error) bool {
	return a != nil && b != nil && a.Code == b.Code && a.Message == b.Message
}

// Detection is what the answer to the extension step's unknown request says about method
// detection: when the agent answers an unknown method with the code that made probed methods
// count as supported, their support cannot be trusted.
type Detection struct {
	Code int      // the code the unknown request was answered with
	Same []string // probed methods counted as supported on that same code
}

// Unreliable reports whether method detection cannot be trusted.
func (d Detection) Unreliable() bool { return len(d.Same) > 0 }

// detectMethods reads the answer to the extension step's unknown request against the
// derived method support.
func detectMethods(x *record.Index, r *report.Result) Detection {
	reqSeq := UnknownRequestSeq(x.StepRange(record.StepExtensionMethods))
	if reqSeq == 0 {
		return Detection{}
	}
	answer, ok := x.AnswerTo(reqSeq)
	if !ok {
		return Detection{}
	}
	rpcErr := answer.Msg.Err()
	if rpcErr == nil || rpcErr.Code == jsonrpc.CodeMethodNotFound {
		return Detection{}
	}
	d := Detection{Code: rpcErr.Code}
	for _, m := range acp.ProbedMethods {
		if s := r.Methods[m]; s.Support == report.Supported && s.Code != nil && *s.Code == rpcErr.Code {
			d.Same = append(d.Same, m)
		}
	}
	return d
}

// UnknownRequestSeq is the seq of the extension step's unknown request (0 when it was not sent).
func UnknownRequestSeq(frames []jsonrpc.Frame) int64 {
	var seq int64
	for _, f := range frames {
		if f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == record.DetectionControlMethod && f.Msg.Kind() == jsonrpc.Request {
			seq = f.Seq
		}
	}
	return seq
}
