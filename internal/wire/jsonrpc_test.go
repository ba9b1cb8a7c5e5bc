package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeKinds(t *testing.T) {
	cases := []struct {
		in   string
		code int // 0 = ok
		kind string
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"a"}`, 0, "request"},
		{`{"jsonrpc":"2.0","id":"x","method":"a","params":{}}`, 0, "request"},
		{`{"jsonrpc":"2.0","method":"a"}`, 0, "notification"},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, 0, "response"},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, 0, "response"},
		{`{not json`, CodeParseError, ""},
		{``, CodeParseError, ""},
		{`[1,2]`, CodeInvalidRequest, ""},
		{`42`, CodeInvalidRequest, ""},
		{`{"id":1,"method":"a"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"1.0","id":1,"method":"a"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":{},"method":"a"}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"method":""}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"method":7}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"a","params":3}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1}`, CodeInvalidRequest, ""},
		{`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":""}}`, CodeInvalidRequest, ""},
	}
	for _, c := range cases {
		m, e := Decode([]byte(c.in))
		if c.code != 0 {
			if e == nil || e.Code != c.code {
				t.Errorf("%s: got err %v, want code %d", c.in, e, c.code)
			}
			continue
		}
		if e != nil {
			t.Errorf("%s: unexpected %v", c.in, e)
			continue
		}
		got := ""
		switch {
		case m.IsRequest():
			got = "request"
		case m.IsNotification():
			got = "notification"
		case m.IsResponse():
			got = "response"
		}
		if got != c.kind {
			t.Errorf("%s: kind %q, want %q", c.in, got, c.kind)
		}
	}
}

func TestDecodeKeepsIDOnInvalid(t *testing.T) {
	m, e := Decode([]byte(`{"jsonrpc":"1.0","id":"abc","method":"x"}`))
	if e == nil || m == nil || string(m.ID) != `"abc"` {
		t.Fatalf("got %v %v", m, e)
	}
}

func TestErrorResponseKeepsNullID(t *testing.T) {
	b, err := json.Marshal(NewErrorResponse(nil, Errorf(CodeParseError, "bad")))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.Contains(s, `"id":null`) || !strings.Contains(s, `"code":-32700`) || !strings.Contains(s, `"name":"parse_error"`) {
		t.Fatalf("got %s", s)
	}
	n, _ := NewRequest(nil, "session/cancel", map[string]string{"sessionId": "s"})
	b, _ = json.Marshal(n)
	if strings.Contains(string(b), `"id"`) {
		t.Fatalf("notification carries id: %s", b)
	}
}

func TestErrorRoundTripAndIs(t *testing.T) {
	b, _ := json.Marshal(Errorf(CodeRateLimited, "slow down"))
	var e Error
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if e.Code != CodeRateLimited || e.Message != "slow down" || e.Data == nil {
		t.Fatalf("got %+v", e)
	}
	var err error = &e
	if !errors.Is(err, &Error{Code: CodeRateLimited}) || errors.Is(err, &Error{Code: CodeParseError}) {
		t.Fatal("Is by code broken")
	}
	if !strings.Contains(err.Error(), "rate_limited") {
		t.Fatalf("message %q", err.Error())
	}
}

func TestEveryCodeHasNameAndHint(t *testing.T) {
	for _, c := range []int{CodeParseError, CodeInvalidRequest, CodeMethodNotFound, CodeInvalidParams,
		CodeInternalError, CodeNotAuthenticated, CodePairingDenied, CodePairingTimeout, CodeRateLimited} {
		if Name(c) == "" || Hint(c) == "" {
			t.Errorf("code %d lacks name or hint", c)
		}
	}
}

func TestPeek(t *testing.T) {
	id, m, ok := Peek([]byte(`{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":1}}`))
	if !ok || string(id) != "7" || m != "x" {
		t.Fatalf("got %s %s %v", id, m, ok)
	}
	if _, _, ok := Peek([]byte(`nope`)); ok {
		t.Fatal("peek accepted junk")
	}
}

func TestDecodeResult(t *testing.T) {
	var got struct{ N int }
	ok := &Message{Result: json.RawMessage(`{"N":7}`)}
	if err := ok.DecodeResult(&got); err != nil || got.N != 7 {
		t.Fatalf("result: %v %+v", err, got)
	}
	if err := ok.DecodeResult(nil); err != nil {
		t.Fatalf("discarded result: %v", err)
	}
	bad := &Message{Error: &Error{Code: CodeMethodNotFound, Message: "nope"}}
	var je *Error
	if err := bad.DecodeResult(&got); !errors.As(err, &je) || je.Code != CodeMethodNotFound {
		t.Fatalf("error response: %v", err)
	}
}
