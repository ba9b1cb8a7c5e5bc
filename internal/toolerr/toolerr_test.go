package toolerr

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// The TS list (extension/src/tools/errors.ts, ERROR_HINTS) and the Go list
// must name the same codes in the same order with the same hints.
func TestMatchesExtensionList(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "extension", "src", "tools", "errors.ts"))
	if err != nil {
		t.Fatalf("read errors.ts: %v", err)
	}
	block := regexp.MustCompile(`(?s)export const ERROR_HINTS = \{(.*?)\n\}`).FindSubmatch(src)
	if block == nil {
		t.Fatal("errors.ts: ERROR_HINTS = { … } not found; update this parser with the file")
	}
	line := regexp.MustCompile(`(?m)^\s*([a-z_]+)\s*:\s*("(?:[^"\\]|\\.)*")\s*,?\s*$`)
	type pair struct{ code, hint string }
	var ts []pair
	for _, m := range line.FindAllSubmatch(block[1], -1) {
		h, err := strconv.Unquote(string(m[2]))
		if err != nil {
			t.Fatalf("errors.ts: hint of %s: %v", m[1], err)
		}
		ts = append(ts, pair{string(m[1]), h})
	}
	if len(ts) == 0 {
		t.Fatal("errors.ts: no codes parsed")
	}
	goList := Codes()
	for i := 0; i < max(len(ts), len(goList)); i++ {
		switch {
		case i >= len(ts):
			t.Errorf("code %q is in Go but not in errors.ts", goList[i])
		case i >= len(goList):
			t.Errorf("code %q is in errors.ts but not in Go", ts[i].code)
		case string(goList[i]) != ts[i].code:
			t.Errorf("position %d: Go %q, errors.ts %q", i, goList[i], ts[i].code)
		case goList[i].Hint() != ts[i].hint:
			t.Errorf("hint of %s differs:\n go: %s\n ts: %s", goList[i], goList[i].Hint(), ts[i].hint)
		}
	}
}

func TestResultRoundTrip(t *testing.T) {
	r := Result(ExtensionNotConnected, "no extension")
	if !r.IsError {
		t.Fatal("not an error result")
	}
	e := FromResult(r)
	if e == nil || e.Code != ExtensionNotConnected || e.Message != "no extension" || e.Hint != ExtensionNotConnected.Hint() {
		t.Fatalf("FromResult: %+v", e)
	}
	if !Valid("busy") || Valid("nope") {
		t.Fatal("Valid")
	}
}
