// Package recordtest writes records for tests in a text notation, one frame per line:
//
//	> LINE            the client wrote LINE
//	< LINE            the agent wrote LINE
//	<q "GO STRING"    the agent wrote these bytes (strconv.Unquote)
//	<u LINE           the agent wrote LINE and its output ended without a newline
//	<o SIZE PREFIX    the agent wrote an oversize line of SIZE bytes
//	2 TEXT            the agent wrote TEXT on stderr
//	2* N TEXT         … N times
//	! KIND [JSON]     an engine event (a spawn event is added when the section has none)
//
// The conformance scenarios (conformance/testdata/scenarios) and the derivation's tests are
// written in it. Only tests import it.
package recordtest

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/acpprobe/acpprobe/jsonrpc"
	"github.com/acpprobe/acpprobe/record"
)

// DefaultSpawn is the spawn event of a section whose frames do not begin with one.
const DefaultSpawn = `{"command":"scenario","argv":["scenario"],"cwd":"/","protocolVersion":1,"requestTimeoutMs":1000,"startupTimeoutMs":1000}`

// Frames turns a section of the notation into a log's frames.
func Frames(t testing.TB, section string) []jsonrpc.Frame {
	t.Helper()
	log := jsonrpc.NewLog()
	Append(t, log, section, DefaultSpawn)
	return log.Frames()
}

// Append appends a section of the notation to log, after a spawn event with the payload spawn
// when the section does not begin with one.
func Append(t testing.TB, log *jsonrpc.Log, section, spawn string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(section, "\n"), "\n")
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "! spawn") {
		log.Event(string(record.Spawn.Kind), []byte(spawn))
	}
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		tag, rest, _ := strings.Cut(line, " ")
		switch tag {
		case ">":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirClient, Raw: []byte(rest)})
		case "<":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(rest)})
		case "<q":
			raw, err := strconv.Unquote(rest)
			if err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(raw)})
		case "<u":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(rest), Unterminated: true})
		case "<o":
			sizeText, prefix, _ := strings.Cut(rest, " ")
			size, _ := strconv.ParseInt(sizeText, 10, 64)
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirAgent, Raw: []byte(prefix), Size: size, Oversize: true})
		case "2":
			log.Append(jsonrpc.Frame{Dir: jsonrpc.DirStderr, Raw: []byte(rest + "\n")})
		case "2*":
			countText, text, _ := strings.Cut(rest, " ")
			count, _ := strconv.Atoi(countText)
			for range count {
				log.Append(jsonrpc.Frame{Dir: jsonrpc.DirStderr, Raw: []byte(text + "\n")})
			}
		case "!":
			kind, payload, _ := strings.Cut(rest, " ")
			if payload != "" && !json.Valid([]byte(payload)) {
				t.Fatalf("line %d: event payload is not JSON: %s", i+1, payload)
			}
			var raw []byte
			if payload != "" {
				raw = []byte(payload)
			}
			log.Event(kind, raw)
		default:
			t.Fatalf("line %d: unknown frame tag %q", i+1, tag)
		}
	}
}
