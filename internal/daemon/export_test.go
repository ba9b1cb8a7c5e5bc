package daemon

import "time"

// SetSessionLimits shortens /mcp session lifetimes and caps for tests
// outside the package (zero values keep the defaults).
func SetSessionLimits(o *Options, mcpIdle time.Duration, perToken, requests int) {
	o.sessions.mcpIdle, o.sessions.mcpPerToken, o.sessions.mcpRequests = mcpIdle, perToken, requests
}

// SetLabelLimits shortens the shared cli sessions' lifetime and cap.
func SetLabelLimits(o *Options, idle time.Duration, maxSessions int) {
	o.sessions.labelIdle, o.sessions.maxLabels = idle, maxSessions
}
