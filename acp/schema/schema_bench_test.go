package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/internal/schematable"
)

// benchMessage is one payload an agent sends, with the type it is validated as.
type benchMessage struct {
	def  string
	body json.RawMessage
}

// benchMessages are the payloads of a realistic session, weighted as agents send them: the
// handshake answers once, then a prompt turn of session/update notifications (mostly message
// chunks, with tool calls, diffs, plans and commands). All are valid v1.
var benchMessages, benchBytes = func() ([]benchMessage, int64) {
	diff := strings.Repeat(`    return fmt.Errorf(\"open %s: %w\", path, err)\n`, 20)
	msgs := []benchMessage{
		{"InitializeResponse", json.RawMessage(`{"agentCapabilities":{"_meta":{"claudeCode":{"promptQueueing":true}},"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true,"sse":true},"loadSession":true,"sessionCapabilities":{"list":{},"close":{}}},"agentInfo":{"name":"acptest-claude","title":"acpprobe reference agent (claude persona)","version":"0.1.0"},"authMethods":[{"id":"claude-login","name":"Log in with Claude"}],"protocolVersion":1}`)},
		{"NewSessionResponse", json.RawMessage(`{"configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"default","options":[{"value":"default","name":"Default"},{"value":"acceptEdits","name":"Accept Edits"},{"value":"plan","name":"Plan Mode"}]},{"id":"model","name":"Model","category":"model","type":"select","currentValue":"default","options":[{"value":"default","name":"Default (recommended)","description":"Use the default model"},{"value":"opus","name":"Opus","description":"Most capable for complex work"}]}],"modes":{"currentModeId":"default","availableModes":[{"id":"default","name":"Default","description":"Standard behavior, prompts for dangerous operations"},{"id":"plan","name":"Plan Mode","description":"Planning mode, no actual tool execution"}]},"sessionId":"claude-session-1"}`)},
		{"SessionNotification", json.RawMessage(`{"sessionId":"claude-session-1","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Clear conversation history but keep a summary in context"},{"name":"review","description":"Review a pull request","input":{"hint":"pull request number"}}]}}`)},
	}
	for i := range 40 {
		var s string
		switch i % 20 {
		case 5:
			s = fmt.Sprintf(`{"sessionId":"claude-session-1","update":{"sessionUpdate":"tool_call","toolCallId":"toolu_%06d","title":"Read main.go","kind":"read","status":"pending","locations":[{"path":"/work/repo/cmd/main.go","line":42}],"rawInput":{"file_path":"/work/repo/cmd/main.go","offset":40,"limit":200}}}`, i)
		case 6:
			s = fmt.Sprintf(`{"sessionId":"claude-session-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"toolu_%06d","status":"completed","content":[{"type":"diff","path":"/work/repo/cmd/main.go","oldText":"%s","newText":"%s"}]}}`, i-1, diff, diff)
		case 12:
			s = `{"sessionId":"claude-session-1","update":{"sessionUpdate":"plan","entries":[{"content":"Read the code","priority":"high","status":"completed"},{"content":"Fix the error path","priority":"high","status":"in_progress"},{"content":"Run the tests","priority":"medium","status":"pending"}]}}`
		default:
			s = fmt.Sprintf(`{"sessionId":"claude-session-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"chunk %d of the answer: the function returns early when the file is missing, so the caller never sees "}}}`, i)
		}
		msgs = append(msgs, benchMessage{"SessionNotification", json.RawMessage(s)})
	}
	var n int64
	for _, m := range msgs {
		n += int64(len(m.body))
	}
	return msgs, n
}()

func benchSet(b *testing.B) *Set {
	s, err := Load(V1)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range benchMessages { // compile every type first: the benchmarks are warm
		if v, err := s.Validate(m.def, m.body); err != nil || v != nil {
			b.Fatalf("%s: %v %v", m.def, v, err)
		}
		if k, err := s.UnknownKeys(m.def, m.body); err != nil || k != nil {
			b.Fatalf("%s: unknown keys %v %v", m.def, k, err)
		}
	}
	return s
}

// BenchmarkValidate is the validation throughput (MB/s of payload): the generated validator,
// and jsonschema/v6 (which validated at run time before the tables) on the same payloads,
// warm (every type compiled), in the same run.
func BenchmarkValidate(b *testing.B) {
	s := benchSet(b)
	b.Run("tables", func(b *testing.B) {
		b.SetBytes(benchBytes)
		b.ReportAllocs()
		for b.Loop() {
			for _, m := range benchMessages {
				if _, err := s.Validate(m.def, m.body); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(len(benchMessages))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
	b.Run("jsonschema-v6", func(b *testing.B) {
		o := oracleFor(b, s)
		for _, m := range benchMessages {
			o.Validate(b, "#/$defs/"+m.def, m.body)
		}
		b.SetBytes(benchBytes)
		b.ReportAllocs()
		for b.Loop() {
			for _, m := range benchMessages {
				o.Validate(b, "#/$defs/"+m.def, m.body)
			}
		}
		b.ReportMetric(float64(len(benchMessages))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}

// BenchmarkUnknownKeys is the throughput of the walk for keys outside the schema.
func BenchmarkUnknownKeys(b *testing.B) {
	s := benchSet(b)
	b.SetBytes(benchBytes)
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range benchMessages {
			if _, err := s.UnknownKeys(m.def, m.body); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(benchMessages))*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkParseBaseline parses the same payloads the way Validate does before validating
// (numbers kept exact): the floor of Validate.
func BenchmarkParseBaseline(b *testing.B) {
	b.SetBytes(benchBytes)
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range benchMessages {
			if _, err := schematable.Decode(m.body); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkColdStart is what one acpprobe process pays before its first verdict on the
// handshake answers: with the tables, finding the set and judging; with jsonschema/v6, parsing
// the pinned document, compiling the types and judging (what every probe paid before).
func BenchmarkColdStart(b *testing.B) {
	for _, name := range []string{V1, V1Unstable, V1Next} {
		s, err := Load(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/tables", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, _ := Load(name)
				for _, m := range benchMessages[:3] {
					if _, err := s.Validate(m.def, m.body); err != nil {
						b.Fatal(err)
					}
					if _, err := s.UnknownKeys(m.def, m.body); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(name+"/jsonschema-v6", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				oracles.Delete(name) // a fresh process has nothing compiled
				o := oracleFor(b, s)
				for _, m := range benchMessages[:3] {
					o.Validate(b, "#/$defs/"+m.def, m.body)
				}
			}
		})
	}
}
