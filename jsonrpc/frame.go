// Package jsonrpc is acpprobe's raw-first JSON-RPC 2.0 layer for newline-delimited JSON
// (the ACP stdio transport).
//
// Every line that crosses the wire is kept as bytes, with its direction and a monotonic
// timestamp, before anything tries to decode it (see Log and Frame). Decoding is lenient
// (Decode): a line that is not JSON, not an object, or not a valid envelope is still a Frame,
// so that the conformance checks can report it; nothing is silently dropped and no byte
// sequence makes the package panic. Conn matches responses to requests by a canonical form of
// the id, so out-of-order answers and `"id"` as the last key both work.
package jsonrpc

import (
	"time"
)

// Dir says who wrote a frame.
type Dir string

// Frame directions. The names match the transcript vocabulary ("client", "agent", "stderr",
// "event").
const (
	DirClient Dir = "client" // written by the client on the agent's stdin
	DirAgent  Dir = "agent"  // written by the agent on its stdout
	DirStderr Dir = "stderr" // a chunk of the agent's stderr
	DirEvent  Dir = "event"  // something that happened to the process (spawn, exit, teardown step)
	// DirFolded stands for a run of frames a Log kept over its budget only as counts (see
	// Budget and Frame.Folded). It exists only in memory: observers, such as a transcript,
	// saw each of those frames whole.
	DirFolded Dir = "folded"
)

// DefaultMaxLineSize is the largest line kept whole (64 MiB). Longer lines are recorded as
// oversize with a prefix only, then skipped.
const DefaultMaxLineSize = 64 << 20

// OversizePrefix is how many bytes of an oversize line are kept.
const OversizePrefix = 4 << 10

// Frame is one line as it crossed the wire, or one event of the agent process.
type Frame struct {
	Seq int64         // 1-based position in the Log
	Dir Dir           // who wrote it
	At  time.Duration // time since the Log started (monotonic clock)
	// Raw is the line exactly as written, without its trailing newline. For an oversize line
	// it holds the first OversizePrefix bytes only.
	Raw          []byte
	Size         int64  // length of the whole line in bytes (without the newline)
	Oversize     bool   // the line was longer than the reader's maximum and was skipped
	Unterminated bool   // the stream ended before a newline closed this line
	Kind         string // for DirEvent: spawn, exit, timeout, teardown, …

	// Msg is the decoded message for client and agent lines that parsed as a JSON-RPC
	// envelope; nil otherwise (see DecodeErr).
	Msg *Message
	// DecodeErr says why Raw could not be decoded; nil when Msg is set or for stderr/events.
	DecodeErr error
	// Folded summarises the frames Seq … Folded.LastSeq that the log did not keep (Dir is
	// DirFolded).
	Folded *Folded
}
