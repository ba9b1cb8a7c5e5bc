package cli

// What a headless launch leaves for a person to answer, when no person can (SECURITY I-80): the
// extension of a browser `torii launch` started headless refuses at once, with
// approval_unanswerable, every call its policy says to ask about. `launch` prints which kinds those
// are, and `status` repeats it, so the person can answer them in the launch policy instead.

import (
	"fmt"
	"strings"
)

// askReport is the approval kinds a headless launch's policy leaves at ask.
type askReport struct {
	// known: the policy was given at this launch. Otherwise the profile keeps the policy it had,
	// which the CLI cannot read.
	known bool
	// kinds: "submit", or "submit (on example.com)" when only some origins' rules ask.
	kinds []string
}

// headlessAsks reads the launch policy as the extension applies it (approvalChoice: the rule's own
// choice, else the policy's, else ask).
func headlessAsks(pol *launchPolicy, permissive bool) *askReport {
	if permissive {
		return &askReport{known: true} // --permissive allows every kind
	}
	if pol == nil {
		return &askReport{}
	}
	r := &askReport{known: true}
	for _, k := range approvalKinds {
		top := pol.Approvals[k]
		if top == "" {
			top = "ask"
		}
		var asking, answered []string
		for _, rule := range pol.Rules {
			c := rule.Approvals[k]
			if c == "" {
				c = top
			}
			if c == "ask" {
				asking = append(asking, rule.Pattern)
			} else {
				answered = append(answered, rule.Pattern)
			}
		}
		switch {
		case len(pol.Rules) == 0 && top == "ask", len(asking) > 0 && len(answered) == 0:
			r.kinds = append(r.kinds, k)
		case len(asking) > 0:
			r.kinds = append(r.kinds, fmt.Sprintf("%s (on %s)", k, strings.Join(asking, ", ")))
		}
	}
	return r
}

// line is the one line `launch` prints and `status` repeats.
func (r *askReport) line() string {
	const how = "set them with --approve KIND=allow|deny or \"approvals\" in --policy FILE"
	switch {
	case !r.known:
		return "headless: no one can answer an approval here; calls the profile's policy asks about fail at once with approval_unanswerable (" + how + ")"
	case len(r.kinds) == 0:
		return "headless: the launch policy answers every approval kind (none left at ask)"
	}
	return "headless: no one can answer an approval here; left at ask, so failing at once with approval_unanswerable: " + strings.Join(r.kinds, ", ") + " (" + how + ")"
}
