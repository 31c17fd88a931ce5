//go:build !unix

package plugins

import "os/exec"

// ownProcessGroup does nothing where there are no process groups.
func ownProcessGroup(*exec.Cmd) {}
