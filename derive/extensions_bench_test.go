package derive

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/extensions"
	"github.com/acpprobe/acpprobe/internal/recordtest"
	"github.com/acpprobe/acpprobe/record"
	"github.com/acpprobe/acpprobe/report"
)

// largeRecord is a session shaped like claude-agent-acp 0.101.0's turn run (research capture
// B/claude.default.ndjson: 8,500 ACP frames, 5 MB): tool calls with diffs and their updates
// (with claudeCode tool responses in _meta), usage updates, message chunks, permission
// requests, command lists. scale 1 is that run's mix.
func largeRecord(tb testing.TB, scale int) string {
	tb.Helper()
	const sid = `"sessionId":"73d61d77-c1c9-42f3-aa6f-ae0102f65530"`
	var b strings.Builder
	b.WriteString(`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}` + "\n")
	b.WriteString(`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"_meta":{"claudeCode":{"promptQueueing":true},"authStatus":{}},"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"loadSession":true},"agentInfo":{"name":"@agentclientprotocol/claude-agent-acp","version":"0.101.0"},"authMethods":[],"_meta":{"steering":{"supported":true}}}}` + "\n")
	var cmds []string
	for i := range 50 {
		cmds = append(cmds, fmt.Sprintf(`{"name":"cmd-%d","description":"A command of the agent, described at some length so that the list weighs what a real one weighs.","input":{"hint":"[args]"},"_meta":{"source":"skill"}}`, i))
	}
	id := 2
	for range scale {
		for i := range 10 {
			fmt.Fprintf(&b, `< {"jsonrpc":"2.0","method":"session/update","params":{%s,"update":{"sessionUpdate":"available_commands_update","availableCommands":[%s]}}}`+"\n", sid, strings.Join(cmds[:20+3*i], ","))
		}
		for i := range 300 {
			fmt.Fprintf(&b, `< {"jsonrpc":"2.0","method":"session/update","params":{%s,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"ACPPROBE-PONG: the loopback model answered (%d)."},"messageId":"msg_emu_%d"}}}`+"\n", sid, i, i)
		}
		for i := range 3100 {
			path := fmt.Sprintf("/tmp/acpr/workspace/acpprobe-permission-%d.txt", i)
			fmt.Fprintf(&b, `< {"jsonrpc":"2.0","method":"session/update","params":{%s,"update":{"_meta":{"claudeCode":{"toolName":"Write"}},"toolCallId":"call_emu_%d","sessionUpdate":"tool_call","name":"Write","rawInput":{"file_path":%q,"content":"written by acpprobe\n"},"status":"pending","title":"Write","kind":"edit","content":[{"type":"diff","path":%q,"oldText":null,"newText":"written by acpprobe\n"}],"locations":[{"path":%q}]}}}`+"\n", sid, i, path, path, path)
			fmt.Fprintf(&b, `< {"jsonrpc":"2.0","method":"session/update","params":{%s,"update":{"_meta":{"claudeCode":{"toolResponse":{"type":"create","filePath":%q,"content":"written by acpprobe\n","structuredPatch":[],"originalFile":null,"userModified":false},"toolName":"Write"}},"toolCallId":"call_emu_%d","sessionUpdate":"tool_call_update","status":"completed","content":[{"type":"diff","path":%q,"oldText":null,"newText":"written by acpprobe\n"}]}}}`+"\n", sid, path, i, path)
			if i%3 == 0 {
				fmt.Fprintf(&b, `< {"jsonrpc":"2.0","method":"session/update","params":{%s,"update":{"sessionUpdate":"usage_update","used":%d,"size":1000000,"_meta":{"_claude/model":"claude-opus-5-5"}}}}`+"\n", sid, 12000+i)
			}
			if i%100 == 0 {
				fmt.Fprintf(&b, `< {"jsonrpc":"2.0","id":%d,"method":"session/request_permission","params":{%s,"toolCall":{"toolCallId":"call_emu_%d","title":"Write","kind":"edit","content":[{"type":"diff","path":%q,"oldText":null,"newText":"x"}]},"options":[{"optionId":"allow-once","name":"Yes","kind":"allow_once"},{"optionId":"reject","name":"No","kind":"reject_once"}]}}`+"\n", 1000+i, sid, i, path)
				fmt.Fprintf(&b, `> {"jsonrpc":"2.0","id":%d,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}`+"\n", 1000+i)
				fmt.Fprintf(&b, `> {"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{%s,"prompt":[{"type":"text","text":"write the file"}]}}`+"\n", id, sid)
				fmt.Fprintf(&b, `< {"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn","_meta":{"quota":{"token_count":{"inputTokens":10,"outputTokens":5}}}}}`+"\n", id)
				id++
			}
		}
	}
	return b.String()
}

// BenchmarkInventory takes the extension inventory of a large record (the cost every probe,
// check and turn pays once per record), with the place-aware schema typing.
func BenchmarkInventory(b *testing.B) {
	frames := recordtest.Frames(b, largeRecord(b, 1))
	x := record.New(frames)
	sets, err := loadSchemas("", &report.Result{})
	if err != nil {
		b.Fatal(err)
	}
	cat := extensions.Default()
	size := 0
	for _, f := range frames {
		size += len(f.Raw)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		ext := takeExtensions(context.Background(), []Part{{X: x, Frames: frames}}, cat, sets.Places())
		if len(ext.Inventory.UnknownVariants) != 0 {
			b.Fatalf("variants in a record that has none: %+v", ext.Inventory.UnknownVariants)
		}
	}
}
