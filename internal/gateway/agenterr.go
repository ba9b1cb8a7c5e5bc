package gateway

import (
	"fmt"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/wire"
)

// CodeAgentNotInstalled is data.code of a session/new refused because the configured agent's
// command is not found; data.configKey names the config.json key to fix.
const CodeAgentNotInstalled = "agent_not_installed"

// AgentMissingError: a configured agent whose command is not on PATH (or not a file).
type AgentMissingError struct {
	Agent config.Agent // resolved: Command is filled from the preset
	Index int          // its position in config.json's "agents"
}

// ConfigKey is the key that sets the command: the preset's, unless the command is explicit.
func (e *AgentMissingError) ConfigKey() string {
	if e.Agent.Preset != "" && config.Presets[e.Agent.Preset] != nil && config.Presets[e.Agent.Preset][0] == e.Agent.Command {
		return fmt.Sprintf("agents[%d].preset", e.Index)
	}
	return fmt.Sprintf("agents[%d].command", e.Index)
}

// Detail is one line for `torii status` and the side panel.
func (e *AgentMissingError) Detail() string {
	cmdKey := fmt.Sprintf("agents[%d].command", e.Index)
	if key := e.ConfigKey(); key != cmdKey {
		return fmt.Sprintf("command %q (from %s %q) is not found on PATH; install it, or set %s in config.json to its full path", e.Agent.Command, key, e.Agent.Preset, cmdKey)
	}
	return fmt.Sprintf("command %q (%s) is not found on PATH; install it, or fix %s in config.json", e.Agent.Command, cmdKey, cmdKey)
}

func (e *AgentMissingError) Error() string {
	return fmt.Sprintf("agent %q is not installed: %s", e.Agent.Name, e.Detail())
}

func (e *AgentMissingError) rpc() *wire.Error {
	err := wire.Errorf(wire.CodeInvalidParams, "session/new: %s", e.Error())
	err.Data = map[string]string{"code": CodeAgentNotInstalled, "agent": e.Agent.Name, "configKey": e.ConfigKey()}
	return err
}
