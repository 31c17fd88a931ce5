package taskrunner

import (
	"testing"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

func TestRestartTracker(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := &drivers.ExitResult{ExitCode: 1}
	ok := &drivers.ExitResult{}
	type step struct {
		at       time.Duration // since t0
		res      *drivers.ExitResult
		startErr bool // a start error instead of an exit
		recov    bool
		want     RestartDecision
	}
	failPolicy := &structs.RestartPolicy{Attempts: 2, Interval: 30 * time.Minute, Delay: 15 * time.Second, Mode: structs.RestartPolicyModeFail}
	delayPolicy := &structs.RestartPolicy{Attempts: 1, Interval: time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeDelay}
	exceededFail := `Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"`
	tests := []struct {
		name    string
		policy  *structs.RestartPolicy
		jobType string
		steps   []step
	}{
		{"batch success does not restart", nil, structs.JobTypeBatch, []step{
			{0, ok, false, false, RestartDecision{Reason: ReasonBatchSucceeded}},
		}},
		{"service success restarts", failPolicy, structs.JobTypeService, []step{
			{0, ok, false, false, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
		}},
		{"mode fail exhausts", failPolicy, structs.JobTypeService, []step{
			{0, fail, false, false, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
			{time.Minute, fail, false, false, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
			{2 * time.Minute, fail, false, false, RestartDecision{Reason: exceededFail, Failed: true}},
		}},
		{"interval resets the count", failPolicy, structs.JobTypeService, []step{
			{0, fail, false, false, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
			{time.Minute, fail, false, false, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
			{31 * time.Minute, fail, false, false, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
		}},
		{"mode delay waits for the interval end", delayPolicy, structs.JobTypeService, []step{
			{0, fail, false, false, RestartDecision{Restart: true, Delay: time.Second, Reason: ReasonWithinPolicy}},
			{10 * time.Second, fail, false, false, RestartDecision{Restart: true, Delay: 50 * time.Second,
				Reason: `Exceeded allowed attempts 1 in interval 1m0s and mode is "delay"`}},
			{61 * time.Second, fail, false, false, RestartDecision{Restart: true, Delay: time.Second, Reason: ReasonWithinPolicy}},
		}},
		{"no attempts allowed", &structs.RestartPolicy{Mode: structs.RestartPolicyModeFail, Interval: time.Minute}, structs.JobTypeService, []step{
			{0, fail, false, false, RestartDecision{Reason: ReasonNoRestarts, Failed: true}},
		}},
		{"unrecoverable start error", failPolicy, structs.JobTypeService, []step{
			{0, nil, true, false, RestartDecision{Reason: ReasonUnrecoverable, Failed: true}},
		}},
		{"recoverable start error counts", failPolicy, structs.JobTypeService, []step{
			{0, nil, true, true, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
			{time.Second, nil, true, true, RestartDecision{Restart: true, Delay: 15 * time.Second, Reason: ReasonWithinPolicy}},
			{2 * time.Second, nil, true, true, RestartDecision{Reason: exceededFail, Failed: true}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rt := NewRestartTracker(tc.policy, tc.jobType)
			for i, s := range tc.steps {
				var got RestartDecision
				if s.startErr {
					got = rt.OnStartError(t0.Add(s.at), s.recov)
				} else {
					got = rt.OnExit(t0.Add(s.at), s.res)
				}
				if got != s.want {
					t.Errorf("step %d: got %+v, want %+v", i, got, s.want)
				}
			}
		})
	}
}

func TestRestartTrackerJitter(t *testing.T) {
	rt := NewRestartTracker(&structs.RestartPolicy{Attempts: 1, Interval: time.Hour, Delay: 10 * time.Second, Mode: structs.RestartPolicyModeFail}, structs.JobTypeService)
	rt.SetJitter(func(d time.Duration) time.Duration { return d / 4 })
	if got := rt.OnExit(time.Unix(0, 0), &drivers.ExitResult{ExitCode: 1}); got.Delay != 12500*time.Millisecond {
		t.Errorf("delay = %v", got.Delay)
	}
}

// A task without a restart policy gets Nomad's default for its job type:
// service 2 attempts in 30m, batch 3 in 24h, both 15s apart, mode fail.
func TestRestartTrackerDefaults(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := &drivers.ExitResult{ExitCode: 1}
	tests := []struct {
		jobType  string
		attempts int
		exceeded string
	}{
		{structs.JobTypeService, 2, `Exceeded allowed attempts 2 in interval 30m0s and mode is "fail"`},
		{structs.JobTypeBatch, 3, `Exceeded allowed attempts 3 in interval 24h0m0s and mode is "fail"`},
	}
	for _, tc := range tests {
		t.Run(tc.jobType, func(t *testing.T) {
			rt := NewTaskRestartTracker(nil, tc.jobType, nil)
			for i := range tc.attempts {
				d := rt.OnExit(t0.Add(time.Duration(i)*time.Minute), fail)
				if !d.Restart || d.Delay != 15*time.Second || d.Reason != ReasonWithinPolicy {
					t.Fatalf("failure %d: %+v", i+1, d)
				}
			}
			d := rt.OnExit(t0.Add(time.Hour/2-time.Second), fail)
			if d.Restart || !d.Failed || d.Reason != tc.exceeded {
				t.Errorf("failure %d: %+v, want fail: %s", tc.attempts+1, d, tc.exceeded)
			}
		})
	}
}
