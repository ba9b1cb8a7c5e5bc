// Command torii-team-bench is `make bench-team` (internal/teambench): team
// mode under load beside the one-machine daemon, measured from outside. It
// is not shipped.
package main

import (
	"os"

	"github.com/torii-browser/torii/internal/teambench"
)

func main() { os.Exit(teambench.Main()) }
