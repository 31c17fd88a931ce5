package httpapi

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// timelineBackend serves the servers' part of timelines, by alloc ID.
type timelineBackend struct {
	*opsBackend
	server map[string][]structs.TimelineEntry
}

func (b *timelineBackend) handlers() *rpcapi.Handlers {
	h := b.opsBackend.handlers()
	rpcapi.Handle(h, rpcapi.AllocTimeline, func(ctx context.Context, r *structs.AllocSpecificRequest) (*structs.AllocTimelineResponse, error) {
		got, err := b.AllocGet(ctx, r)
		if err != nil {
			return nil, err
		}
		if got.Alloc == nil {
			return nil, structs.NotFound("allocation", r.AllocID)
		}
		return &structs.AllocTimelineResponse{AllocID: got.Alloc.ID, EvalID: "eval-1", Entries: b.server[got.Alloc.ID]}, nil
	})
	return h
}

func TestClientAllocTimelineMergesServersAndNode(t *testing.T) {
	alloc := testAlloc("local-2", testNodeID, "web")
	b := &timelineBackend{
		opsBackend: &opsBackend{fakeBackend: &fakeBackend{}, allocs: []*structs.Allocation{alloc}},
		server: map[string][]structs.TimelineEntry{alloc.ID: {
			{Step: structs.StepJobRegistered, Time: 100},
			{Step: structs.StepPlanApplied, Time: 300},
			{Step: structs.StepRunningApplied, Time: 900},
		}},
	}
	nc := &fakeNodeClient{dirs: map[string]string{alloc.ID: t.TempDir()}, timelines: map[string][]structs.TimelineEntry{alloc.ID: {
		{Step: structs.StepTaskRunning, Time: 700},
		{Step: structs.StepAllocReceived, Time: 400},
	}}}
	_, ts := serveAPI(t, b.handlers(), nc)

	code, body, _ := do(t, "GET", ts.URL+"/v1/client/allocation/local/timeline", "")
	if code != 200 {
		t.Fatalf("timeline: %d %s", code, body)
	}
	var got api.AllocTimeline
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := api.AllocTimeline{AllocID: alloc.ID, EvalID: "eval-1", Steps: []api.TimelineStep{
		{Name: "job_registered", Time: 100}, {Name: "plan_applied", Time: 300}, {Name: "alloc_received", Time: 400},
		{Name: "task_running", Time: 700}, {Name: "running_applied", Time: 900},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("timeline = %+v\nwant %+v", got, want)
	}

	if code, body, _ := do(t, "GET", ts.URL+"/v1/client/allocation/nope/timeline", ""); code != 404 {
		t.Errorf("unknown alloc: %d %s", code, body)
	}
}
