package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"
)

// Version is the only JSON-RPC version string ACP speaks.
const Version = "2.0"

// Standard JSON-RPC and ACP error codes.
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	CodeAuthRequired     = -32000 // ACP: authentication required
	CodeResourceNotFound = -32002 // ACP: resource (e.g. session) not found
)

// Kind classifies a decoded message.
type Kind int

// Message kinds. Invalid covers any object that is neither a request, a notification nor a
// response (for example a message with neither method nor id).
const (
	Invalid Kind = iota
	Request
	Notification
	Response
)

func (k Kind) String() string {
	switch k {
	case Request:
		return "request"
	case Notification:
		return "notification"
	case Response:
		return "response"
	}
	return "invalid"
}

// Message is a decoded JSON-RPC envelope. Payloads stay raw. A key that is present with the
// value null is kept as the raw bytes "null", so presence and absence stay distinguishable.
type Message struct {
	JSONRPC json.RawMessage // the raw "jsonrpc" value; nil when absent
	ID      json.RawMessage // nil when absent (a notification); "null" when present as null
	Method  string
	Params  json.RawMessage
	Result  json.RawMessage // nil when absent
	Error   json.RawMessage // nil when absent; decode with Err
	// HasMethod is true when a "method" key was present (even if not a string).
	HasMethod bool
}

// envelope is the wire shape used for encoding.
type envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  json.RawMessage `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// ErrNotObject is returned by Decode for valid JSON that is not an object (a batch array, a
// string, a number…).
var ErrNotObject = errors.New("not a JSON object")

// jsonSpace is the whitespace JSON allows around a value (RFC 8259 §2).
const jsonSpace = " \t\r\n"

// Decode parses one line into a Message without judging it: it fails only when raw is not a
// JSON object. Keys match exactly ("ID" is not "id", unlike encoding/json's default); for a
// duplicated key the last one wins. Use Kind to classify the result and the conformance checks
// to judge it.
func Decode(raw []byte) (*Message, error) {
	m, _, err := decode(raw, false)
	return m, err
}

// decode is Decode; with owned, the message's values may alias raw (the caller keeps raw
// unchanged for as long as the message lives, as a Log does with its frames), and copied says
// how many bytes of values the message holds besides raw (the general path copies them).
func decode(raw []byte, owned bool) (m *Message, copied int, err error) {
	trimmed := bytes.Trim(raw, jsonSpace)
	if len(trimmed) == 0 {
		return nil, 0, errors.New("empty line")
	}
	if trimmed[0] != '{' {
		if json.Valid(trimmed) {
			return nil, 0, ErrNotObject
		}
		return nil, 0, fmt.Errorf("not JSON: %w", syntaxError(trimmed))
	}
	if !json.Valid(trimmed) {
		return nil, 0, fmt.Errorf("not JSON: %w", syntaxError(trimmed))
	}
	if !owned {
		trimmed = append([]byte(nil), trimmed...) // the values alias one private copy
	}
	if m, ok := decodeTop(trimmed); ok {
		return m, 0, nil
	}
	m, err = decodeMap(trimmed)
	if err != nil {
		return nil, 0, err
	}
	return m, len(m.JSONRPC) + len(m.ID) + len(m.Params) + len(m.Result) + len(m.Error), nil
}

// decodeMap is the general decoding of a valid JSON object (keys with escapes included): the
// reference that the fast path decodeTop must agree with.
func decodeMap(trimmed []byte) (*Message, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return nil, fmt.Errorf("not JSON: %w", syntaxError(trimmed))
	}
	m := &Message{JSONRPC: fields["jsonrpc"], ID: fields["id"], Params: fields["params"], Result: fields["result"], Error: fields["error"]}
	if method, ok := fields["method"]; ok {
		m.HasMethod = true
		_ = json.Unmarshal(method, &m.Method) // a non-string method stays "" and is Invalid
	}
	return m, nil
}

func syntaxError(b []byte) error {
	var v any
	err := json.Unmarshal(b, &v)
	if err == nil {
		return errors.New("invalid JSON")
	}
	return err
}

// Kind classifies the message: a method and an id make a request, a method alone a
// notification, an id with a result or an error a response.
func (m *Message) Kind() Kind {
	switch {
	case m.HasMethod && m.Method != "" && m.ID != nil:
		return Request
	case m.HasMethod && m.Method != "" && m.ID == nil:
		return Notification
	case !m.HasMethod && m.ID != nil && (m.Result != nil || m.Error != nil):
		return Response
	}
	return Invalid
}

// VersionOK reports whether the envelope carries "jsonrpc":"2.0".
func (m *Message) VersionOK() bool {
	var v string
	return m.JSONRPC != nil && json.Unmarshal(m.JSONRPC, &v) == nil && v == Version
}

// Err decodes the error object leniently; nil when the message has no (or a null) error.
func (m *Message) Err() *Error {
	if m.Error == nil || string(m.Error) == "null" {
		return nil
	}
	e := &Error{Raw: m.Error}
	var wire struct {
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(m.Error, &wire) != nil {
		e.Message = string(m.Error)
		return e
	}
	var f float64
	if json.Unmarshal(wire.Code, &f) == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		e.Code = int(f)
	}
	_ = json.Unmarshal(wire.Message, &e.Message)
	e.Data = wire.Data
	return e
}

// Error is a JSON-RPC error object. Raw keeps the object as the agent sent it.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
	Raw     json.RawMessage `json:"-"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// IDKey returns the canonical form of a request id, used to match a response to its request:
// integers (also written as 1.0 or 1e0) compare by value, strings by their decoded text, and
// null is its own key. ok is false for ids that are neither (objects, arrays, booleans).
func IDKey(id json.RawMessage) (key string, ok bool) {
	t := bytes.TrimSpace(id)
	if len(t) == 0 {
		return "", false
	}
	switch t[0] {
	case '"':
		var s string
		if json.Unmarshal(t, &s) != nil {
			return "", false
		}
		return "s:" + s, true
	case 'n':
		if string(t) == "null" {
			return "null", true
		}
		return "", false
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if n, err := strconv.ParseInt(string(t), 10, 64); err == nil {
			return "n:" + strconv.FormatInt(n, 10), true
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil {
			return "", false
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return "n:" + strconv.FormatInt(int64(f), 10), true
		}
		return "n:" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

// EncodeRequest builds a request line (without newline).
func EncodeRequest(id int64, method string, params any) ([]byte, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelope{JSONRPC: versionRaw, ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: quote(method), Params: p})
}

// EncodeNotification builds a notification line (without newline).
func EncodeNotification(method string, params any) ([]byte, error) {
	p, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	return json.Marshal(envelope{JSONRPC: versionRaw, Method: quote(method), Params: p})
}

// EncodeResult builds a success response to the request with the given raw id.
func EncodeResult(id json.RawMessage, result any) ([]byte, error) {
	r, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
	}{versionRaw, id, r})
}

// EncodeError builds an error response to the request with the given raw id.
func EncodeError(id json.RawMessage, e *Error) ([]byte, error) {
	if id == nil {
		id = json.RawMessage("null")
	}
	return json.Marshal(struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
	}{versionRaw, id, e})
}

var versionRaw = json.RawMessage(`"2.0"`)

func quote(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(params)
}

// decodeTop slices the members of a valid JSON object without decoding their values (last
// duplicate wins, as with a map). It declines (false) when a key holds an escape, which the
// general path decodes. The values alias b.
func decodeTop(b []byte) (*Message, bool) {
	m := &Message{}
	i := skipSpace(b, 1)
	if b[i] == '}' {
		return m, true
	}
	for {
		end := skipString(b, i)
		key := b[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			return nil, false
		}
		i = skipSpace(b, end)
		i = skipSpace(b, i+1) // after the colon
		vEnd := skipValue(b, i)
		val := json.RawMessage(b[i:vEnd])
		switch string(key) {
		case "jsonrpc":
			m.JSONRPC = val
		case "id":
			m.ID = val
		case "params":
			m.Params = val
		case "result":
			m.Result = val
		case "error":
			m.Error = val
		case "method":
			m.HasMethod = true
			m.Method = ""
			if val[0] == '"' && bytes.IndexByte(val, '\\') < 0 && utf8.Valid(val) {
				m.Method = string(val[1 : len(val)-1])
			} else {
				_ = json.Unmarshal(val, &m.Method) // a non-string method stays ""
			}
		}
		i = skipSpace(b, vEnd)
		if b[i] != ',' {
			return m, true
		}
		i = skipSpace(b, i+1)
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; ; i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
}

// skipValue returns the index after the valid JSON value that starts at b[i].
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; ; i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\r' && b[i] != '\n' {
		i++
	}
	return i
}
