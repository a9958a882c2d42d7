package derive

import (
	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// runFacts adds to r, derived from the session x, the facts of the whole run that follow its
// last connection in frames (the whole record): the side effects, and the auth oracle's
// answer when the run has auth-identity events (--auth-ab).
func runFacts(r *report.Result, x *record.Index, frames []jsonrpc.Frame) {
	if se, ok := record.FindRun(frames, record.SideEffects); ok {
		r.SideEffects = sideEffects(x, se)
	}
	var ids []record.AuthIdentityInfo
	for _, f := range frames {
		if id, ok := record.AuthIdentity.Decode(f); ok {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	if r.SideEffects != nil {
		if main := MainIdentity(r.SideEffects.Isolation); main != "" {
			ids = append([]record.AuthIdentityInfo{IdentityFacts(x, r, main, r.SideEffects.Isolation)}, ids...)
		}
	}
	r.AuthAB = authOracle(ids)
}

// sideEffects builds the side-effect report of a run from its side-effects event (se)
// and the index of its session (x: the processes events, the exit, the authenticate
// requests).
func sideEffects(x *record.Index, se record.SideEffectsInfo) *report.SideEffects {
	out := &report.SideEffects{Isolation: se.Isolation, Files: se.Files, Network: se.Network,
		Browser: report.BrowserEffects{Shimmed: se.Browser.Shimmed, Dropped: se.Browser.Dropped, Launches: []report.BrowserLaunch{}}}
	if out.Isolation.Credentials == nil {
		out.Isolation.Credentials = []string{}
	}
	if out.Network.Lookups == nil {
		out.Network.Lookups = []string{}
	}
	if out.Network.Connects == nil {
		out.Network.Connects = []record.Connect{}
	}
	firstAuth := -1.0
	if auth := x.First(acp.MethodAuthenticate); auth != nil {
		firstAuth = float64(auth.Request.At.Microseconds()) / 1000
	}
	for _, l := range se.Browser.Launches {
		before := firstAuth < 0 || l.AtMs < firstAuth
		out.Browser.Launches = append(out.Browser.Launches, report.BrowserLaunch{BrowserLaunch: l, BeforeAuthenticate: before})
		if before {
			out.Browser.BeforeAuthenticate++
		}
	}
	out.Processes = processEffects(x)
	return out
}

// processEffects reads the processes events and the survivors of the exit.
func processEffects(x *record.Index) report.ProcessEffects {
	p := report.ProcessEffects{AfterTeardown: []record.Survivor{}, Escaped: []report.EscapedProcess{}}
	started, _ := x.FirstEvent(record.Started.Kind)
	leader, _ := record.Started.Decode(started)
	seen := map[int]bool{}
	escaped := func(pid int, command string, at record.Moment) {
		if !seen[pid] {
			seen[pid] = true
			p.Escaped = append(p.Escaped, report.EscapedProcess{PID: pid, Command: command, Seen: at})
		}
	}
	for _, f := range x.Events(record.Processes.Kind) {
		info, ok := record.Processes.Decode(f)
		if !ok {
			continue
		}
		m := &report.ProcessMoment{AgentExited: info.AgentExited, Processes: info.Processes, Error: info.Error}
		if m.Processes == nil {
			m.Processes = []record.Proc{}
		}
		switch info.Moment {
		case record.AfterSessionClose:
			p.AfterSessionClose = m
		case record.AfterStdin:
			p.AfterStdinEOF = m
		default:
			continue
		}
		for _, proc := range m.Processes {
			if leader.PID > 0 && proc.PGID != leader.PID {
				escaped(proc.PID, proc.Comm, info.Moment)
			}
		}
	}
	if f, ok := x.FirstEvent(record.Exit.Kind); ok {
		if exit, ok := record.Exit.Decode(f); ok && exit.Survivors != nil {
			p.AfterTeardown = exit.Survivors
			for _, s := range exit.Survivors {
				if s.LeftGroup {
					escaped(s.PID, s.Command, s.Found)
				}
			}
		}
	}
	return p
}
