package shim

import (
	"errors"
	"fmt"
	"os"

	"github.com/drover-io/drover/plugins/drivers"
)

// ExitResult converts e to the driver SDK's value.
func (e *ExitStatus) ExitResult() *drivers.ExitResult {
	return &drivers.ExitResult{ExitCode: e.ExitCode, Signal: e.Signal, OOMKilled: e.OOMKilled}
}

// Cleanup removes the shim's state dir and socket, and an isolated task's
// cgroup if still there, once the shim has exited (a driver's DestroyTask,
// after the exit was consumed). It fails while the shim runs.
func (h *Handle) Cleanup() error {
	if processAlive(h.st.ShimPID, h.st.ShimStartTicks, h.st.BootID) {
		return fmt.Errorf("clean up shim pid %d: it is still running", h.st.ShimPID)
	}
	errSock := os.Remove(h.st.SocketPath)
	if errors.Is(errSock, os.ErrNotExist) {
		errSock = nil
	}
	var errCg error
	if h.st.Cgroup != nil && (h.st.BootID == "" || h.st.BootID == bootID()) {
		errCg = destroyCgroup(h.st.Cgroup)
	}
	if err := errors.Join(errSock, errCg, os.RemoveAll(h.st.StateDir)); err != nil {
		return fmt.Errorf("clean up shim state: %w", err)
	}
	return nil
}
