package conformance

import (
	"fmt"
	"time"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/derive"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The checks of the active steps that every acpprobe check runs: an unknown extension
// notification and request, invalid params, and a fork of a session that does not exist.
var (
	protocolUnknownMethodRequest  = &Check{ID: "protocol.unknown-method-request", Tier: report.TierAdvisory, Side: SideAgent, Title: "Unknown _-prefixed request not answered with -32601", SpecRef: specExtensibility, Active: true}
	protocolRequestUnanswered     = &Check{ID: "protocol.request-unanswered", Tier: report.TierMandatory, Side: SideAgent, Title: "Request left without an answer", SpecRef: specJSONRPC, Active: true}
	protocolNotificationAnswered  = &Check{ID: "protocol.notification-answered", Tier: report.TierMandatory, Side: SideAgent, Title: "Agent answered a notification", SpecRef: specJSONRPC, Active: true}
	protocolUnknownNotification   = &Check{ID: "protocol.unknown-notification", Tier: report.TierAdvisory, Side: SideAgent, Title: "Unknown _-prefixed notification ended the agent", SpecRef: specExtensibility, Active: true}
	protocolInvalidParams         = &Check{ID: "protocol.invalid-params", Tier: report.TierAdvisory, Side: SideAgent, Title: "Invalid params not answered with -32602", SpecRef: specJSONRPC, Active: true}
	protocolForkNonexistent       = &Check{ID: "protocol.fork-nonexistent-session", Tier: report.TierAdvisory, Side: SideAgent, Title: "A fork of a session that does not exist created a session", SpecRef: specSessionFork, Active: true}
	capabilityDetectionUnreliable = &Check{ID: "capability.detection-unreliable", Tier: report.TierInfo, Side: SideAgent, Title: "The agent answers unknown methods like known ones; method detection is unreliable", SpecRef: specExtensibility, Active: true}
)

// activePass reads the frames of the extension-methods and invalid-params steps (the index's
// step ranges and pairing), the fork-probe connection's fork step, and the method-detection
// verdict (detection). Only a session acpprobe drove has steps.
var activePass = pass{
	name:  "active steps",
	scope: driven,
	checks: []*Check{protocolUnknownMethodRequest, protocolRequestUnanswered, protocolNotificationAnswered,
		protocolUnknownNotification, protocolInvalidParams, protocolForkNonexistent, capabilityDetectionUnreliable},
	run: func(in *inputs, out *findings) {
		judgeExtensionStep(in, out)
		judgeInvalidParamsStep(in, out)
		judgeForkStep(in, out)
	},
}

func judgeExtensionStep(in *inputs, out *findings) {
	frames := in.Main.StepRange(record.StepExtensionMethods)
	if frames == nil {
		return
	}
	var notifSeq int64
	for _, f := range frames {
		switch {
		case f.Dir == jsonrpc.DirClient && f.Msg != nil && f.Msg.Method == record.UnknownNotificationMethod:
			notifSeq = f.Seq
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && notifSeq != 0 && !f.Msg.HasMethod && (f.Msg.Result != nil || f.Msg.Error != nil) &&
			(f.Msg.ID == nil || string(f.Msg.ID) == "null"):
			out.add(protocolNotificationAnswered, f.Seq, "", fmt.Sprintf("the agent answered the notification %s with %s (a notification never gets a response, not even an error)", record.UnknownNotificationMethod, f.Raw), nil)
		}
	}
	reqSeq := derive.UnknownRequestSeq(frames)
	if reqSeq == 0 {
		return
	}
	answer, ok := in.Main.AnswerTo(reqSeq)
	if !ok {
		if in.Main.GoneBefore(reqSeq) {
			out.add(protocolUnknownNotification, notifSeq, "", fmt.Sprintf("the agent's output ended after the unknown notification %s", record.UnknownNotificationMethod), nil)
			return
		}
		out.add(protocolRequestUnanswered, reqSeq, "", fmt.Sprintf("the request %s got no answer; every request must be answered (unknown ones with -32601)", record.DetectionControlMethod), nil)
		return
	}
	rpcErr := answer.Msg.Err()
	switch {
	case rpcErr == nil:
		out.add(protocolUnknownMethodRequest, answer.Seq, "/result", fmt.Sprintf("the unknown request %s was answered with a result instead of -32601", record.DetectionControlMethod), nil)
	case rpcErr.Code != jsonrpc.CodeMethodNotFound:
		out.add(protocolUnknownMethodRequest, answer.Seq, "/error/code", fmt.Sprintf("the unknown request %s was answered %d %q instead of -32601", record.DetectionControlMethod, rpcErr.Code, rpcErr.Message), nil)
		if d := in.Detection; d.Unreliable() {
			out.add(capabilityDetectionUnreliable, 0, "", fmt.Sprintf("an unknown method is answered %d like %v, so these may not be implemented at all", d.Code, d.Same), d.Same)
		}
	}
}

func judgeInvalidParamsStep(in *inputs, out *findings) {
	for _, f := range in.Main.StepRange(record.StepInvalidParams) {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Method != acp.MethodSessionPrompt {
			continue
		}
		answer, ok := in.Main.AnswerTo(f.Seq)
		if !ok {
			if !in.Main.GoneBefore(f.Seq) {
				out.add(protocolRequestUnanswered, f.Seq, "", "session/prompt with invalid params got no answer", nil)
			}
			return
		}
		rpcErr := answer.Msg.Err()
		switch {
		case rpcErr == nil:
			out.add(protocolInvalidParams, answer.Seq, "/result", "session/prompt with a string prompt was answered with a result instead of -32602", nil)
		case rpcErr.Code == jsonrpc.CodeInvalidParams, rpcErr.Code == jsonrpc.CodeResourceNotFound, rpcErr.Code == jsonrpc.CodeAuthRequired:
			// -32602 is right; -32002/-32000 mean the agent checked the session or the login
			// before the params, which is its choice.
		default:
			out.add(protocolInvalidParams, answer.Seq, "/error/code", fmt.Sprintf("session/prompt with a string prompt (invalid params) was answered %d %q; invalid params are -32602", rpcErr.Code, rpcErr.Message), nil)
		}
		return
	}
}

// judgeForkStep judges the fork-probe connection: a fork of a session that does not exist
// must be refused; a result carrying a sessionId means the agent created a session from
// nothing.
func judgeForkStep(in *inputs, out *findings) {
	if in.Fork == nil {
		return
	}
	for _, f := range in.Fork.StepRange(record.StepForkNonexistent) {
		if f.Dir != jsonrpc.DirClient || f.Msg == nil || f.Msg.Kind() != jsonrpc.Request || f.Msg.Method != acp.MethodSessionFork {
			continue
		}
		answer, ok := in.Fork.AnswerTo(f.Seq)
		if !ok {
			if !in.Fork.GoneBefore(f.Seq) {
				// Some agents work for seconds on this fork (claude-agent-acp starts Claude
				// Code): say which budget ran out, so that a slow machine can raise it.
				budget := time.Duration(in.Fork.Spawn().RequestTimeoutMs * float64(time.Millisecond))
				out.add(protocolRequestUnanswered, f.Seq, "", fmt.Sprintf("session/fork of a session that does not exist got no answer within %s (--request-timeout)", budget), nil)
			}
			return
		}
		if answer.Msg.Err() == nil {
			if id := acp.ParseObject(answer.Msg.Result).String("sessionId"); id != "" {
				out.add(protocolForkNonexistent, answer.Seq, "/result/sessionId", fmt.Sprintf(
					"session/fork of %s, a session that does not exist, was answered with the new session %q: the agent created a session from nothing instead of refusing (-32002)",
					record.NonexistentSessionID, id), nil)
			}
		}
		return
	}
}
