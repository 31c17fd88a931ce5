package httpapi

import (
	"fmt"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// updateStrategies converts the job's and groups' update blocks, as
// Nomad's API canonicalizes them:
//
//   - service jobs: the job-level strategy is Nomad's default
//     (structs.DefaultUpdateStrategy: max_parallel 1, min_healthy_time 10s,
//     healthy_deadline 5m, progress_deadline 10m, health_check "checks")
//     overlaid with the job's update block, and every group inherits it,
//     overlaid with its own block. A service job without any update block
//     therefore still rolls one allocation at a time, each waiting for the
//     client to report it healthy; max_parallel = 0 replaces all at once.
//   - batch and system jobs: no rolling updates; an update block is
//     ignored with a warning.
//
// Canaries: canary = N places N allocations of the new version beside the
// old ones, which are replaced once the deployment is promoted (by hand,
// or auto_promote); auto_promote without canaries is an error.
func (c *converter) updateStrategies(in *api.Job, out *structs.Job, jobType string) {
	if jobType != structs.JobTypeService {
		if in.Update != nil {
			c.warnings = append(c.warnings, fmt.Sprintf("job: the update block applies to service jobs only and was ignored for this %s job", jobType))
		}
		for _, tg := range in.TaskGroups {
			if tg != nil && tg.Update != nil {
				c.warnings = append(c.warnings, fmt.Sprintf("group %q: the update block applies to service jobs only and was ignored", deref(tg.Name)))
			}
		}
		return
	}
	out.Update = mergeUpdate(structs.DefaultUpdateStrategy(), in.Update)
	c.checkUpdate("job", out.Update, in.Update)
	groups := make(map[string]*api.TaskGroup, len(in.TaskGroups))
	for _, tg := range in.TaskGroups {
		if tg != nil {
			groups[deref(tg.Name)] = tg
		}
	}
	for _, tg := range out.TaskGroups {
		var own *api.UpdateStrategy
		if g := groups[tg.Name]; g != nil {
			own = g.Update
		}
		tg.Update = mergeUpdate(out.Update.Copy(), own)
		c.checkUpdate(fmt.Sprintf("group %q", tg.Name), tg.Update, own)
	}
}

// mergeUpdate overlays the set fields of in on base.
func mergeUpdate(base *structs.UpdateStrategy, in *api.UpdateStrategy) *structs.UpdateStrategy {
	if in == nil {
		return base
	}
	if in.MaxParallel != nil {
		base.MaxParallel = *in.MaxParallel
	}
	if in.Canary != nil {
		base.Canary = *in.Canary
	}
	if in.Stagger != nil {
		base.Stagger = *in.Stagger
	}
	if in.HealthCheck != nil {
		base.HealthCheck = *in.HealthCheck
	}
	if in.MinHealthyTime != nil {
		base.MinHealthyTime = *in.MinHealthyTime
	}
	if in.HealthyDeadline != nil {
		base.HealthyDeadline = *in.HealthyDeadline
	}
	if in.ProgressDeadline != nil {
		base.ProgressDeadline = *in.ProgressDeadline
	}
	if in.AutoRevert != nil {
		base.AutoRevert = *in.AutoRevert
	}
	if in.AutoPromote != nil {
		base.AutoPromote = *in.AutoPromote
	}
	return base
}

// checkUpdate validates a merged strategy as Nomad does; own is the block
// written at this level (nil: inherited), whose canary setting warns.
func (c *converter) checkUpdate(where string, u *structs.UpdateStrategy, own *api.UpdateStrategy) {
	if u.MaxParallel < 0 {
		c.errorf("%s update: max_parallel %d must not be negative", where, u.MaxParallel)
	}
	switch u.HealthCheck {
	case structs.UpdateStrategyHealthCheckChecks, structs.UpdateStrategyHealthCheckTaskStates, structs.UpdateStrategyHealthCheckManual:
	default:
		c.errorf("%s update: health_check %q is invalid: use checks, task_states or manual", where, u.HealthCheck)
	}
	if u.MinHealthyTime < 0 || u.HealthyDeadline <= 0 {
		c.errorf("%s update: min_healthy_time must not be negative and healthy_deadline must be positive", where)
	}
	if u.HealthyDeadline > 0 && u.MinHealthyTime >= u.HealthyDeadline {
		c.errorf("%s update: min_healthy_time %s must be less than healthy_deadline %s", where, u.MinHealthyTime, u.HealthyDeadline)
	}
	if u.ProgressDeadline != 0 && u.HealthyDeadline >= u.ProgressDeadline {
		c.errorf("%s update: healthy_deadline %s must be less than progress_deadline %s", where, u.HealthyDeadline, u.ProgressDeadline)
	}
	if u.Canary < 0 {
		c.errorf("%s update: canary %d must not be negative", where, u.Canary)
	}
	if u.AutoPromote && u.Canary == 0 {
		c.errorf("%s update: auto_promote needs canary greater than zero", where)
	}
	if own != nil && own.Canary != nil && *own.Canary > 0 && u.MaxParallel == 0 {
		c.warnings = append(c.warnings, fmt.Sprintf("%s update: canary = %d has no effect with max_parallel = 0 (everything is replaced at once)", where, *own.Canary))
	}
}
