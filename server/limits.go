package server

import (
	"github.com/drover-io/drover/structs"
)

// checkJobCount refuses a job that asks for more allocations than limit:
// in one task group, or over all of them. Without it one job with
// Count = 1e9 kept a scheduler worker busy for half an hour.
func checkJobCount(job *structs.Job, limit int) error {
	total := 0
	for _, tg := range job.TaskGroups {
		if tg.Count > limit {
			return structs.Invalid("task group %q of job %q asks for count %d, more than this server's limit of %d "+
				"(server.job_max_count): lower the count, or split the job", tg.Name, job.ID, tg.Count, limit)
		}
		total += max(tg.Count, 0) // each is at most limit: no overflow
	}
	if total > limit {
		return structs.Invalid("job %q asks for %d allocations over its %d task groups, more than this server's limit of %d "+
			"(server.job_max_count): lower the counts, or split the job", job.ID, total, len(job.TaskGroups), limit)
	}
	return nil
}
