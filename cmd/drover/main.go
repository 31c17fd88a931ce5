package main

import (
	"os"

	"github.com/drover-io/drover/command"
)

func main() {
	os.Exit(command.Run(os.Args[1:], os.Stdout, os.Stderr))
}
