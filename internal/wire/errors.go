package wire

import (
	"encoding/json"
	"fmt"
)

// Error is a JSON-RPC error object. It is also the Go error returned by
// every torii client when the peer answered with an error.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *Error) Error() string {
	if n := Name(e.Code); n != "" {
		return fmt.Sprintf("%s (%d): %s", n, e.Code, e.Message)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is makes errors.Is(err, &Error{Code: X}) match on the code alone.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// ErrorData is the Data torii attaches to its own errors: the stable name
// and the one-line recovery hint, so a peer can act without a code table.
type ErrorData struct {
	Name string `json:"name"`
	Hint string `json:"hint,omitempty"`
}

// Errorf builds an *Error whose Data names the code and carries its hint.
func Errorf(code int, format string, args ...any) *Error {
	e := &Error{Code: code, Message: fmt.Sprintf(format, args...)}
	if n := Name(code); n != "" {
		e.Data = ErrorData{Name: n, Hint: Hint(code)}
	}
	return e
}

// UnmarshalJSON keeps Data as raw JSON so it round-trips unchanged.
func (e *Error) UnmarshalJSON(b []byte) error {
	var w struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Code, e.Message, e.Data = w.Code, w.Message, nil
	if len(w.Data) > 0 && string(w.Data) != "null" {
		e.Data = w.Data
	}
	return nil
}
