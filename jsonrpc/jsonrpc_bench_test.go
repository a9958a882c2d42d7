package jsonrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchStream is a realistic agent output: the handshake answers, then a prompt turn of
// session/update notifications (mostly message chunks, with tool calls, diffs and plans, as
// the real agents send them), about 1 MiB in all.
var benchStream, benchLines = func() ([]byte, [][]byte) {
	var b bytes.Buffer
	add := func(s string) { b.WriteString(s); b.WriteByte('\n') }
	add(`{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{"_meta":{"claudeCode":{"promptQueueing":true}},"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"loadSession":true,"sessionCapabilities":{"fork":{},"list":{},"resume":{},"close":{}}},"agentInfo":{"name":"acptest-claude","title":"acpprobe reference agent (claude persona)","version":"0.1.0"},"authMethods":[],"protocolVersion":1}}`)
	add(`{"jsonrpc":"2.0","id":2,"result":{"configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default","options":[{"value":"default","name":"Default"},{"value":"acceptEdits","name":"Accept Edits"},{"value":"plan","name":"Plan Mode"}]}],"modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default","description":"Standard behavior, prompts for dangerous operations"},{"id":"plan","name":"Plan Mode","description":"Planning mode, no actual tool execution"}]},"sessionId":"claude-session-1"}}`)
	diff := strings.Repeat(`    return fmt.Errorf(\"open %s: %w\", path, err)\n`, 20)
	for i := 0; b.Len() < 1<<20; i++ {
		switch i % 20 {
		case 5:
			add(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"claude-session-1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_%06d","title":"Read main.go","kind":"read","status":"pending","locations":[{"path":"/work/repo/cmd/main.go","line":42}],"rawInput":{"file_path":"/work/repo/cmd/main.go","offset":40,"limit":200}}}}`, i))
		case 6:
			add(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"claude-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_%06d","status":"completed","content":[{"type":"diff","path":"/work/repo/cmd/main.go","oldText":"%s","newText":"%s"}]}}}`, i-1, diff, diff))
		case 12:
			add(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"claude-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Read the code","priority":"high","status":"completed"},{"content":"Fix the error path","priority":"high","status":"in_progress"},{"content":"Run the tests","priority":"medium","status":"pending"}]}}}`)
		default:
			add(fmt.Sprintf(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"claude-session-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of the answer: the function returns early when the file is missing, so the caller never sees "}}}}`, i))
		}
	}
	lines := bytes.SplitAfter(b.Bytes(), []byte("\n"))
	lines = lines[:len(lines)-1] // the empty tail after the last newline
	for i := range lines {
		lines[i] = bytes.TrimSuffix(lines[i], []byte("\n"))
	}
	return b.Bytes(), lines
}()

func reportLines(b *testing.B, perOp int) {
	b.ReportMetric(float64(perOp)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkLineReader is the framing throughput: LineReader over the stream (MB/s).
func BenchmarkLineReader(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		lr := NewLineReader(bytes.NewReader(benchStream), 0)
		for {
			if _, err := lr.Next(); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
	}
	reportLines(b, len(benchLines))
}

// BenchmarkLineReaderBaseline is the same split by bufio.Scanner (which copies nothing and
// keeps no oversize state): the floor LineReader is compared with.
func BenchmarkLineReaderBaseline(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		sc := bufio.NewScanner(bytes.NewReader(benchStream))
		sc.Buffer(make([]byte, 64<<10), DefaultMaxLineSize)
		for sc.Scan() {
		}
	}
	reportLines(b, len(benchLines))
}

// BenchmarkDecode is the decoding throughput: Decode of every line of the stream.
func BenchmarkDecode(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range benchLines {
			if _, err := Decode(l); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportLines(b, len(benchLines))
}

// BenchmarkDecodeBaseline decodes the same lines into a struct of raw fields with
// encoding/json: the floor Decode (raw-first, exact keys) is compared with.
func BenchmarkDecodeBaseline(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range benchLines {
			var m struct {
				JSONRPC, ID, Method, Params, Result, Error json.RawMessage
			}
			if err := json.Unmarshal(l, &m); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportLines(b, len(benchLines))
}

// BenchmarkLogAppend is the whole raw-first path of a received line: read, stamp, decode,
// store (what the probe and the tap do for every line).
func BenchmarkLogAppend(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		log := NewLog()
		lr := NewLineReader(bytes.NewReader(benchStream), 0)
		for {
			l, err := lr.Next()
			if err != nil {
				break
			}
			log.Append(Frame{Dir: DirAgent, Raw: l.Raw, Size: l.Size, Oversize: l.Oversize, Unterminated: l.Unterminated})
		}
	}
	reportLines(b, len(benchLines))
}
