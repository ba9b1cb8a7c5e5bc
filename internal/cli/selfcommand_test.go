package cli

import "testing"

// The npm launcher's TORII_SELF_COMMAND is what agents are told to run; without it
// the binary names itself.
func TestSelfCommandPrefersTheLaunchersCommand(t *testing.T) {
	t.Setenv(SelfCommandEnv, "npx -y @torii-browser/torii")
	if got := selfCommand(); got != "npx -y @torii-browser/torii" {
		t.Fatalf("selfCommand() = %q with %s set", got, SelfCommandEnv)
	}
	t.Setenv(SelfCommandEnv, "  ")
	if got := selfCommand(); got == "" || got == "  " {
		t.Fatalf("selfCommand() = %q with a blank %s", got, SelfCommandEnv)
	}
}
