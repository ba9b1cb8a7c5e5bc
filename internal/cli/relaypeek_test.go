package cli

import "testing"

// One spelling per id in both directions, read without a decode.
func TestIDKey(t *testing.T) {
	for _, c := range []struct{ a, b string }{{`1`, `1.0`}, {`1e2`, `100`}, {`"a"`, `"\u0061"`}} {
		if idKey([]byte(c.a)) != idKey([]byte(c.b)) || idKey([]byte(c.a)) == "" {
			t.Errorf("%s and %s differ: %q %q", c.a, c.b, idKey([]byte(c.a)), idKey([]byte(c.b)))
		}
	}
	for _, c := range [][2]string{{`1`, `"1"`}, {`2`, `1`}} {
		if idKey([]byte(c[0])) == idKey([]byte(c[1])) {
			t.Errorf("%s and %s collide", c[0], c[1])
		}
	}
	for _, none := range []string{``, `null`, `{}`, `[1]`, `true`} {
		if k := idKey([]byte(none)); k != "" {
			t.Errorf("%s: key %q", none, k)
		}
	}
}

// A daemon line's id and method come from its first keys; a line laid out
// otherwise is still read right.
func TestPeekReply(t *testing.T) {
	for _, c := range []struct {
		line, id, method string
		ok               bool
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}`, `7`, ``, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, `null`, ``, true},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`, ``, `notifications/tools/list_changed`, true},
		{`{"jsonrpc":"2.0","id":"s1","method":"ping"}`, `"s1"`, `ping`, true},
		{`{"result":{},"jsonrpc":"2.0","id":"late"}`, `"late"`, ``, true},
		{`not json`, ``, ``, false},
	} {
		id, method, ok := peekReply([]byte(c.line))
		if string(id) != c.id || method != c.method || ok != c.ok {
			t.Errorf("%s: got %s %q %v", c.line, id, method, ok)
		}
	}
}
