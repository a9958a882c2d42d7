package acptest

import (
	"encoding/json"
	"strconv"

	"github.com/acpprobe/acpprobe/acp"
	"github.com/acpprobe/acpprobe/jsonrpc"
)

// The agent's own requests to the client: the ones a fault sends before session/new, and
// the permission requests of a model turn, which waits for the answer.

// askClient sends the configured agent→client requests. Their answers are not awaited: the
// client's log shows what it answered.
func (a *agent) askClient(cwd string) error {
	const sid = "pending-session"
	for _, method := range a.cfg.ClientRequests {
		var params any
		switch method {
		case acp.MethodReadTextFile:
			params = map[string]any{"sessionId": sid, "path": "/etc/hostname"}
		case acp.MethodWriteTextFile:
			params = map[string]any{"sessionId": sid, "path": cwd + "/acptest-must-not-exist.txt", "content": "written by acptest"}
		case acp.MethodTerminalCreate:
			params = map[string]any{"sessionId": sid, "command": "touch", "args": []string{cwd + "/acptest-must-not-exist.txt"}}
		case acp.MethodRequestPermission:
			params = map[string]any{"sessionId": sid,
				"toolCall": map[string]any{"toolCallId": "call-1", "title": "Write acptest-must-not-exist.txt", "kind": "edit"},
				"options":  []map[string]string{{"optionId": "allow", "name": "Allow", "kind": "allow_once"}, {"optionId": "reject", "name": "Reject", "kind": "reject_once"}}}
		case acp.MethodElicitationCreate:
			params = map[string]any{"sessionId": sid, "mode": "form", "message": "Your name?",
				"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]string{"type": "string"}}}}
		default:
			params = map[string]any{}
		}
		if _, _, err := a.request(method, params); err != nil {
			return err
		}
	}
	return nil
}

// request sends the client a request and returns the channel its answer will come on
// (buffered: an answer nobody waits for is dropped with it), and the key to forget it by.
func (a *agent) request(method string, params any) (string, <-chan *jsonrpc.Message, error) {
	a.callMu.Lock()
	a.nextRequest++
	id := int64(a.nextRequest)
	ch := make(chan *jsonrpc.Message, 1)
	key, _ := jsonrpc.IDKey(json.RawMessage(strconv.FormatInt(id, 10)))
	a.calls[key] = ch
	a.callMu.Unlock()
	line, err := jsonrpc.EncodeRequest(id, method, params)
	if err == nil {
		err = a.write(line)
	}
	if err != nil {
		a.forget(key)
		return "", nil, err
	}
	return key, ch, nil
}

// forget stops waiting for the answer to a request.
func (a *agent) forget(key string) {
	a.callMu.Lock()
	delete(a.calls, key)
	a.callMu.Unlock()
}

// deliver hands the client's answer to the request it answers; answers to unknown ids, and
// second answers, are dropped.
func (a *agent) deliver(msg *jsonrpc.Message) {
	key, ok := jsonrpc.IDKey(msg.ID)
	if !ok {
		return
	}
	a.callMu.Lock()
	ch := a.calls[key]
	delete(a.calls, key)
	a.callMu.Unlock()
	if ch != nil {
		ch <- msg
	}
}
