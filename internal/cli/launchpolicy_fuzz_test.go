package cli

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/fuzzseed"
)

// FuzzLaunchPattern: any allowlist pattern is accepted or refused with a
// message, never a panic; the three ways a pattern reaches the launch policy
// (--allow, a policy file, the encoded policy the connect page carries back)
// agree; and an accepted pattern carries none of what the grammar refuses
// (SECURITY I-14, I-47).
func FuzzLaunchPattern(f *testing.F) {
	for _, s := range []string{"example.com", "*.example.com", "https://example.com/path/*", "[::1]:8080",
		"http://127.0.0.1:5173", "*.127.0.0.1", "user@example.com", "javascript:alert(1)", "example.com:70000",
		"*://*", "HTTPS://Example.COM.", "a..b", `example.com\evil.com`} {
		f.Add([]byte(s))
	}
	fuzzseed.Corpus(f, "FuzzLaunchPattern")
	f.Fuzz(func(t *testing.T, data []byte) {
		s := string(data)
		err := checkPattern(s)
		if err != nil && err.Error() == "" {
			t.Fatalf("%q refused without a message", s)
		}

		flags := &launchPolicyFlags{allow: repeated{s}}
		fromFlag, flagErr := flags.build(false)
		trimmed := strings.TrimSpace(s)
		if (flagErr == nil) != (checkPattern(trimmed) == nil) {
			t.Fatalf("--allow %q: %v, but checkPattern says %v", s, flagErr, checkPattern(trimmed))
		}
		if !utf8.ValidString(s) {
			// JSON cannot carry it as it is (a file's decoder makes it U+FFFD), so --allow must refuse it.
			if flagErr == nil {
				t.Fatalf("--allow accepted %q, which is not UTF-8", s)
			}
			return
		}
		rule, _ := json.Marshal(s)
		fromFile, fileErr := parsePolicy([]byte(`{"rules":[{"pattern":` + string(rule) + `}]}`))
		if (fileErr == nil) != (flagErr == nil) {
			t.Fatalf("pattern %q: file says %v, --allow says %v", s, fileErr, flagErr)
		}
		if fileErr != nil {
			if pe, ok := fileErr.(*PolicyError); ok && !strings.HasPrefix(pe.Field, "rules[0]") {
				t.Fatalf("pattern %q refused at %q, not at the rule", s, pe.Field)
			}
			return
		}
		if got := fromFile.Rules[0].Pattern; got != fromFlag.Rules[0].Pattern || got != trimmed {
			t.Fatalf("pattern %q kept as %q (file) and %q (--allow)", s, got, fromFlag.Rules[0].Pattern)
		}
		enc, err := fromFlag.encode()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := base64.RawURLEncoding.DecodeString(enc)
		if err != nil {
			t.Fatal(err)
		}
		back, err := parsePolicy(raw)
		if err != nil || len(back.Rules) != 1 || back.Rules[0].Pattern != trimmed {
			t.Fatalf("pattern %q does not survive its encoding: %v", s, err)
		}

		p := trimmed
		if m := schemeRe.FindStringSubmatch(p); m != nil {
			if sc := strings.ToLower(m[1]); sc != "http" && sc != "https" {
				t.Fatalf("%q accepted with scheme %s", s, sc)
			}
			p = p[len(m[0]):]
		}
		authority, _, _ := strings.Cut(p, "/")
		if strings.ContainsAny(p, "?#") || strings.ContainsAny(authority, `@\ `) {
			t.Fatalf("%q accepted with a query, fragment, user name, backslash or space", s)
		}
		host := authority
		if i := strings.LastIndex(host, ":"); i >= 0 && !strings.HasSuffix(host, "]") {
			host = host[:i]
		}
		if strings.Contains(strings.TrimPrefix(host, "*."), "*") || strings.Trim(host, "*.") == "" {
			t.Fatalf("%q accepted with a wildcard host %q", s, host)
		}
	})
}
