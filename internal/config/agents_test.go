package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestLoadAgents(t *testing.T) {
	p := testPaths(t)
	writeConfig(t, p, `{"agents":[{"name":"claude","preset":"claude-agent-acp"},{"name":"gem","preset":"gemini","env":{"K":"V"}},
		{"name":"mine","command":"my-agent","args":["--x"]}],"defaultAgent":"gem","relayLimit":3,"agentIdleTimeoutSec":30,
		"mcpServers":{"allow":["katashiro"],"pins":{"katashiro":["snapshot","click"]}}}`)
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r := c.ResolvedAgents()
	if r[0].Command != "claude-agent-acp" || r[1].Command != "gemini" || !slices.Equal(r[1].Args, []string{"--acp"}) ||
		r[1].Env["K"] != "V" || r[2].Command != "my-agent" || c.DefaultAgentName() != "gem" || c.RelayLimit != 3 ||
		c.MCPServers.Pins["katashiro"][1] != "click" {
		t.Fatalf("agents: %+v %+v", r, c)
	}
	// Unknown fields stay refused, also inside the new objects.
	for _, body := range []string{`{"agents":[{"name":"a","comand":"x"}]}`, `{"mcpServers":{"allowed":["x"]}}`} {
		writeConfig(t, p, body)
		var pe *ParseError
		if _, err := Load(p); !errors.As(err, &pe) || !strings.Contains(err.Error(), "unknown field") {
			t.Fatalf("%s: %v", body, err)
		}
	}
}

func TestValidateAgents(t *testing.T) {
	bad := []Config{
		{Agents: []Agent{{Name: "", Command: "x"}}},
		{Agents: []Agent{{Name: "a b", Command: "x"}}},
		{Agents: []Agent{{Name: "a", Command: "x"}, {Name: "a", Command: "y"}}},
		{Agents: []Agent{{Name: "a", Preset: "nope"}}},
		{Agents: []Agent{{Name: "a"}}},
		{Agents: []Agent{{Name: "a", Command: "x"}}, DefaultAgent: "b"},
		{RelayLimit: -1},
	}
	for i, c := range bad {
		c.Listen = DefaultListen
		if err := c.Validate(); !errors.Is(err, ErrBadAgent) {
			t.Errorf("case %d: %v", i, err)
		}
	}
	c := Default()
	if c.DefaultAgentName() != "" || len(c.ResolvedAgents()) != 0 || c.Validate() != nil {
		t.Fatal("no agents must stay valid")
	}
}
