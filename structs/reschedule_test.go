package structs

import (
	"testing"
	"time"
)

func tracker(delays ...time.Duration) *RescheduleTracker {
	t := &RescheduleTracker{}
	for _, d := range delays {
		t.Events = append(t.Events, &RescheduleEvent{Delay: d})
	}
	return t
}

func TestReschedulePolicyNextDelay(t *testing.T) {
	const s = time.Second
	cases := []struct {
		name    string
		policy  *ReschedulePolicy
		tracker *RescheduleTracker
		want    time.Duration
	}{
		{"nil policy", nil, nil, 0},
		{"constant first", &ReschedulePolicy{Delay: 5 * s, DelayFunction: DelayFunctionConstant}, nil, 5 * s},
		{"constant later", &ReschedulePolicy{Delay: 5 * s, DelayFunction: DelayFunctionConstant}, tracker(5*s, 5*s), 5 * s},
		{"exponential first", &ReschedulePolicy{Delay: 30 * s, DelayFunction: DelayFunctionExponential}, nil, 30 * s},
		{"exponential second", &ReschedulePolicy{Delay: 30 * s, DelayFunction: DelayFunctionExponential}, tracker(30 * s), 60 * s},
		{"exponential third", &ReschedulePolicy{Delay: 30 * s, DelayFunction: DelayFunctionExponential}, tracker(30*s, 60*s), 120 * s},
		{"exponential capped", &ReschedulePolicy{Delay: 30 * s, DelayFunction: DelayFunctionExponential, MaxDelay: 100 * s}, tracker(30*s, 60*s), 100 * s},
		{"fibonacci first", &ReschedulePolicy{Delay: 10 * s, DelayFunction: DelayFunctionFibonacci}, nil, 10 * s},
		{"fibonacci second", &ReschedulePolicy{Delay: 10 * s, DelayFunction: DelayFunctionFibonacci}, tracker(10 * s), 10 * s},
		{"fibonacci third", &ReschedulePolicy{Delay: 10 * s, DelayFunction: DelayFunctionFibonacci}, tracker(10*s, 10*s), 20 * s},
		{"fibonacci fifth", &ReschedulePolicy{Delay: 10 * s, DelayFunction: DelayFunctionFibonacci}, tracker(10*s, 10*s, 20*s, 30*s), 50 * s},
		{"fibonacci capped", &ReschedulePolicy{Delay: 10 * s, DelayFunction: DelayFunctionFibonacci, MaxDelay: 40 * s}, tracker(10*s, 10*s, 20*s, 30*s), 40 * s},
		{"default service", DefaultReschedulePolicy(JobTypeService), tracker(30 * s), time.Minute},
		{"default service capped", DefaultReschedulePolicy(JobTypeService), tracker(45 * time.Minute), time.Hour},
		{"default batch", DefaultReschedulePolicy(JobTypeBatch), tracker(5 * s), 5 * s},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.policy.NextDelay(c.tracker); got != c.want {
				t.Errorf("NextDelay = %s, want %s", got, c.want)
			}
		})
	}
}

func TestReschedulePolicyEligible(t *testing.T) {
	now := time.Unix(1700000000, 0)
	at := func(ago time.Duration) *RescheduleEvent {
		return &RescheduleEvent{RescheduleTime: now.Add(-ago).UnixNano()}
	}
	limited := &ReschedulePolicy{Attempts: 2, Interval: time.Hour, Delay: time.Second}
	cases := []struct {
		name    string
		policy  *ReschedulePolicy
		tracker *RescheduleTracker
		want    bool
	}{
		{"nil policy", nil, nil, false},
		{"zero attempts", &ReschedulePolicy{Interval: time.Hour}, nil, false},
		{"system default", DefaultReschedulePolicy(JobTypeSystem), nil, false},
		{"unlimited", &ReschedulePolicy{Unlimited: true}, &RescheduleTracker{Events: []*RescheduleEvent{at(0), at(0), at(0)}}, true},
		{"first attempt", limited, nil, true},
		{"one used", limited, &RescheduleTracker{Events: []*RescheduleEvent{at(time.Minute)}}, true},
		{"all used", limited, &RescheduleTracker{Events: []*RescheduleEvent{at(2 * time.Minute), at(time.Minute)}}, false},
		{"old attempts expire", limited, &RescheduleTracker{Events: []*RescheduleEvent{at(3 * time.Hour), at(2 * time.Hour), at(time.Minute)}}, true},
		{"batch default used", DefaultReschedulePolicy(JobTypeBatch), &RescheduleTracker{Events: []*RescheduleEvent{at(time.Hour)}}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.policy.RescheduleEligible(c.tracker, now.UnixNano()); got != c.want {
				t.Errorf("RescheduleEligible = %v, want %v", got, c.want)
			}
		})
	}
}

func TestAllocationNextRescheduleTime(t *testing.T) {
	failedAt := time.Unix(1700000000, 0)
	job := &Job{ID: "j", Type: JobTypeService, TaskGroups: []*TaskGroup{{Name: "g"}}}
	job.Canonicalize()
	a := &Allocation{Job: job, TaskGroup: "g", ClientStatus: AllocClientStatusFailed,
		TaskStates: map[string]*TaskState{"t": {State: TaskStateDead, Failed: true, FinishedAt: failedAt}}}
	got, ok := a.NextRescheduleTime(failedAt)
	if !ok || !got.Equal(failedAt.Add(30*time.Second)) {
		t.Fatalf("NextRescheduleTime = %v, %v; want failure + 30s", got, ok)
	}
	a.ClientStatus = AllocClientStatusComplete
	if _, ok := a.NextRescheduleTime(failedAt); ok {
		t.Fatal("a complete allocation is not rescheduled")
	}
}
