package taskrunner

import (
	"fmt"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// Reasons the restart tracker gives.
const (
	ReasonWithinPolicy   = "Restart within policy"
	ReasonNoRestarts     = "Policy allows no restarts"
	ReasonUnrecoverable  = "Error was unrecoverable"
	ReasonBatchSucceeded = "Restart unnecessary as task terminated successfully"
)

// RestartDecision is what to do after a task ended or failed to start.
type RestartDecision struct {
	// Restart is true when the task should start again after Delay.
	Restart bool
	Delay   time.Duration
	// Reason explains the decision; it becomes the event's RestartReason.
	Reason string
	// Failed is true when the task will not restart because it failed.
	Failed bool
}

// RestartTracker decides whether a task restarts, following its restart
// policy. It is a pure state machine: no clock, no I/O; the caller passes
// the current time. It is not safe for concurrent use: the TaskRunner's
// run loop owns it.
type RestartTracker struct {
	policy structs.RestartPolicy
	// successEnds: a successful exit ends the task instead of counting
	// against the policy.
	successEnds bool
	// jitter, when set, returns the extra delay added to policy.Delay.
	jitter func(time.Duration) time.Duration

	count       int       // restarts within the current interval
	windowStart time.Time // start of the current interval
}

// NewRestartTracker returns a tracker for policy (nil: the job type's
// default). jobType decides whether a successful exit needs a restart
// (service, system) or ends the task (batch).
func NewRestartTracker(policy *structs.RestartPolicy, jobType string) *RestartTracker {
	return NewTaskRestartTracker(policy, jobType, nil)
}

// NewTaskRestartTracker is NewRestartTracker for a task with lifecycle lc
// (nil: a main task). A successful exit ends a batch task and every
// non-sidecar lifecycle task (prestart, poststart, poststop), whatever the
// job type; sidecars and the main tasks of service and system jobs are
// restarted.
func NewTaskRestartTracker(policy *structs.RestartPolicy, jobType string, lc *structs.TaskLifecycle) *RestartTracker {
	if policy == nil {
		policy = structs.DefaultRestartPolicy(jobType)
	}
	successEnds := jobType == structs.JobTypeBatch || jobType == structs.JobTypeSysBatch
	if lc != nil && lc.Hook != "" {
		successEnds = !lc.Sidecar || lc.Hook == structs.TaskLifecycleHookPoststop
	}
	return &RestartTracker{policy: *policy, successEnds: successEnds}
}

// SetJitter sets a function returning extra delay for a base delay, to
// spread restarts; the default adds none.
func (r *RestartTracker) SetJitter(f func(time.Duration) time.Duration) { r.jitter = f }

// Count returns the number of restarts counted in the current interval.
func (r *RestartTracker) Count() int { return r.count }

// OnExit decides after the task exited with res at now.
func (r *RestartTracker) OnExit(now time.Time, res *drivers.ExitResult) RestartDecision {
	if r.successEnds && res != nil && res.Successful() {
		return RestartDecision{Reason: ReasonBatchSucceeded}
	}
	return r.failure(now)
}

// OnStartError decides after StartTask failed; unrecoverable errors are
// never restarted.
func (r *RestartTracker) OnStartError(now time.Time, recoverable bool) RestartDecision {
	if !recoverable {
		return RestartDecision{Reason: ReasonUnrecoverable, Failed: true}
	}
	return r.failure(now)
}

// failure counts a failure against the policy.
func (r *RestartTracker) failure(now time.Time) RestartDecision {
	p := r.policy
	if p.Attempts == 0 && p.Mode == structs.RestartPolicyModeFail {
		return RestartDecision{Reason: ReasonNoRestarts, Failed: true}
	}
	if r.windowStart.IsZero() || (p.Interval > 0 && !now.Before(r.windowStart.Add(p.Interval))) {
		r.windowStart = now
		r.count = 0
	}
	r.count++
	if r.count <= p.Attempts {
		return RestartDecision{Restart: true, Delay: r.delay(p.Delay), Reason: ReasonWithinPolicy}
	}
	exceeded := fmt.Sprintf("Exceeded allowed attempts %d in interval %v and mode is %q", p.Attempts, p.Interval, p.Mode)
	if p.Mode == structs.RestartPolicyModeDelay {
		// Wait for the interval to end; the next failure starts a new one.
		wait := r.windowStart.Add(p.Interval).Sub(now)
		if wait < p.Delay {
			wait = p.Delay
		}
		return RestartDecision{Restart: true, Delay: r.delay(wait), Reason: exceeded}
	}
	return RestartDecision{Reason: exceeded, Failed: true}
}

func (r *RestartTracker) delay(base time.Duration) time.Duration {
	if r.jitter == nil {
		return base
	}
	return base + r.jitter(base)
}
