package httpapi

import (
	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// reschedulePolicy returns a group's effective reschedule policy: the job
// type's default, overridden by the job's reschedule block, then by the
// group's. System and sysbatch jobs are never rescheduled: a block there
// is an error.
// where names the group in error messages.
func (c *converter) reschedulePolicy(where, jobType string, job, group *api.ReschedulePolicy) *structs.ReschedulePolicy {
	if jobType == structs.JobTypeSystem || jobType == structs.JobTypeSysBatch {
		if job != nil || group != nil {
			c.errorf("%s: reschedule block is not allowed in %s jobs", where, jobType)
		}
		return nil
	}
	out := structs.DefaultReschedulePolicy(jobType)
	if out == nil {
		out = &structs.ReschedulePolicy{}
	}
	mergeReschedule(out, job)
	mergeReschedule(out, group)
	c.validateReschedule(where+" reschedule", out)
	return out
}

// mergeReschedule overrides p's fields with the ones set in over.
func mergeReschedule(p *structs.ReschedulePolicy, over *api.ReschedulePolicy) {
	if over == nil {
		return
	}
	if over.Attempts != nil {
		p.Attempts = *over.Attempts
	}
	if over.Interval != nil {
		p.Interval = *over.Interval
	}
	if over.Delay != nil {
		p.Delay = *over.Delay
	}
	if over.DelayFunction != nil {
		p.DelayFunction = *over.DelayFunction
	}
	if over.MaxDelay != nil {
		p.MaxDelay = *over.MaxDelay
	}
	if over.Unlimited != nil {
		p.Unlimited = *over.Unlimited
	}
}

// validateReschedule checks an effective policy; errors name the API field
// and the job file argument.
func (c *converter) validateReschedule(where string, p *structs.ReschedulePolicy) {
	switch p.DelayFunction {
	case structs.DelayFunctionConstant, structs.DelayFunctionExponential, structs.DelayFunctionFibonacci:
	default:
		c.errorf("%s: DelayFunction (delay_function) %q must be one of %q, %q or %q", where, p.DelayFunction,
			structs.DelayFunctionConstant, structs.DelayFunctionExponential, structs.DelayFunctionFibonacci)
	}
	if p.Attempts < 0 {
		c.errorf("%s: Attempts (attempts) must not be negative, got %d", where, p.Attempts)
	}
	for _, d := range []struct {
		field, arg string
		v          int64
	}{{"Interval", "interval", int64(p.Interval)}, {"Delay", "delay", int64(p.Delay)}, {"MaxDelay", "max_delay", int64(p.MaxDelay)}} {
		if d.v < 0 {
			c.errorf("%s: %s (%s) must not be negative", where, d.field, d.arg)
		}
	}
	if !p.Unlimited && p.Attempts > 0 && p.Interval <= 0 {
		c.errorf("%s: Interval (interval) must be positive when Attempts (attempts) is %d", where, p.Attempts)
	}
	if p.Enabled() && p.Delay <= 0 {
		c.errorf("%s: Delay (delay) must be positive", where)
	}
	if p.DelayFunction != structs.DelayFunctionConstant && p.MaxDelay > 0 && p.MaxDelay < p.Delay {
		c.errorf("%s: MaxDelay (max_delay) %s must not be less than Delay (delay) %s", where, p.MaxDelay, p.Delay)
	}
	if p.Unlimited && p.DelayFunction != structs.DelayFunctionConstant && p.MaxDelay <= 0 {
		c.errorf("%s: MaxDelay (max_delay) must be set with an unlimited %s policy", where, p.DelayFunction)
	}
}
