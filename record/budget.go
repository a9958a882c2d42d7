package record

import (
	"strings"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// DefaultBudget is how many bytes of a session a record keeps whole in memory (the agent's
// lines, acpprobe's own, stderr): 64 MiB. Past it, the agent's notifications and requests,
// the answers to them and stderr are counted and their sizes kept, but their content is
// dropped (see jsonrpc.Budget); what the report needs (acpprobe's requests, the agent's
// answers to them, events) is kept up to twice the budget.
const DefaultBudget = 64 << 20

// Budget is the memory budget of a session record: bytes bounds what is kept whole (0:
// DefaultBudget). Folded frames are counted under labels that FoldedCount reads back.
func Budget(bytes int64) jsonrpc.Budget {
	if bytes <= 0 {
		bytes = DefaultBudget
	}
	return jsonrpc.Budget{Bytes: bytes, Keep: essential, Label: label}
}

// essential frames are what a report cannot do without.
func essential(f jsonrpc.Frame) bool {
	switch f.Dir {
	case jsonrpc.DirEvent:
		return true
	case jsonrpc.DirClient:
		return f.Msg != nil && f.Msg.Kind() != jsonrpc.Response
	case jsonrpc.DirAgent:
		return f.Msg != nil && f.Msg.Kind() == jsonrpc.Response
	}
	return false
}

// Labels of folded frames.
const (
	labelNotification = "notification"
	labelRequest      = "request"
	labelResponse     = "response"
	labelInvalid      = "invalid"
	labelClient       = "client"
	labelStderr       = "stderr"
)

func label(f jsonrpc.Frame) string {
	switch {
	case f.Dir == jsonrpc.DirStderr:
		return labelStderr
	case f.Dir == jsonrpc.DirClient:
		return labelClient
	case f.Msg == nil:
		return labelInvalid
	}
	switch f.Msg.Kind() {
	case jsonrpc.Notification:
		if f.Msg.Method == acp.MethodSessionUpdate {
			kind := acp.ParseObject(f.Msg.Params).Object("update").String("sessionUpdate")
			if kind == "" {
				kind = "(none)"
			}
			return labelNotification + " " + f.Msg.Method + " " + kind
		}
		return labelNotification + " " + f.Msg.Method
	case jsonrpc.Request:
		return labelRequest + " " + f.Msg.Method
	case jsonrpc.Response:
		return labelResponse
	}
	return labelInvalid
}

// FoldedCount is one label of a folded run, read back: what the agent sent.
type FoldedCount struct {
	// Notification and Request are set for the agent's notifications and requests (Method,
	// and for session/update the SessionUpdate kind).
	Notification, Request bool
	Method, SessionUpdate string
	N                     int64
}

// FoldedCounts reads the labels of a folded run back (labels from another budget, and
// jsonrpc.FoldedOther, read as neither notification nor request).
func FoldedCounts(f *jsonrpc.Folded) []FoldedCount {
	var out []FoldedCount
	for label, n := range f.Counts {
		c := FoldedCount{N: n}
		kind, rest, _ := strings.Cut(label, " ")
		switch kind {
		case labelNotification:
			c.Notification = true
			c.Method, c.SessionUpdate, _ = strings.Cut(rest, " ")
		case labelRequest:
			c.Request = true
			c.Method = rest
		}
		out = append(out, c)
	}
	return out
}
