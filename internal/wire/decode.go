package wire

import (
	"bytes"
	"encoding/json"
)

// Decode parses one frame. A frame that is not JSON gives -32700; JSON that
// is not a JSON-RPC 2.0 message gives -32600. In both cases the returned
// message (possibly nil) carries whatever id could be read, so the caller
// can still address its error reply.
func Decode(data []byte) (*Message, *Error) {
	if !json.Valid(data) {
		return nil, Errorf(CodeParseError, "parse error: frame is not valid JSON")
	}
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		// Batches are not part of the link contract (one message per frame).
		return nil, Errorf(CodeInvalidRequest, "invalid request: expected one JSON-RPC object")
	}
	var raw struct {
		JSONRPC *string         `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(trimmed, &raw); err != nil {
		return nil, Errorf(CodeInvalidRequest, "invalid request: %v", err)
	}
	m := &Message{ID: raw.ID, Params: raw.Params, Result: raw.Result}
	if !validID(raw.ID) {
		m.ID = nil
		return m, Errorf(CodeInvalidRequest, "invalid request: id must be a string, number or null")
	}
	if raw.JSONRPC == nil || *raw.JSONRPC != Version {
		return m, Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	m.JSONRPC = Version
	if len(raw.Method) > 0 {
		if err := json.Unmarshal(raw.Method, &m.Method); err != nil || m.Method == "" {
			return m, Errorf(CodeInvalidRequest, "invalid request: method must be a non-empty string")
		}
		if len(raw.Params) > 0 && raw.Params[0] != '{' && raw.Params[0] != '[' {
			return m, Errorf(CodeInvalidRequest, "invalid request: params must be an object or array")
		}
		return m, nil
	}
	// No method: it must be a response with exactly one of result/error.
	hasResult, hasError := len(raw.Result) > 0, len(raw.Error) > 0 && !bytes.Equal(raw.Error, []byte("null"))
	if hasResult == hasError {
		return m, Errorf(CodeInvalidRequest, "invalid request: need a method, or exactly one of result and error")
	}
	if hasError {
		var e Error
		if err := json.Unmarshal(raw.Error, &e); err != nil {
			return m, Errorf(CodeInvalidRequest, "invalid request: malformed error object")
		}
		m.Error = &e
	}
	return m, nil
}

// Peek reads only the envelope (id and method) of a frame; used for frames
// too large to be handled, so the error can still carry the request's id.
func Peek(data []byte) (id json.RawMessage, method string, ok bool) {
	// The method is read as Decode reads it: raw, the last of duplicate keys winning, so an
	// earlier "method" of another type cannot make the two disagree.
	var raw struct {
		ID     json.RawMessage `json:"id"`
		Method json.RawMessage `json:"method"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, "", false
	}
	if !validID(raw.ID) {
		raw.ID = nil
	}
	if len(raw.Method) > 0 && json.Unmarshal(raw.Method, &method) != nil {
		method = ""
	}
	return raw.ID, method, true
}

func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return true
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// PeekID reads a response's id from the start of a frame that was cut short
// (over a size cap), when the id comes before the bulk of it, as every torii
// peer writes it ({"jsonrpc":"2.0","id":…,"result":…}). nil if it cannot.
func PeekID(prefix []byte) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for i := 0; i < 4 && d.More(); i++ {
		k, err := d.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if key, _ := k.(string); key != "id" {
			if key == "jsonrpc" && d.Decode(&v) == nil {
				continue
			}
			return nil // the id must come before anything large
		}
		if d.Decode(&v) != nil || !validID(v) || len(v) == 0 || v[0] == 'n' {
			return nil
		}
		return v
	}
	return nil
}
