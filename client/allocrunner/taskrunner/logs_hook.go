package taskrunner

import (
	"context"
)

var _ prestartHook = (*logsHook)(nil)

// logsHook sets where the task's output goes:
// <alloc>/alloc/logs/<task>.stdout.0 and .stderr.0. Rotation is done by the
// driver (or its shim) within the task's log_config bounds.
type logsHook struct{}

// Name returns "logs".
func (*logsHook) Name() string { return "logs" }

// Prestart sets the log paths. It runs before every start (it does not
// report Done): the paths are part of its response, which a skipped hook
// does not give, and a restored runner has not kept them.
func (*logsHook) Prestart(ctx context.Context, req *PrestartRequest, resp *PrestartResponse) error {
	resp.StdoutPath, resp.StderrPath = req.AllocDir.LogPaths(req.Task.Name)
	return nil
}
