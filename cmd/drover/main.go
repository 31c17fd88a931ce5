// Command drover is the drover binary: server, node agent, CLI and plugins
// in one. Everything it does is in package command.
package main

import (
	"os"

	"github.com/drover-io/drover/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:], os.Stdout, os.Stderr))
}
