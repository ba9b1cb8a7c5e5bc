// Command torii-abuse-bench is `make bench-abuse` (internal/abusebench): the
// daemon under floods, measured from outside. It is not shipped.
package main

import (
	"os"

	"github.com/torii-browser/torii/internal/abusebench"
)

func main() { os.Exit(abusebench.Main()) }
