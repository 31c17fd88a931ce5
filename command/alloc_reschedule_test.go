package command

import (
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

// rescheduledFixture returns a failed allocation that replaced an earlier
// failed one and waits for its own follow-up evaluation.
func rescheduledFixture(policy *api.ReschedulePolicy) (*api.Allocation, *api.Evaluation) {
	a := fixtureAlloc()
	a.ClientStatus, a.ClientDescription = "failed", "Failed tasks"
	a.DesiredStatus, a.DesiredDescription = "run", ""
	a.TaskGroup = "web"
	a.Job.TaskGroups = []*api.TaskGroup{{Name: api.String("web"), ReschedulePolicy: policy}}
	a.PreviousAllocation = "0000aaaa-1111-2222-3333-444455556666"
	a.RescheduleTracker = &api.RescheduleTracker{Events: []*api.RescheduleEvent{
		{RescheduleTime: fixedNow.Add(-3 * time.Hour).UnixNano(), PrevAllocID: "ffff0000-1111", PrevNodeID: "n1", Delay: 30 * time.Second},
		{RescheduleTime: fixedNow.Add(-10 * time.Minute).UnixNano(), PrevAllocID: a.PreviousAllocation, PrevNodeID: "n2", Delay: time.Minute},
	}}
	a.FollowupEvalID = "eeee1111-2222-3333-4444-555566667777"
	return a, &api.Evaluation{ID: a.FollowupEvalID, Status: "pending", WaitUntil: fixedNow.Add(25 * time.Second)}
}

func TestGoldenAllocStatusRescheduled(t *testing.T) {
	limited := &api.ReschedulePolicy{Attempts: api.Int(3), Interval: api.Duration(time.Hour), Delay: api.Duration(30 * time.Second),
		DelayFunction: api.String("exponential"), Unlimited: api.Bool(false)}
	a, followup := rescheduledFixture(limited)
	golden(t, "alloc_status_rescheduled", formatAllocStatus(a, followup, fixedNow, false))

	unlimited := &api.ReschedulePolicy{Delay: api.Duration(30 * time.Second), DelayFunction: api.String("exponential"),
		MaxDelay: api.Duration(time.Hour), Unlimited: api.Bool(true)}
	a, _ = rescheduledFixture(unlimited)
	a.FollowupEvalID = ""
	a.NextAllocation = "9999bbbb-1111-2222-3333-444455556666"
	golden(t, "alloc_status_replaced", formatAllocStatus(a, nil, fixedNow, false))
}

func TestAllocStatusFetchesFollowupEval(t *testing.T) {
	f := newFakeAgent(t)
	limited := &api.ReschedulePolicy{Attempts: api.Int(3), Interval: api.Duration(time.Hour), Unlimited: api.Bool(false)}
	a, followup := rescheduledFixture(limited)
	f.json("GET /v1/allocations", []*api.AllocationListStub{{ID: a.ID}})
	f.json("GET /v1/allocation/"+a.ID, a)
	f.json("GET /v1/evaluation/"+followup.ID, followup)
	r := runCLI(t, f.srv.URL, nil, "alloc", "status", "1234")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	golden(t, "alloc_status_rescheduled", r.stdout)
}
