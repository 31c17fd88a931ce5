package shim

import (
	"fmt"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/drover-io/drover/osthread"
)

// startIn starts cmd; with a netns path, from an OS thread that joined
// that network namespace, so that the process (and all it starts) lives
// there. The thread is never given back to the Go scheduler: it exits with
// its goroutine, so no other goroutine runs in the namespace.
func startIn(netns string, cmd *exec.Cmd) error {
	if netns == "" {
		return cmd.Start()
	}
	var err error
	osthread.Throwaway(func() {
		err = func() error {
			f, err := os.Open(netns)
			if err != nil {
				return fmt.Errorf("open network namespace: %w", err)
			}
			defer f.Close()
			if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("join network namespace %s: %w", netns, err)
			}
			return cmd.Start()
		}()
	})
	return err
}
