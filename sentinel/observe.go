package sentinel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/acpprobe/acpprobe/record"
)

// Bounds on what a sentinel reads and keeps. An MCP client talking to a sentinel sends a
// handful of small messages; anything near these limits is misbehaviour, recorded as such.
const (
	// maxMessage bounds one message: a stdio line or an HTTP body.
	maxMessage = 1 << 20
	// maxStdinTotal bounds everything a stdio sentinel reads; past it the sentinel ends.
	maxStdinTotal = 64 << 20
	// maxBatch bounds the messages of one JSON-RPC batch that become events.
	maxBatch = 64
	// maxText bounds each string kept in an Event (method, tool, client info, path, error).
	maxText = 256
	// maxID bounds a JSON-RPC id kept in an Event.
	maxID = 128
	// maxArguments bounds the tool-call arguments kept in an Event.
	maxArguments = 16 << 10
)

// errLineTooLong is readLine's report of a line over its limit (already skipped).
var errLineTooLong = errors.New("line too long")

// readLine reads one newline-terminated line of at most max bytes (without the newline) from
// br. A longer line is read to its end and discarded: readLine then returns errLineTooLong
// with the line's full size. A last line without newline is returned with a nil error; after
// it, io.EOF.
func readLine(br *bufio.Reader, max int) (line []byte, size int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		size += len(chunk)
		if size <= max+1 { // +1: the newline itself
			line = append(line, chunk...)
		} else {
			line = nil
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && size == 0:
			return nil, 0, err
		case err != nil && !errors.Is(err, io.EOF):
			return nil, size, err
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if size > max+1 || (err != nil && size > max) {
			return nil, size, errLineTooLong
		}
		return line, size, nil
	}
}

// observe turns one message (a stdio line or an HTTP body: a JSON-RPC message or a batch)
// into events, and says whether every part of it is a well-formed JSON-RPC message, that is
// whether it may be handed to the MCP SDK (which ends the session on anything else).
func observe(raw []byte) (events []record.MCPEvent, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(raw, &batch); err != nil {
			return []record.MCPEvent{invalid(len(raw), "not JSON: "+err.Error())}, false
		}
		if len(batch) == 0 {
			return []record.MCPEvent{invalid(len(raw), "empty batch")}, false
		}
		ok = true
		for i, m := range batch {
			if i == maxBatch {
				events = append(events, invalid(len(raw), fmt.Sprintf("batch of %d messages: only the first %d recorded", len(batch), maxBatch)))
				break
			}
			ev := observeOne(m)
			ok = ok && ev.Kind != record.MCPInvalid
			events = append(events, ev)
		}
		return events, ok
	}
	ev := observeOne(raw)
	return []record.MCPEvent{ev}, ev.Kind != record.MCPInvalid
}

// observeOne describes one JSON-RPC message.
func observeOne(raw []byte) record.MCPEvent {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  *string         `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return invalid(len(raw), "not a JSON-RPC message: "+err.Error())
	}
	ev := record.MCPEvent{Kind: record.MCPMessage}
	if len(m.ID) <= maxID {
		ev.ID = m.ID
	}
	switch {
	case m.Method != nil:
		ev.Method = clip(*m.Method)
	case m.Result != nil || m.Error != nil:
		ev.Kind = record.MCPResponse
	default:
		ev.Kind, ev.Size, ev.Error = record.MCPInvalid, len(raw), "neither method nor result nor error"
		return ev
	}
	if m.JSONRPC != "2.0" {
		ev.Kind, ev.Size, ev.Error = record.MCPInvalid, len(raw), clip(fmt.Sprintf("jsonrpc is %q, not \"2.0\"", m.JSONRPC))
		return ev
	}
	// The client's version and self-description: in initialize's params (MCP up to
	// 2025-11-25), or in the _meta of every request (the sessionless MCP 2026-07-28,
	// which starts with server/discover instead of initialize).
	var p struct {
		ProtocolVersion string            `json:"protocolVersion"`
		ClientInfo      *record.MCPClient `json:"clientInfo"`
		Meta            struct {
			ProtocolVersion string            `json:"io.modelcontextprotocol/protocolVersion"`
			ClientInfo      *record.MCPClient `json:"io.modelcontextprotocol/clientInfo"`
		} `json:"_meta"`
	}
	if json.Unmarshal(m.Params, &p) == nil {
		if ev.Method != "initialize" {
			p.ProtocolVersion, p.ClientInfo = p.Meta.ProtocolVersion, p.Meta.ClientInfo
		}
		ev.ProtocolVersion = clip(p.ProtocolVersion)
		if ci := p.ClientInfo; ci != nil {
			ev.ClientInfo = &record.MCPClient{Name: clip(ci.Name), Title: clip(ci.Title), Version: clip(ci.Version)}
		}
	}
	switch ev.Method {
	case "tools/call":
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			ev.Tool = clip(p.Name)
			if len(p.Arguments) <= maxArguments {
				ev.Arguments = p.Arguments
			} else {
				ev.ArgumentsSize = len(p.Arguments)
			}
		}
	}
	return ev
}

func invalid(size int, why string) record.MCPEvent {
	return record.MCPEvent{Kind: record.MCPInvalid, Size: size, Error: clip(why)}
}

// clip bounds s to maxText bytes of valid UTF-8.
func clip(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) > maxText {
		s = strings.ToValidUTF8(s[:maxText], "") // drops a rune cut in two
	}
	return s
}
