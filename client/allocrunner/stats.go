package allocrunner

import "github.com/drover-io/drover/plugins/drivers"

// TaskStats returns the latest resource usage sample of each task, by task
// name; a task that does not run (or has no sample yet) maps to nil. It
// calls no driver: the task runners' stats hooks keep the samples.
func (ar *AllocRunner) TaskStats() map[string]*drivers.TaskResourceUsage {
	out := make(map[string]*drivers.TaskResourceUsage, len(ar.tasks))
	for name, tr := range ar.tasks {
		out[name] = tr.LatestStats()
	}
	return out
}
