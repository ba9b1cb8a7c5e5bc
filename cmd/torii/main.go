// Command torii is the Torii daemon, gateway and CLI in one binary.
package main

import (
	"os"

	"github.com/torii-browser/torii/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}))
}
