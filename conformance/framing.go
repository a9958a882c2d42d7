package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/report"
)

// The framing checks: each line the agent wrote on stdout.
var (
	framingNonJSON      = &Check{ID: "framing.stdout-non-json", Tier: report.TierMandatory, Side: SideAgent, Title: "Agent wrote a line on stdout that is not JSON", SpecRef: specTransports}
	framingBOM          = &Check{ID: "framing.bom", Tier: report.TierMandatory, Side: SideAgent, Title: "Line starts with a UTF-8 byte order mark", SpecRef: specTransports}
	framingInvalidUTF8  = &Check{ID: "framing.invalid-utf8", Tier: report.TierMandatory, Side: SideAgent, Title: "Line is not valid UTF-8", SpecRef: specTransports}
	framingOversize     = &Check{ID: "framing.oversize", Tier: report.TierAdvisory, Side: SideAgent, Title: "Line longer than the reader's maximum", SpecRef: specTransports}
	framingUnterminated = &Check{ID: "framing.unterminated", Tier: report.TierAdvisory, Side: SideAgent, Title: "Last line has no terminating newline", SpecRef: specTransports}
	framingEmptyLine    = &Check{ID: "framing.empty-line", Tier: report.TierAdvisory, Side: SideAgent, Title: "Empty line on stdout", SpecRef: specTransports}
	framingBatch        = &Check{ID: "framing.batch", Tier: report.TierAdvisory, Side: SideAgent, Title: "JSON-RPC batch array (not part of ACP v1)", SpecRef: specTransports}
)

// framingPass reads the raw frames of the agent, in any session.
var framingPass = pass{
	name:   "framing",
	scope:  anyScope,
	checks: []*Check{framingNonJSON, framingBOM, framingInvalidUTF8, framingOversize, framingUnterminated, framingEmptyLine, framingBatch},
	cost:   perFrame,
	run:    runFraming,
}

func runFraming(in *inputs, out *findings) {
	for _, f := range in.scan(out) {
		if f.Dir != jsonrpc.DirAgent {
			continue
		}
		if f.Unterminated {
			out.add(framingUnterminated, f.Seq, "", "the agent's output ended in the middle of a line", firstBytes(f.Raw))
		}
		switch {
		case f.Oversize:
			out.add(framingOversize, f.Seq, "", fmt.Sprintf("a %d-byte line exceeded the maximum line size and was skipped", f.Size), firstBytes(f.Raw))
			continue
		case f.Size == 0:
			out.add(framingEmptyLine, f.Seq, "", "an empty line; each line must carry one JSON-RPC message", nil)
			continue
		}
		if jsonrpc.HasBOM(f.Raw) {
			out.add(framingBOM, f.Seq, "", "the line starts with a byte order mark (EF BB BF), which JSON text must not", firstBytes(f.Raw))
		}
		if !utf8.Valid(f.Raw) {
			out.add(framingInvalidUTF8, f.Seq, "", "the line is not valid UTF-8; ACP messages are UTF-8 JSON", firstBytes(f.Raw))
		}
		if f.Msg != nil || jsonrpc.HasBOM(f.Raw) {
			continue
		}
		if errors.Is(f.DecodeErr, jsonrpc.ErrNotObject) && bytes.HasPrefix(bytes.TrimLeft(f.Raw, " \t"), []byte("[")) {
			out.add(framingBatch, f.Seq, "", "a JSON array (batch) on one line; ACP v1 defines one message per line", firstBytes(f.Raw))
			continue
		}
		out.add(framingNonJSON, f.Seq, "", "the agent must not write anything but ACP messages on stdout (logs belong on stderr)", firstBytes(f.Raw))
	}
}
