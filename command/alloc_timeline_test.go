package command

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

func fixtureTimeline() *api.AllocTimeline {
	t0 := fixedNow.Add(-time.Minute)
	at := func(d time.Duration) int64 { return t0.Add(d).UnixNano() }
	return &api.AllocTimeline{AllocID: allocID, EvalID: "e1", Steps: []api.TimelineStep{
		{Name: "job_registered", Time: at(0)},
		{Name: "eval_enqueued", Time: at(800 * time.Microsecond)},
		{Name: "eval_dequeued", Time: at(900 * time.Microsecond)},
		{Name: "plan_submitted", Time: at(1500 * time.Microsecond)},
		{Name: "plan_applied", Time: at(2100 * time.Microsecond)},
		{Name: "alloc_received", Time: at(2600 * time.Microsecond)},
		{Name: "runner_started", Time: at(3 * time.Millisecond)},
		{Name: "hooks_done", Time: at(6 * time.Millisecond)},
		{Name: "driver_start", Time: at(6100 * time.Microsecond)},
		{Name: "task_running", Time: at(41 * time.Millisecond)},
		{Name: "status_sent", Time: at(41200 * time.Microsecond)},
		{Name: "running_applied", Time: at(42 * time.Millisecond)},
		{Name: "stop_received", Time: at(20 * time.Second)},
		{Name: "ended", Time: at(20*time.Second + 90*time.Millisecond)},
		{Name: "ended_applied", Time: at(20*time.Second + 91*time.Millisecond)},
	}}
}

func TestFormatAllocTimeline(t *testing.T) {
	golden(t, "alloc_timeline", formatAllocTimeline(fixtureTimeline()))
}

func TestAllocStatusVerboseShowsTheTimeline(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/allocations", []*api.AllocationListStub{{ID: allocID}})
	f.json("GET /v1/allocation/"+allocID, fixtureAlloc())
	f.json("GET /v1/client/allocation/"+allocID+"/timeline", fixtureTimeline())
	r := runCLI(t, f.srv.URL, nil, "alloc", "status", "-verbose", allocID)
	want := formatAllocStatus(fixtureAlloc(), nil, fixedNow, true) + "\n" + formatAllocTimeline(fixtureTimeline())
	if r.code != 0 || r.stdout != want {
		t.Errorf("alloc status -verbose: %+v\nwant stdout:\n%s", r, want)
	}
	// Without -verbose, no timeline (and no request for it).
	r = runCLI(t, f.srv.URL, nil, "alloc", "status", allocID)
	if r.code != 0 || strings.Contains(r.stdout, "Timeline") {
		t.Errorf("alloc status: %+v", r)
	}
}

// An agent without timelines (Nomad's answers 404) is shown the rest.
func TestAllocStatusVerboseWithoutTimeline(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/allocations", []*api.AllocationListStub{{ID: allocID}})
	f.json("GET /v1/allocation/"+allocID, fixtureAlloc())
	r := runCLI(t, f.srv.URL, nil, "alloc", "status", "-verbose", allocID)
	if r.code != 0 || r.stdout != formatAllocStatus(fixtureAlloc(), nil, fixedNow, true) {
		t.Errorf("alloc status -verbose without timeline: %+v", r)
	}
}
