package conformance

import (
	"fmt"
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// The protocol checks any session shows: agentInfo, terminal auth, exit after stdin closes,
// stderr.
var (
	protocolAgentInfo    = &Check{ID: "protocol.agent-info", Tier: report.TierAdvisory, Side: SideAgent, Title: "initialize result has no agentInfo", SpecRef: specInit}
	protocolTerminalAuth = &Check{ID: "protocol.terminal-auth", Tier: report.TierMandatory, Side: SideAgent, Title: "Terminal auth method advertised to a client that did not enable it", SpecRef: specAuth}
	protocolStdinExit    = &Check{ID: "protocol.stdin-exit", Tier: report.TierAdvisory, Side: SideAgent, Title: "Agent did not exit after stdin closed", SpecRef: specTransports}
	protocolLeftover     = &Check{ID: "protocol.leftover-processes", Tier: report.TierAdvisory, Side: SideAgent, Title: "Processes of the agent's group outlived it", SpecRef: specTransports}
	protocolStderr       = &Check{ID: "protocol.stderr-volume", Tier: report.TierInfo, Side: SideAgent, Title: "Agent wrote a lot on stderr", SpecRef: specTransports}
)

// protocolPass reads the derived result (agentInfo, authMethods, exit, stderr size), the
// client's capabilities and the index (the lines to point at), in any session.
var protocolPass = pass{
	name:   "protocol",
	scope:  anyScope,
	checks: []*Check{protocolAgentInfo, protocolTerminalAuth, protocolStdinExit, protocolLeftover, protocolStderr},
	run:    runProtocol,
}

func runProtocol(in *inputs, out *findings) {
	r := in.Result
	if initSeq := answerSeq(in, acp.MethodInitialize); initSeq != 0 && r.AgentInfo == nil && string(r.Raw.Initialize) != "null" {
		out.add(protocolAgentInfo, initSeq, "/result/agentInfo", "initialize should carry agentInfo {name, version} (it will be required in a future version)", nil)
	}
	terminalAuth(in, out)
	if x := r.Exit; x != nil {
		if w := in.StdinWait; w.Waited && x.By.Signalled() {
			out.add(protocolStdinExit, in.Main.EventSeq(record.Exit.Kind), "", fmt.Sprintf("the agent was still running %s after its stdin closed and had to be stopped with %s", w, strings.ToUpper(string(x.By))), nil)
		}
		// One departure, one finding: the survivors, when the sweep found them, say what the
		// group kill alone says and more.
		if x.GroupKilled && len(x.Survivors) == 0 {
			out.add(protocolLeftover, in.Main.EventSeq(record.Exit.Kind), "", "processes of the agent's process group were still running after it ended and were killed", nil)
		}
		if len(x.Survivors) > 0 {
			// Processes that outlived the agent, found by the run's marker after the ladder.
			var names []string
			left := 0
			for _, s := range x.Survivors {
				names = append(names, s.Command) // pids are in the evidence: they change from run to run
				if s.LeftGroup {
					left++
				}
			}
			msg := fmt.Sprintf("%d process(es) of the agent outlived it and were killed: %s", len(x.Survivors), strings.Join(names, ", "))
			if left > 0 {
				msg += fmt.Sprintf("; %d had left its process group (a setsid escape), which a group teardown alone would have missed", left)
			}
			out.add(protocolLeftover, in.Main.EventSeq(record.Exit.Kind), "", msg, x.Survivors)
		}
	}
	if r.StderrBytes > 64<<10 {
		during := "a session acpprobe drove (handshake, method detection and its checks, no prompt turn)"
		if in.Main.IsTap() {
			during = "the session between the editor and the agent"
		}
		out.add(protocolStderr, 0, "", fmt.Sprintf("%d bytes of stderr during %s", r.StderrBytes, during), nil)
	}
}

// terminalAuth: an agent MUST advertise an authMethods entry of type "terminal" only when the
// client enabled clientCapabilities.auth.terminal (acpprobe never does; an editor may).
func terminalAuth(in *inputs, out *findings) {
	if in.Client.AuthTerminal {
		return
	}
	seq := answerSeq(in, acp.MethodInitialize)
	for i, m := range in.Result.AuthMethods {
		method := acp.ParseObject(m)
		if method.String("type") != "terminal" {
			continue
		}
		out.add(protocolTerminalAuth, seq, fmt.Sprintf("/result/authMethods/%d/type", i),
			fmt.Sprintf("authMethods item %d (%q) has type \"terminal\", but the client did not enable clientCapabilities.auth.terminal; agents must advertise it only to clients that did", i, method.String("id")), nil)
	}
}

// answerSeq is the seq of the agent's answer to the first client request for method (0 if
// there was no request or no answer).
func answerSeq(in *inputs, method string) int64 {
	if ex := in.Main.First(method); ex != nil && ex.Answer != nil {
		return ex.Answer.Seq
	}
	return 0
}
