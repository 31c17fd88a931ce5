package httpapi

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/drover-io/drover/structs"
)

// apiMigrate is the migrate block as Nomad's API sends it (durations in
// nanoseconds); unset fields are nil.
type apiMigrate struct {
	MaxParallel     *int
	HealthCheck     *string
	MinHealthyTime  *time.Duration
	HealthyDeadline *time.Duration
}

// migrateStrategies sets each group's migrate strategy of a service job:
// Nomad's defaults (structs.DefaultMigrateStrategy) overlaid with the
// job's migrate block, then the group's. Other job types do not migrate
// (their allocations are stopped when a drain needs them gone): a migrate
// block there is ignored with a warning.
func (c *converter) migrateStrategies(jobMigrate json.RawMessage, groups map[string]json.RawMessage, out *structs.Job, jobType string) {
	if jobType != structs.JobTypeService {
		if !isUnsetJSON(jobMigrate) {
			c.warnings = append(c.warnings, fmt.Sprintf("job: the migrate block applies to service jobs only and was ignored for this %s job", jobType))
		}
		return
	}
	base := structs.DefaultMigrateStrategy()
	c.mergeMigrate("job", base, jobMigrate)
	for _, tg := range out.TaskGroups {
		m := *base
		c.mergeMigrate(fmt.Sprintf("group %q", tg.Name), &m, groups[tg.Name])
		tg.Migrate = &m
	}
}

// mergeMigrate overlays the set fields of raw on m, checking them.
func (c *converter) mergeMigrate(where string, m *structs.MigrateStrategy, raw json.RawMessage) {
	if isUnsetJSON(raw) {
		return
	}
	var in apiMigrate
	if err := json.Unmarshal(raw, &in); err != nil {
		c.errorf("%s: migrate block: %v", where, err)
		return
	}
	if in.MaxParallel != nil {
		m.MaxParallel = *in.MaxParallel
	}
	if in.HealthCheck != nil {
		m.HealthCheck = *in.HealthCheck
	}
	if in.MinHealthyTime != nil {
		m.MinHealthyTime = *in.MinHealthyTime
	}
	if in.HealthyDeadline != nil {
		m.HealthyDeadline = *in.HealthyDeadline
	}
	switch {
	case m.MaxParallel < 0:
		c.errorf("%s: migrate max_parallel is %d: it must not be negative", where, m.MaxParallel)
	case m.HealthCheck != "checks" && m.HealthCheck != "task_states":
		c.errorf("%s: migrate health_check %q is invalid: use \"checks\" or \"task_states\"", where, m.HealthCheck)
	case m.MinHealthyTime < 0 || m.HealthyDeadline < 0:
		c.errorf("%s: migrate min_healthy_time and healthy_deadline must not be negative", where)
	case m.HealthyDeadline > 0 && m.MinHealthyTime >= m.HealthyDeadline:
		c.errorf("%s: migrate min_healthy_time (%v) must be shorter than healthy_deadline (%v)", where, m.MinHealthyTime, m.HealthyDeadline)
	}
}
