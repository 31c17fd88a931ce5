//go:build unix

package plugins

import (
	"os/exec"
	"syscall"
)

// ownProcessGroup puts the plugin in a process group of its own.
func ownProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}
