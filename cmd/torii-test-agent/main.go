// Command torii-test-agent is the deterministic scripted ACP agent the
// gateway tests spawn (internal/agents/scripted). It is not shipped.
package main

import "github.com/torii-browser/torii/internal/agents/scripted"

func main() { scripted.Main() }
