package taskrunner

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/drover-io/drover/structs"
)

var _ prestartHook = (*dispatchHook)(nil)

// dispatchHook writes a dispatched job's payload to the file its task's
// dispatch_payload block names, in the task's local/ directory, once,
// before the first start.
type dispatchHook struct{}

// Name returns "dispatch_payload".
func (*dispatchHook) Name() string { return "dispatch_payload" }

// Prestart writes the payload. The file name was checked not to leave
// local/ when the job was registered; the write goes through an os.Root
// of local/ all the same, so no link there leads it out.
func (*dispatchHook) Prestart(_ context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	dp := req.Task.DispatchPayload
	if dp == nil || req.Alloc == nil || req.Alloc.Job == nil || !req.Alloc.Job.Dispatched {
		return nil
	}
	if err := dp.Validate(); err != nil {
		return fmt.Errorf("task %q: %w", req.Task.Name, err)
	}
	root, err := os.OpenRoot(req.TaskDir.LocalDir)
	if err != nil {
		return fmt.Errorf("open local directory of task %q: %w", req.Task.Name, err)
	}
	defer root.Close()
	name := filepath.Clean(dp.File)
	if dir := filepath.Dir(name); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("write dispatch payload of task %q: %w", req.Task.Name, err)
		}
	}
	if err := root.WriteFile(name, req.Alloc.Job.Payload, 0o644); err != nil {
		return fmt.Errorf("write dispatch payload of task %q to local/%s: %w", req.Task.Name, name, err)
	}
	// Done only here: a task without a payload leaves no hook state.
	resp.Done = true
	return nil
}

// payloadFile is where dispatchHook writes a task's payload, for tests.
func payloadFile(localDir string, t *structs.Task) string {
	return filepath.Join(localDir, filepath.Clean(t.DispatchPayload.File))
}
