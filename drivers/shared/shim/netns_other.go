//go:build !linux

package shim

import (
	"errors"
	"os/exec"
)

// startIn starts cmd; network namespaces exist only on Linux.
func startIn(netns string, cmd *exec.Cmd) error {
	if netns != "" {
		return errors.New("network namespaces are only supported on Linux")
	}
	return cmd.Start()
}
