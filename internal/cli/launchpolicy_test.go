package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/launcher"
)

func TestCheckPattern(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"example.com", "*.example.com", "example.com:8080", "example.com:*", "https://example.com/path/*", "http://127.0.0.1:5173", "127.0.0.1:5173", "[::1]:8080", "bücher.example", "EXAMPLE.com."} {
		if err := checkPattern(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	bad := map[string]string{
		"":                            "empty",
		"*":                           "bare *",
		"***":                         "bare *",
		"*://*":                       "bare *",
		"https://*":                   "bare *",
		"*.com":                       "registrable domain",
		"*.127.0.0.1":                 "IP address",
		"exa*mple.com":                "first label",
		"*.*.example.com":             "first label",
		"example.com/?q=1":            "query",
		"https://example.com/a?b=c":   "query",
		"example.com#top":             "query or fragment",
		"ftp://example.com":           "scheme ftp",
		"chrome-extension://abc":      "scheme chrome-extension",
		"javascript:alert(1)":         "only http",
		"file:///etc/passwd":          "scheme file",
		"user@example.com":            "user name",
		"example.com:0":               "port out of range",
		"example.com:70000":           "port out of range",
		"a..b":                        "not a host",
		"exa mple.com":                "not a host",
		`example.com\evil.com`:        "backslash",
		"https://user:pw@example.com": "user name",
	}
	for in, want := range bad {
		err := checkPattern(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("checkPattern(%q) = %v, want an error about %q", in, err, want)
		}
	}
}

func TestParsePolicyFile(t *testing.T) {
	t.Parallel()
	good := `{"version":1,"actMode":false,"rules":[{"pattern":"example.com","act":true,"evalExpression":true,"approvals":{"submit":"deny"}},{"pattern":"*.example.org","fetch":true}],"approvals":{"new_origin":"deny","download":"allow"},"approvalTimeoutMs":30000}`
	p, err := parsePolicy([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 2 || p.Rules[0].Act == nil || !*p.Rules[0].Act || p.Rules[1].Fetch == nil || p.Approvals["new_origin"] != "deny" || p.ApprovalTimeoutMs != 30000 {
		t.Errorf("parsed %+v", p)
	}
	// Round trip: what travels is the same policy, only known fields.
	enc, _ := p.encode()
	raw, _ := base64.RawURLEncoding.DecodeString(enc)
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil || back["version"] != float64(1) || len(back["rules"].([]any)) != 2 {
		t.Errorf("encoded %s: %v", raw, err)
	}
	if _, err := parsePolicy([]byte(`{"permissive":false}`)); err != nil {
		t.Errorf("permissive:false refused: %v", err)
	}

	bad := []struct{ in, field, msg string }{
		{`not json`, "", "not JSON"},
		{`{"rules":[]} {"rules":[]}`, "", "more than one value"},
		{`[]`, "", "must be a JSON object"},
		{`{"rules":[],"extra":1}`, "extra", "unknown field"},
		{`{"version":2}`, "version", "must be 1"},
		{`{"actMode":"yes"}`, "actMode", "true or false"},
		{`{"permissive":true}`, "permissive", "use --permissive"},
		{`{"rules":{"pattern":"example.com"}}`, "rules", "array"},
		{`{"rules":["example.com"]}`, "rules[0]", "object"},
		{`{"rules":[{"act":true}]}`, "rules[0].pattern", "missing"},
		{`{"rules":[{"pattern":"example.com","act":"true"}]}`, "rules[0].act", "true or false"},
		{`{"rules":[{"pattern":"example.com","evalExpresion":true}]}`, "rules[0].evalExpresion", "unknown field"},
		{`{"rules":[{"pattern":"example.com"},{"pattern":"*.com"}]}`, "rules[1].pattern", "registrable domain"},
		{`{"rules":[{"pattern":"*"}]}`, "rules[0].pattern", "bare *"},
		{`{"rules":[{"pattern":"https://example.com/?q"}]}`, "rules[0].pattern", "query"},
		{`{"rules":[{"pattern":"ws://example.com"}]}`, "rules[0].pattern", "scheme ws"},
		{`{"rules":[{"pattern":"example.com"},{"pattern":"example.com"}]}`, "rules[1].pattern", "twice"},
		{`{"approvals":{"submit":"maybe"}}`, "approvals.submit", "allow, ask or deny"},
		{`{"approvals":{"submit":true}}`, "approvals.submit", "allow"},
		{`{"approvals":{"teleport":"allow"}}`, "approvals.teleport", "unknown approval kind"},
		{`{"rules":[{"pattern":"example.com","approvals":{"upload":"sometimes"}}]}`, "rules[0].approvals.upload", "allow, ask or deny"},
		{`{"approvalTimeoutMs":10}`, "approvalTimeoutMs", "1000 to 45000"},
		{`{"approvalTimeoutMs":1500.5}`, "approvalTimeoutMs", "whole number"},
	}
	for _, c := range bad {
		_, err := parsePolicy([]byte(c.in))
		var pe *PolicyError
		if !errors.As(err, &pe) || pe.Field != c.field || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("parsePolicy(%s) = %v, want field %q and %q", c.in, err, c.field, c.msg)
		}
	}
}

// The Console & network switch travels in a policy file like the other per-origin switches.
func TestPolicyObserveSwitch(t *testing.T) {
	t.Parallel()
	p, err := parsePolicy([]byte(`{"rules":[{"pattern":"example.com","observe":true}]}`))
	if err != nil || len(p.Rules) != 1 || p.Rules[0].Observe == nil || !*p.Rules[0].Observe {
		t.Fatalf("parsePolicy = %+v, %v", p, err)
	}
	var pe *PolicyError
	if _, err := parsePolicy([]byte(`{"rules":[{"pattern":"example.com","observe":"yes"}]}`)); !errors.As(err, &pe) || pe.Field != "rules[0].observe" {
		t.Errorf("a non-boolean observe: %v", err)
	}
}

func TestReadPolicyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	rules := make([]string, 0, 2000)
	for i := 0; i < 2000; i++ {
		rules = append(rules, `{"pattern":"host`+strconv.Itoa(i)+`.example.com"}`)
	}
	os.WriteFile(big, []byte(`{"rules":[`+strings.Join(rules, ",")+`]}`), 0o600)
	if _, err := readPolicyFile(big); err == nil || !strings.Contains(err.Error(), "larger than 32768 bytes") || !strings.Contains(err.Error(), "--policy "+big) {
		t.Errorf("big file: %v", err)
	}
	if _, err := readPolicyFile(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"rules":[{"pattern":"example.com","act":1}]}`), 0o600)
	if _, err := readPolicyFile(bad); err == nil || err.Error() != "--policy "+bad+": rules[0].act: must be true or false" {
		t.Errorf("bad file: %v", err)
	}
}

func TestPolicyFlags(t *testing.T) {
	t.Parallel()
	f := launchPolicyFlags{allow: repeated{"127.0.0.1:8080", "example.com", "127.0.0.1:8080"}, act: true, code: "expression,fetch", passwords: true, approve: repeated{"submit=deny", "download=allow"}}
	p, err := f.build(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Rules) != 2 || p.Rules[0].Pattern != "127.0.0.1:8080" || !*p.Rules[0].Act || !*p.Rules[1].EvalExpression || p.Rules[1].EvalProgram != nil || !*p.Rules[0].Fetch || !*p.Rules[1].AllowPassword {
		b, _ := json.Marshal(p)
		t.Errorf("built %s", b)
	}
	if p.ActMode || p.Approvals["submit"] != "deny" || p.Approvals["download"] != "allow" {
		t.Errorf("approvals/act mode %+v", p)
	}
	if p, err := (&launchPolicyFlags{}).build(false); p != nil || err != nil {
		t.Errorf("no flags: %v %v", p, err)
	}
	// invoke is its own switch: --code invoke sets it alone, and expression/program/fetch never do.
	inv, err := (&launchPolicyFlags{allow: repeated{"example.com"}, code: "invoke"}).build(false)
	if err != nil || inv.Rules[0].Invoke == nil || !*inv.Rules[0].Invoke || inv.Rules[0].EvalExpression != nil || inv.Rules[0].Fetch != nil {
		t.Errorf("--code invoke: %+v %v", inv, err)
	}
	if p.Rules[0].Invoke != nil || p.Rules[1].Invoke != nil {
		t.Errorf("--code expression,fetch set invoke")
	}

	bad := []struct {
		f          launchPolicyFlags
		permissive bool
		want       string
		usage      bool
	}{
		{launchPolicyFlags{act: true}, false, "give at least one", true},
		{launchPolicyFlags{code: "expression"}, false, "give at least one", true},
		{launchPolicyFlags{allow: repeated{"example.com"}, code: "shell"}, false, `--code: unknown kind "shell"`, false},
		{launchPolicyFlags{allow: repeated{"example.com"}, approve: repeated{"submit=maybe"}}, false, `--approve "submit=maybe": submit: the choice must be allow, ask or deny`, false},
		{launchPolicyFlags{allow: repeated{"example.com"}, approve: repeated{"teleport=allow"}}, false, `unknown approval kind "teleport"`, false},
		{launchPolicyFlags{allow: repeated{"example.com"}, approve: repeated{"submit"}}, false, "expected KIND=CHOICE", false},
		{launchPolicyFlags{allow: repeated{"*"}}, false, `--allow "*": a bare *`, false},
		{launchPolicyFlags{allow: repeated{"*.com"}}, false, "registrable domain", false},
		{launchPolicyFlags{allow: repeated{"https://example.com/?q=1"}}, false, "query", false},
		{launchPolicyFlags{allow: repeated{"ftp://example.com"}}, false, "scheme ftp", false},
		{launchPolicyFlags{file: "p.json", allow: repeated{"example.com"}}, false, "--policy FILE cannot be combined", true},
		{launchPolicyFlags{file: "p.json"}, true, "--permissive cannot be combined", true},
		{launchPolicyFlags{allow: repeated{"example.com"}}, true, "--permissive cannot be combined", true},
	}
	for _, c := range bad {
		_, err := c.f.build(c.permissive)
		var ue *UsageError
		if err == nil || !strings.Contains(err.Error(), c.want) || errors.As(err, &ue) != c.usage {
			t.Errorf("%+v permissive=%v: %v, want %q (usage error %v)", c.f, c.permissive, err, c.want, c.usage)
		}
	}
}

func TestLaunchParamProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := &launchPolicy{Version: 1, Rules: []launchRule{{Pattern: "example.com"}}}

	// A directory torii creates now is marked and takes the policy.
	fresh := filepath.Join(dir, "fresh")
	v, err := launchParam(fresh, false, pol, false, "--allow")
	if err != nil || v.Get("launch") == "" {
		t.Fatalf("fresh: %v %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(fresh, launcher.MarkerFile)); err != nil {
		t.Errorf("no marker: %v", err)
	}
	// Later launches of it still do; so does --permissive.
	if v, err := launchParam(fresh, false, nil, true, "--permissive"); err != nil || v.Get("policy") != "permissive" {
		t.Errorf("again: %v %v", v, err)
	}
	// A launch without a policy still makes (and marks) a missing profile.
	plain := filepath.Join(dir, "plain")
	if v, err := launchParam(plain, false, nil, false, "--permissive"); err != nil || v != nil {
		t.Errorf("plain: %v %v", v, err)
	}
	if _, err := os.Stat(filepath.Join(plain, launcher.MarkerFile)); err != nil {
		t.Errorf("plain profile not marked: %v", err)
	}

	// Someone else's directory (the person's Chrome profile): refused, with a way out.
	theirs := filepath.Join(dir, "google-chrome")
	os.MkdirAll(filepath.Join(theirs, "Default"), 0o700)
	for _, c := range []struct {
		pol        *launchPolicy
		permissive bool
		flag       string
	}{{pol, false, "--allow"}, {nil, true, "--permissive"}, {pol, false, "--policy"}} {
		_, err := launchParam(theirs, false, c.pol, c.permissive, c.flag)
		var nm *launcher.NotManagedError
		if !errors.As(err, &nm) || !strings.Contains(err.Error(), c.flag+" applies only to a profile that torii launch created") || !strings.Contains(err.Error(), "fix:") {
			t.Errorf("%s on a foreign profile: %v", c.flag, err)
		}
	}
	if _, err := os.Stat(filepath.Join(theirs, launcher.MarkerFile)); err == nil {
		t.Error("a foreign profile was marked")
	}
	// Without a policy flag, any directory is still fine (as before).
	if _, err := launchParam(theirs, false, nil, false, "--allow"); err != nil {
		t.Errorf("no policy, foreign profile: %v", err)
	}
	// The default profile in the state directory is torii's own, even from before the marker.
	def := filepath.Join(dir, "state-profile")
	os.MkdirAll(def, 0o700)
	if _, err := launchParam(def, true, pol, false, "--allow"); err != nil {
		t.Errorf("default profile: %v", err)
	}

	// A managed profile whose browser runs: refused; its policy stays.
	host, _ := os.Hostname()
	os.Symlink(host+"-"+strconv.Itoa(os.Getpid()), filepath.Join(fresh, "SingletonLock"))
	_, err = launchParam(fresh, false, pol, false, "--allow")
	var re *launcher.RunningError
	if !errors.As(err, &re) || re.PID != os.Getpid() || !strings.Contains(err.Error(), "its policy stays as it is") {
		t.Errorf("running: %v", err)
	}
	// A stale lock (no such process) is not a running browser.
	os.Remove(filepath.Join(fresh, "SingletonLock"))
	os.Symlink(host+"-999999999", filepath.Join(fresh, "SingletonLock"))
	if _, err := launchParam(fresh, false, pol, false, "--allow"); err != nil {
		t.Errorf("stale lock: %v", err)
	}
}

// TestLaunchPolicyCommandLine runs the real `torii launch` with policy flags against a fake browser
// and reads the policy back from the connect page's fragment; and the refusals, which start nothing.
func TestLaunchPolicyCommandLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	exe, argsFile := fakeBrowser(t, e.state)

	// Refused before anything starts: a bad origin, a bad file, a foreign profile.
	foreign := filepath.Join(e.state, "mychrome")
	os.MkdirAll(foreign, 0o700)
	badFile := filepath.Join(e.state, "bad.json")
	os.WriteFile(badFile, []byte(`{"rules":[{"pattern":"example.com","act":true,"colour":"red"}]}`), 0o600)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--allow", "*.com"}, 1, `--allow "*.com": a wildcard must cover a registrable domain`},
		{[]string{"--allow", "example.com", "--code", "everything"}, 1, `--code: unknown kind "everything"`},
		{[]string{"--policy", badFile}, 1, "--policy " + badFile + ": rules[0].colour: unknown field"},
		{[]string{"--policy", badFile, "--permissive"}, 2, "--permissive cannot be combined"},
		{[]string{"--act"}, 2, "give at least one"},
	} {
		r := e.run("", append([]string{"launch", "--browser", exe, "--no-wait"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("launch %v: %d %q, want %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Fatal("a browser was started for a refused launch")
	}
	if r := e.run("", "status"); r.code != 1 {
		t.Errorf("the daemon was started for a refused launch")
	}

	// --help says how.
	h := e.run("", "launch", "-h")
	for _, want := range []string{"--allow", "--act", "--code", "--passwords", "--approve", "--policy", "a profile torii did not create", "already running"} {
		if !strings.Contains(h.stdout+h.stderr, want) {
			t.Errorf("launch -h lacks %q", want)
		}
	}

	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow", "example.com", "--profile", foreign}, "--allow applies only to a profile that torii launch created"},
		{[]string{"--permissive", "--profile", foreign}, "--permissive applies only to a profile that torii launch created"},
		{[]string{"--policy", filepath.Join(e.state, "none.json"), "--profile", foreign}, "no such file"},
	} {
		r := e.run("", append([]string{"launch", "--browser", exe, "--no-wait"}, c.args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("launch %v: %d %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Fatal("a browser was started for a refused launch")
	}
	if _, err := os.Stat(filepath.Join(foreign, launcher.MarkerFile)); err == nil {
		t.Error("a foreign profile was marked")
	}
	prof := filepath.Join(e.state, "managed")
	r := e.run("", "launch", "--browser", exe, "--no-wait", "--profile", prof, "--allow", "127.0.0.1:8080", "--act", "--approve", "submit=deny")
	if r.code != 0 {
		t.Fatalf("launch: %d %s", r.code, r.stderr)
	}
	t.Cleanup(e.shutdown)
	if !strings.Contains(r.stderr, "launch policy for this profile: 1 origin(s) allowed (127.0.0.1:8080), act mode on for 1") {
		t.Errorf("stderr: %s", r.stderr)
	}
	var lines []string
	for deadline := time.Now().Add(10 * time.Second); ; {
		if b, err := os.ReadFile(argsFile); err == nil {
			lines = strings.Split(strings.TrimSpace(string(b)), "\n")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fake browser never started")
		}
		time.Sleep(50 * time.Millisecond) // another process's file: polled, bounded
	}
	if pid, _ := strconv.Atoi(lines[0]); pid > 0 {
		t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	}
	start := lines[len(lines)-1]
	frag, err := url.ParseQuery(start[strings.Index(start, "#")+1:])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.RawURLEncoding.DecodeString(frag.Get("launch"))
	if err != nil {
		t.Fatalf("launch parameter %q: %v", frag.Get("launch"), err)
	}
	if string(raw) != `{"version":1,"rules":[{"pattern":"127.0.0.1:8080","act":true}],"actMode":false,"approvals":{"submit":"deny"}}` {
		t.Errorf("policy sent: %s", raw)
	}
	if frag.Get("policy") != "" {
		t.Errorf("permissive sent too: %q", start)
	}
	if _, err := os.Stat(filepath.Join(prof, launcher.MarkerFile)); err != nil {
		t.Errorf("profile not marked: %v", err)
	}
}

// TestApprovalKindsMatchExtension keeps the CLI's approval kinds equal to the extension's
// APPROVAL_KINDS (extension/src/policy/policy.ts), which normalizes what the CLI sends.
func TestApprovalKindsMatchExtension(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "extension", "src", "policy", "policy.ts"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	i := strings.Index(s, "APPROVAL_KINDS = [")
	if i < 0 {
		t.Fatal("APPROVAL_KINDS not found in policy.ts")
	}
	list := s[i+len("APPROVAL_KINDS = [") : i+strings.Index(s[i:], "]")]
	var ts []string
	for _, x := range strings.Split(list, ",") {
		if x = strings.Trim(strings.TrimSpace(x), `"`); x != "" {
			ts = append(ts, x)
		}
	}
	if strings.Join(ts, ",") != strings.Join(approvalKinds, ",") {
		t.Errorf("extension %v, CLI %v", ts, approvalKinds)
	}
}
