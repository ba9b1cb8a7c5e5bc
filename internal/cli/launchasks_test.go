package cli

import (
	"strings"
	"testing"
)

// SECURITY I-80: what a headless launch prints as left at ask is what the extension will refuse
// at once (its approvalChoice: the rule's choice, else the policy's, else ask).
func TestHeadlessAsks(t *testing.T) {
	t.Parallel()
	allow := "allow"
	cases := []struct {
		name string
		pol  *launchPolicy
		perm bool
		want string
	}{
		{"permissive answers everything", nil, true, "none left at ask"},
		{"no policy: the profile's own, unknown here", nil, false, "calls the profile's policy asks about fail at once with approval_unanswerable"},
		{"default: every kind asks", &launchPolicy{Rules: []launchRule{{Pattern: "a.test"}}}, false,
			"approval_unanswerable: submit, destructive_click, new_origin, evaluate, upload, download (set them"},
		{"all answered at the top", &launchPolicy{Approvals: map[string]string{"submit": allow, "destructive_click": "deny", "new_origin": "deny", "evaluate": "deny", "upload": "deny", "download": allow}}, false,
			"none left at ask"},
		{"a rule answers for its origin only", &launchPolicy{
			Rules:     []launchRule{{Pattern: "a.test", Approvals: map[string]string{"submit": allow}}, {Pattern: "b.test"}},
			Approvals: map[string]string{"destructive_click": "deny", "new_origin": "deny", "evaluate": "deny", "upload": "deny", "download": "deny"},
		}, false, "approval_unanswerable: submit (on b.test) (set them"},
		{"a rule asks where the top answers", &launchPolicy{
			Rules:     []launchRule{{Pattern: "a.test", Approvals: map[string]string{"submit": "ask"}}, {Pattern: "b.test"}},
			Approvals: map[string]string{"submit": allow, "destructive_click": "deny", "new_origin": "deny", "evaluate": "deny", "upload": "deny", "download": "deny"},
		}, false, "approval_unanswerable: submit (on a.test) (set them"},
	}
	for _, c := range cases {
		got := headlessAsks(c.pol, c.perm).line()
		if !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got  %s\n want …%s…", c.name, got, c.want)
		}
		if !strings.HasPrefix(got, "headless: ") {
			t.Errorf("%s: %q does not say it is about a headless browser", c.name, got)
		}
	}
}

// Bad approval values get a typed PolicyError naming the field, with the nearest valid value.
func TestApprovalDidYouMean(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, field, want string }{
		{`{"approvals":{"sumbit":"allow"}}`, "approvals.sumbit", `unknown approval kind "sumbit" (did you mean "submit"?)`},
		{`{"approvals":{"download":"alow"}}`, "approvals.download", `not "alow" (did you mean "allow"?)`},
		{`{"rules":[{"pattern":"a.test","approvals":{"evaluate":"nope"}}]}`, "rules[0].approvals.evaluate", `must be allow, ask or deny, not "nope"`},
		{`{"approvalTimeoutMs":60000}`, "approvalTimeoutMs", "from 1000 to 45000"},
		{`{"actmode":true}`, "actmode", `unknown field (did you mean "actMode"?)`},
		{`{"rules":[{"pattern":"a.test","evalExpresion":true}]}`, "rules[0].evalExpresion", `unknown field (did you mean "evalExpression"?)`},
	} {
		_, err := parsePolicy([]byte(c.src))
		pe, ok := err.(*PolicyError)
		if !ok {
			t.Fatalf("%s: got %v, want a *PolicyError", c.src, err)
		}
		if pe.Field != c.field || !strings.Contains(pe.Msg, c.want) {
			t.Errorf("%s: got field %q msg %q; want field %q msg containing %q", c.src, pe.Field, pe.Msg, c.field, c.want)
		}
	}
	f := launchPolicyFlags{allow: repeated{"a.test"}, approve: repeated{"destructiv_click=deny"}}
	if _, err := f.build(false); err == nil || !strings.Contains(err.Error(), `(did you mean "destructive_click"?)`) {
		t.Errorf("--approve destructiv_click=deny: %v", err)
	}
}
