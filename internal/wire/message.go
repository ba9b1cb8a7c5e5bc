// Package wire is JSON-RPC 2.0 on every torii transport (the /acp link, the
// control socket, the agents' stdio): the message shapes, the typed error,
// and the one Peer that correlates, budgets and answers bad frames.
package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Version is the only "jsonrpc" value accepted.
const Version = "2.0"

// Message is any JSON-RPC 2.0 message. Which of Method, Result and Error is
// set tells its kind; ID is kept raw so the reply echoes it byte for byte.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// HasID reports whether the message carries a non-null id.
func (m *Message) HasID() bool {
	return len(m.ID) > 0 && !bytes.Equal(m.ID, []byte("null"))
}

// IsRequest: a method and an id, so a reply is owed.
func (m *Message) IsRequest() bool { return m.Method != "" && m.HasID() }

// IsNotification: a method and no id, so no reply may be sent.
func (m *Message) IsNotification() bool { return m.Method != "" && !m.HasID() }

// IsResponse: no method, a result or an error.
func (m *Message) IsResponse() bool { return m.Method == "" && (m.Result != nil || m.Error != nil) }

// NullID is the id used when the request's own id cannot be read.
var NullID = json.RawMessage("null")

// IntID renders an integer id.
func IntID(n int64) json.RawMessage { return json.RawMessage(strconv.FormatInt(n, 10)) }

// NewRequest builds a request (id set) or a notification (id nil).
func NewRequest(id json.RawMessage, method string, params any) (*Message, error) {
	m := &Message{JSONRPC: Version, ID: id, Method: method}
	if params != nil {
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		m.Params = raw
	}
	return m, nil
}

// NewResult builds a success response. A nil result is sent as {} because
// JSON-RPC requires the member and ACP peers expect an object.
func NewResult(id json.RawMessage, result any) (*Message, error) {
	raw := json.RawMessage("{}")
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	return &Message{JSONRPC: Version, ID: orNull(id), Result: raw}, nil
}

// NewErrorResponse builds an error response; a missing id becomes null.
func NewErrorResponse(id json.RawMessage, e *Error) *Message {
	return &Message{JSONRPC: Version, ID: orNull(id), Error: e}
}

func orNull(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return NullID
	}
	return id
}

// MarshalJSON keeps "id":null on error responses (omitempty would drop it)
// and never emits "id" on notifications.
func (m Message) MarshalJSON() ([]byte, error) {
	type wire struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id,omitempty"`
		Method  string          `json:"method,omitempty"`
		Params  json.RawMessage `json:"params,omitempty"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *Error          `json:"error,omitempty"`
	}
	w := wire(m)
	if w.JSONRPC == "" {
		w.JSONRPC = Version
	}
	if m.Method == "" && len(w.ID) == 0 {
		w.ID = NullID
	}
	return json.Marshal(w)
}

// RawID renders a string id.
func RawID(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// DecodeResult is a response's outcome: its error when it carries one, else
// its result decoded into result (which may be nil to discard it).
func (m *Message) DecodeResult(result any) error {
	if m.Error != nil {
		return m.Error
	}
	if result != nil {
		return json.Unmarshal(m.Result, result)
	}
	return nil
}
