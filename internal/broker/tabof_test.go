package broker

import (
	"encoding/json"
	"testing"
)

// One pass over a call's arguments gives its tab and whether they are JSON.
func TestTabOf(t *testing.T) {
	for in, want := range map[string]struct {
		tab   int
		valid bool
	}{
		``:                {-1, true},
		`{"tabId":3}`:     {3, true},
		`{"tabId":"3"}`:   {-1, true},
		`{"tabId":1.5}`:   {-1, true},
		`{"tabId":-2}`:    {-1, true},
		`[1]`:             {-1, true},
		`{"tabId":3`:      {-1, false},
		`{"tabId":3}junk`: {-1, false},
	} {
		tab, valid := tabOf(json.RawMessage(in))
		if tab != want.tab || valid != want.valid {
			t.Errorf("%q: got %d %v, want %d %v", in, tab, valid, want.tab, want.valid)
		}
	}
}
