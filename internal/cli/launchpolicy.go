package cli

// The policy `torii launch` gives the dedicated profile it starts (SECURITY I-47): from flags
// (--allow ORIGIN..., --act, --code, --passwords, --approve KIND=CHOICE) or a --policy FILE in the
// extension's policy format. It is checked here so a bad file fails at once with the field named;
// the extension checks it again (policy/launch.ts) and applies it only after the managed pairing
// with the one-time secret connects, and only in a profile Torii created.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/suggest"
)

// maxPolicyBytes bounds a policy file: it travels base64-encoded on the browser's command line,
// where one argument may hold at most 128 KiB on Linux.
const maxPolicyBytes = 32 << 10

// maxPolicyRules bounds the allowlist a launch policy may carry.
const maxPolicyRules = 500

// approvalKinds are the extension's APPROVAL_KINDS (extension/src/policy/policy.ts), in order.
var approvalKinds = []string{"submit", "destructive_click", "new_origin", "evaluate", "upload", "download"}

// approvalChoices are how a launch policy answers an approval kind: ask the person, or answer
// for them. SECURITY I-80: in a headless browser no one can be asked, so "ask" fails at once.
var approvalChoices = []string{"ask", "allow", "deny"}

// maxApprovalTimeoutMs bounds approvalTimeoutMs (the extension's MAX_APPROVAL_TIMEOUT_MS): every
// wait ends before the 60 s request timeout of the common MCP clients (SECURITY I-80).
const maxApprovalTimeoutMs = 45000

// codeKinds are the code-execution switches of a rule, by the name --code takes.
var codeKinds = map[string]string{"expression": "evalExpression", "program": "evalProgram", "fetch": "fetch", "invoke": "invoke"}

// launchRule is one allowlist entry, as the extension stores it.
type launchRule struct {
	Pattern        string            `json:"pattern"`
	Act            *bool             `json:"act,omitempty"`
	EvalExpression *bool             `json:"evalExpression,omitempty"`
	EvalProgram    *bool             `json:"evalProgram,omitempty"`
	Fetch          *bool             `json:"fetch,omitempty"`
	AllowPassword  *bool             `json:"allowPassword,omitempty"`
	Invoke         *bool             `json:"invoke,omitempty"`
	Observe        *bool             `json:"observe,omitempty"`
	Approvals      map[string]string `json:"approvals,omitempty"`
}

// launchPolicy is the extension's Policy without the permissive switch (that is --permissive).
type launchPolicy struct {
	Version           int               `json:"version"`
	Rules             []launchRule      `json:"rules"`
	ActMode           bool              `json:"actMode"`
	Approvals         map[string]string `json:"approvals,omitempty"`
	ApprovalTimeoutMs int               `json:"approvalTimeoutMs,omitempty"`
}

// PolicyError is a launch policy that cannot be used; Field names where (e.g. "rules[2].pattern").
type PolicyError struct {
	Source string // "--policy FILE" or the flag
	Field  string
	Msg    string
	Fix    string // what to write instead, when the message alone does not say
}

func (e *PolicyError) Error() string {
	where := e.Source
	if e.Field != "" {
		where += ": " + e.Field
	}
	s := where + ": " + e.Msg
	if e.Fix != "" {
		s += "\n  fix: " + e.Fix
	}
	return s
}

// policyShape is the fix for a file that is not one JSON object.
const policyShape = `the file holds one JSON object in the extension's policy format, e.g. {"version":1,"rules":[{"pattern":"example.com","act":true}],"approvals":{"submit":"deny"}}`

// repeated is a flag that may be given several times.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ",") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// launchPolicyFlags are the policy flags of `torii launch`.
type launchPolicyFlags struct {
	allow     repeated
	approve   repeated
	act       bool
	code      string
	passwords bool
	file      string
}

// any reports whether a policy was asked for (other than --permissive).
func (f *launchPolicyFlags) any() bool {
	return len(f.allow) > 0 || len(f.approve) > 0 || f.act || f.code != "" || f.passwords || f.file != ""
}

// build turns the flags into the policy to send, or nil when none was asked for.
func (f *launchPolicyFlags) build(permissive bool) (*launchPolicy, error) {
	if !f.any() {
		return nil, nil
	}
	if permissive {
		return nil, &UsageError{Msg: "--permissive cannot be combined with --policy, --allow, --act, --code, --passwords or --approve: pick one way to set the policy"}
	}
	if f.file != "" {
		if len(f.allow) > 0 || len(f.approve) > 0 || f.act || f.code != "" || f.passwords {
			return nil, &UsageError{Msg: "--policy FILE cannot be combined with --allow, --act, --code, --passwords or --approve: put them in the file"}
		}
		return readPolicyFile(f.file)
	}
	if len(f.allow) == 0 {
		return nil, &UsageError{Msg: "--act, --code and --passwords apply to the origins given with --allow ORIGIN; give at least one"}
	}
	p := &launchPolicy{Version: 1, Rules: []launchRule{}}
	t := true
	seen := map[string]bool{}
	for _, o := range f.allow {
		o = strings.TrimSpace(o)
		if err := checkPattern(o); err != nil {
			return nil, &PolicyError{Source: "--allow " + strconv.Quote(o), Msg: err.Error()}
		}
		if seen[o] {
			continue
		}
		seen[o] = true
		r := launchRule{Pattern: o}
		if f.act {
			r.Act = &t
		}
		if f.passwords {
			r.AllowPassword = &t
		}
		p.Rules = append(p.Rules, r)
	}
	if f.code != "" {
		for _, k := range strings.Split(f.code, ",") {
			k = strings.TrimSpace(k)
			field, ok := codeKinds[k]
			if !ok {
				return nil, &PolicyError{Source: "--code", Msg: fmt.Sprintf("unknown kind %q; use expression, program, fetch and/or invoke, comma-separated", k)}
			}
			for i := range p.Rules {
				switch field {
				case "evalExpression":
					p.Rules[i].EvalExpression = &t
				case "evalProgram":
					p.Rules[i].EvalProgram = &t
				case "fetch":
					p.Rules[i].Fetch = &t
				case "invoke":
					p.Rules[i].Invoke = &t
				}
			}
		}
	}
	for _, a := range f.approve {
		kind, choice, ok := strings.Cut(a, "=")
		if !ok {
			return nil, &PolicyError{Source: "--approve " + strconv.Quote(a), Msg: "expected KIND=CHOICE, e.g. submit=deny"}
		}
		if err := checkApproval(kind, choice); err != nil {
			return nil, &PolicyError{Source: "--approve " + strconv.Quote(a), Msg: err.Error()}
		}
		if p.Approvals == nil {
			p.Approvals = map[string]string{}
		}
		p.Approvals[kind] = choice
	}
	return p, nil
}

func checkApproval(kind, choice string) error {
	if !contains(approvalKinds, kind) {
		return fmt.Errorf("unknown approval kind %q%s; one of %s", kind, didYouMean(kind, approvalKinds), strings.Join(approvalKinds, ", "))
	}
	if !contains(approvalChoices, choice) {
		return fmt.Errorf("%s: the choice must be allow, ask or deny, not %q%s", kind, choice, didYouMean(choice, approvalChoices))
	}
	return nil
}

// didYouMean is ` (did you mean "x"?)` for the nearest of names, or "".
func didYouMean(s string, names []string) string {
	if c := suggest.Closest(s, names); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func readPolicyFile(path string) (*launchPolicy, error) {
	src := "--policy " + path
	f, err := os.Open(path)
	if err != nil {
		return nil, &PolicyError{Source: src, Msg: err.Error()}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxPolicyBytes+1))
	if err != nil {
		return nil, &PolicyError{Source: src, Msg: err.Error()}
	}
	if len(b) > maxPolicyBytes {
		return nil, &PolicyError{Source: src, Msg: fmt.Sprintf("the file is larger than %d bytes", maxPolicyBytes)}
	}
	p, err := parsePolicy(b)
	if err != nil {
		var pe *PolicyError
		if errors.As(err, &pe) {
			pe.Source = src
			return nil, pe
		}
		return nil, &PolicyError{Source: src, Msg: err.Error()}
	}
	return p, nil
}

// parsePolicy reads a policy in the extension's format strictly: JSON, one object, known fields
// only, each of its type; every pattern valid; permissive refused (that is --permissive).
func parsePolicy(b []byte) (*launchPolicy, error) {
	var raw any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, &PolicyError{Msg: "not JSON: " + err.Error(), Fix: policyShape}
	}
	if d.More() {
		return nil, &PolicyError{Msg: "not JSON: more than one value", Fix: policyShape}
	}
	top, ok := raw.(map[string]any)
	if !ok {
		return nil, &PolicyError{Msg: "the policy must be a JSON object", Fix: policyShape}
	}
	p := &launchPolicy{Version: 1, Rules: []launchRule{}}
	for _, k := range sortedKeys(top) {
		v := top[k]
		switch k {
		case "version":
			n, ok := v.(json.Number)
			if !ok || n.String() != "1" {
				return nil, &PolicyError{Field: "version", Msg: "must be 1"}
			}
		case "actMode":
			bv, ok := v.(bool)
			if !ok {
				return nil, &PolicyError{Field: "actMode", Msg: "must be true or false"}
			}
			p.ActMode = bv
		case "permissive":
			if bv, ok := v.(bool); !ok || bv {
				return nil, &PolicyError{Field: "permissive", Msg: "a policy file cannot switch the permissive policy on; use --permissive instead"}
			}
		case "approvalTimeoutMs":
			n, ok := v.(json.Number)
			ms, err := n.Int64()
			if !ok || err != nil || ms < 1000 || ms > maxApprovalTimeoutMs {
				return nil, &PolicyError{Field: "approvalTimeoutMs", Msg: fmt.Sprintf("must be a whole number of milliseconds from 1000 to %d (every wait ends before an MCP client's 60 s timeout)", maxApprovalTimeoutMs)}
			}
			p.ApprovalTimeoutMs = int(ms)
		case "approvals":
			a, err := parseApprovals("approvals", v)
			if err != nil {
				return nil, err
			}
			p.Approvals = a
		case "rules":
			list, ok := v.([]any)
			if !ok {
				return nil, &PolicyError{Field: "rules", Msg: "must be an array of rules"}
			}
			if len(list) > maxPolicyRules {
				return nil, &PolicyError{Field: "rules", Msg: fmt.Sprintf("at most %d rules", maxPolicyRules)}
			}
			seen := map[string]bool{}
			for i, x := range list {
				r, err := parseRule(fmt.Sprintf("rules[%d]", i), x)
				if err != nil {
					return nil, err
				}
				if seen[r.Pattern] {
					return nil, &PolicyError{Field: fmt.Sprintf("rules[%d].pattern", i), Msg: fmt.Sprintf("%q is listed twice", r.Pattern)}
				}
				seen[r.Pattern] = true
				p.Rules = append(p.Rules, r)
			}
		default:
			known := []string{"version", "rules", "actMode", "approvals", "approvalTimeoutMs"}
			return nil, &PolicyError{Field: k, Msg: "unknown field" + didYouMean(k, known) + " (known: " + strings.Join(known, ", ") + ")"}
		}
	}
	return p, nil
}

func parseRule(at string, x any) (launchRule, error) {
	o, ok := x.(map[string]any)
	if !ok {
		return launchRule{}, &PolicyError{Field: at, Msg: "a rule must be an object with a pattern"}
	}
	var r launchRule
	pat, ok := o["pattern"].(string)
	if !ok {
		return r, &PolicyError{Field: at + ".pattern", Msg: "missing, or not a string"}
	}
	pat = strings.TrimSpace(pat)
	if err := checkPattern(pat); err != nil {
		return r, &PolicyError{Field: at + ".pattern", Msg: err.Error()}
	}
	r.Pattern = pat
	for _, k := range sortedKeys(o) {
		v := o[k]
		var dst **bool
		switch k {
		case "pattern":
			continue
		case "act":
			dst = &r.Act
		case "evalExpression":
			dst = &r.EvalExpression
		case "evalProgram":
			dst = &r.EvalProgram
		case "fetch":
			dst = &r.Fetch
		case "allowPassword":
			dst = &r.AllowPassword
		case "invoke":
			dst = &r.Invoke
		case "observe":
			dst = &r.Observe
		case "approvals":
			a, err := parseApprovals(at+".approvals", v)
			if err != nil {
				return r, err
			}
			r.Approvals = a
			continue
		default:
			known := []string{"pattern", "act", "evalExpression", "evalProgram", "fetch", "allowPassword", "invoke", "observe", "approvals"}
			return r, &PolicyError{Field: at + "." + k, Msg: "unknown field" + didYouMean(k, known) + " (known: " + strings.Join(known, ", ") + ")"}
		}
		bv, ok := v.(bool)
		if !ok {
			return r, &PolicyError{Field: at + "." + k, Msg: "must be true or false"}
		}
		*dst = &bv
	}
	return r, nil
}

func parseApprovals(at string, v any) (map[string]string, error) {
	o, ok := v.(map[string]any)
	if !ok {
		return nil, &PolicyError{Field: at, Msg: "must be an object of KIND: \"allow\" | \"ask\" | \"deny\""}
	}
	out := map[string]string{}
	for _, k := range sortedKeys(o) {
		c, ok := o[k].(string)
		if !ok {
			return nil, &PolicyError{Field: at + "." + k, Msg: "must be \"allow\", \"ask\" or \"deny\""}
		}
		if err := checkApproval(k, c); err != nil {
			return nil, &PolicyError{Field: at + "." + k, Msg: err.Error()}
		}
		out[k] = c
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

var (
	schemeRe   = regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*)://`)
	bareStarRe = regexp.MustCompile(`^\w+://\*/?\*?$`)
	schemeOnly = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
	portRe     = regexp.MustCompile(`^(\d{1,5}|\*)$`)
	ipv4Re     = regexp.MustCompile(`^\d+\.\d+\.\d+\.\d+$`)
)

// checkPattern refuses what the extension's pattern grammar refuses (extension/src/policy/pattern.ts,
// SECURITY I-14): a bare *, a wildcard over one label or an IP, * anywhere but the first label,
// userinfo, a query or fragment, schemes other than http and https, a bad port or host.
func checkPattern(s string) error {
	if s == "" {
		return errors.New("empty pattern")
	}
	if !utf8.ValidString(s) {
		// JSON would carry it to the extension as U+FFFD: not the pattern checked here.
		return errors.New("a pattern must be valid UTF-8")
	}
	if strings.Trim(s, "*") == "" || s == "*://*" || bareStarRe.MatchString(s) {
		return errors.New("a bare * would allow every site; list the sites instead")
	}
	rest := s
	if m := schemeRe.FindStringSubmatch(rest); m != nil {
		if sc := strings.ToLower(m[1]); sc != "http" && sc != "https" {
			return fmt.Errorf("scheme %s: is not allowed; use http or https", sc)
		}
		rest = rest[len(m[0]):]
	} else if m := schemeOnly.FindString(rest); m != "" {
		next := rest[len(m):]
		if next == "" || !(next[0] == '*' || (next[0] >= '0' && next[0] <= '9')) {
			return errors.New("only http:// and https:// addresses can be allowed")
		}
	}
	if strings.ContainsAny(rest, "?#") {
		return errors.New("a pattern has no query or fragment")
	}
	authority, _, _ := strings.Cut(rest, "/")
	if strings.Contains(authority, "@") {
		return errors.New("a pattern has no user name or password")
	}
	if strings.Contains(authority, `\`) {
		return errors.New("backslash in host")
	}
	if i := strings.LastIndex(authority, ":"); i >= 0 && portRe.MatchString(authority[i+1:]) {
		if p := authority[i+1:]; p != "*" {
			if n, _ := strconv.Atoi(p); n < 1 || n > 65535 {
				return errors.New("port out of range")
			}
		}
		authority = authority[:i]
	}
	wildcard := strings.HasPrefix(authority, "*.")
	if wildcard {
		authority = authority[2:]
	}
	if strings.Contains(authority, "*") {
		return errors.New("* is only allowed as the first label (*.example.com)")
	}
	host := strings.TrimSuffix(authority, ".")
	if host == "" || strings.ContainsAny(host, " \t\r\n/\\?#@") {
		return fmt.Errorf("not a host name: %s", authority)
	}
	if u, err := url.Parse("https://" + host + "/"); err != nil || u.User != nil || u.Port() != "" || u.Hostname() == "" {
		return fmt.Errorf("not a host name: %s", authority)
	}
	if !strings.HasPrefix(host, "[") {
		for _, l := range strings.Split(host, ".") {
			if l == "" {
				return fmt.Errorf("not a host name: %s", authority)
			}
		}
	}
	if wildcard {
		if strings.HasPrefix(host, "[") || ipv4Re.MatchString(host) || net.ParseIP(host) != nil {
			return errors.New("no wildcard over an IP address")
		}
		if !strings.Contains(host, ".") {
			return errors.New("a wildcard must cover a registrable domain (*.example.com, not *.com)")
		}
	}
	return nil
}

// encode is the policy as the connect page's fragment carries it: compact JSON, base64url.
func (p *launchPolicy) encode() (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
