package derive

import (
	"fmt"
	"slices"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The permission scenario's facts: per run, the mode, the tool call, the permission request
// and acpprobe's answer to it, and whether the file was written anyway.

// permissionTruth is what the agent did in one run of the permission scenario, when the model
// asked to write a file: the mode it ran in and acpprobe's answer (the run's permission-run
// event), the tool call it reported, whether it asked, what acpprobe answered, and whether the
// file appeared (the run's file-exists observation).
func permissionTruth(x *record.Index, frames []jsonrpc.Frame, runs []*turnRun) report.PermissionTruth {
	p := report.PermissionTruth{PermissionRunInfo: permissionRunOf(x, frames)}
	toolCallID := ""
	for _, f := range frames {
		switch {
		case f.Dir == jsonrpc.DirAgent && f.Msg != nil && f.Msg.Kind() == jsonrpc.Request && f.Msg.Method == acp.MethodRequestPermission:
			if !p.Asked {
				p.Asked, p.AskedSeq = true, f.Seq
				toolCallID = acp.ParsePermissionRequest(f.Msg.Params).ToolCallID
				if a, ok := x.AnswerTo(f.Seq); ok {
					o := acp.ParseObject(a.Msg.Result).Object("outcome")
					p.Answered = o.String("optionId")
					if p.Answered == "" {
						p.Answered = o.String("outcome")
					}
				}
			}
		case record.Observation.Is(f):
			if o, ok := record.Observation.Decode(f); ok && o.Name == "file-exists" {
				p.FileWritten = o.Value == true
			}
		case p.SetBy != "" && isClientRequest(f, p.SetBy) && len(runs) == 0:
			if a, ok := x.AnswerTo(f.Seq); !ok {
				p.Reason = p.SetBy + " selecting mode " + p.Mode + " was not answered"
			} else if e := a.Msg.Err(); e != nil {
				p.Reason = fmt.Sprintf("%s selecting mode %s was refused: %d %s", p.SetBy, p.Mode, e.Code, e.Message)
			}
		}
	}
	if len(runs) > 0 {
		p.Seq = runs[0].prompt.Seq
	}
	if !hasPermissionRun(frames) && p.Answered == "cancelled" {
		p.Answer = record.AnswerCancelled // an old record's policy, as the answer shows it
	}
	for _, r := range runs {
		for _, m := range r.models {
			if m.answer == "toolCall" {
				p.Offered = true
			}
		}
		facts := r.facts()
		if p.StopReason == "" {
			p.StopReason = facts.StopReason
		}
		for _, tc := range facts.ToolCalls {
			p.ToolCall = true
			if toolCallID == "" || tc.ID == toolCallID {
				p.ToolStatus = tc.Status
			}
		}
	}
	return p
}

// hasPermissionRun reports whether a permission run's frames say its mode (a record of a
// version that did).
func hasPermissionRun(frames []jsonrpc.Frame) bool {
	return slices.ContainsFunc(frames, record.PermissionRun.Is)
}

// permissionRunOf is the mode a permission run ran in and how acpprobe answered: its
// permission-run event. A record of a version before runs said so ran one run in the mode its
// session started in, answered reject: that mode, as its session/new result names it.
func permissionRunOf(x *record.Index, frames []jsonrpc.Frame) record.PermissionRunInfo {
	for _, f := range frames {
		if info, ok := record.PermissionRun.Decode(f); ok {
			return info
		}
	}
	info := record.PermissionRunInfo{Answer: record.AnswerReject, Default: true}
	ns := acp.ParseSessionResult(sessionResultOf(x, frames))
	if opt := acp.ModeOption(ns.ConfigOptions); opt != nil {
		for _, v := range opt.Options {
			if v.Value == opt.Current() {
				info.Mode, info.Name, info.Description = v.Value, v.Name, v.Description
			}
		}
	} else {
		for _, m := range ns.Modes {
			if m.ID == ns.CurrentModeID {
				info.Mode, info.Name, info.Description = m.ID, m.Name, m.Description
			}
		}
	}
	if info.Mode != "" {
		info.Asks = acp.PromisesToAsk(info.Mode, info.Name, info.Description)
	}
	return info
}
