package wire

// Link error codes (docs/protocol.md, "Error codes on the link").
const (
	CodeParseError       = -32700 // frame is not JSON
	CodeInvalidRequest   = -32600 // not JSON-RPC 2.0, or a request over 1 MiB
	CodeMethodNotFound   = -32601 // unknown method
	CodeInvalidParams    = -32602 // params fail validation
	CodeInternalError    = -32603 // the daemon failed; not the caller's fault
	CodeNotAuthenticated = -32001 // method needs torii/auth first
	CodePairingDenied    = -32003 // the person denied the pairing
	CodePairingTimeout   = -32004 // nobody decided within 120 s
	CodeRateLimited      = -32029 // too many pairing attempts
)

type codeInfo struct{ name, hint string }

var codes = map[int]codeInfo{
	CodeParseError:       {"parse_error", "send exactly one JSON value per text frame"},
	CodeInvalidRequest:   {"invalid_request", "send a JSON-RPC 2.0 object with \"jsonrpc\":\"2.0\"; keep requests under 1 MiB"},
	CodeMethodNotFound:   {"method_not_found", "check the method name against docs/protocol.md"},
	CodeInvalidParams:    {"invalid_params", "fix the params named in the message and retry"},
	CodeInternalError:    {"internal_error", "retry; if it persists run `torii doctor` and check the daemon log"},
	CodeNotAuthenticated: {"not_authenticated", "complete torii/hello and torii/auth (or pair) before other methods"},
	CodePairingDenied:    {"pairing_denied", "start pairing again and approve it with `torii pair`"},
	CodePairingTimeout:   {"pairing_timeout", "start pairing again and approve it with `torii pair` within 120 s"},
	CodeRateLimited:      {"rate_limited", "wait a minute before pairing again"},
}

// Name is the stable snake_case name of a code, or "" if torii does not define it.
func Name(code int) string { return codes[code].name }

// Hint is a one-line recovery hint for a code, or "".
func Hint(code int) string { return codes[code].hint }
