package stats

import "github.com/drover-io/drover/plugins/drivers"

// SumTasks returns the allocation's usage: the sum of its tasks' latest
// samples (nil ones are skipped), stamped with the latest timestamp; nil
// when no task has a sample. MemoryMaxUsage is summed too: each task's
// peak, which bounds the allocation's peak from above.
func SumTasks(tasks map[string]*drivers.TaskResourceUsage) *drivers.TaskResourceUsage {
	var out *drivers.TaskResourceUsage
	for _, u := range tasks {
		if u == nil {
			continue
		}
		if out == nil {
			out = &drivers.TaskResourceUsage{}
		}
		out.Timestamp = max(out.Timestamp, u.Timestamp)
		out.CPUPercent += u.CPUPercent
		out.CPUTotalTicks += u.CPUTotalTicks
		out.MemoryRSS += u.MemoryRSS
		out.MemoryCache += u.MemoryCache
		out.MemorySwap += u.MemorySwap
		out.MemoryMaxUsage += u.MemoryMaxUsage
	}
	return out
}
