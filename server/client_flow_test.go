package server

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestClientFlowBatchJob plays a client: it long-polls for its allocations,
// fetches them, reports them running and then complete. The batch job ends
// dead and nothing is replaced.
func TestClientFlowBatchJob(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		registerNode(t, s, testNode("n1", 4000, 4096))
		poll := func(min uint64) *structs.NodeClientAllocsResponse {
			t.Helper()
			resp, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "n1", SecretID: "secret-n1",
				QueryOptions: structs.QueryOptions{MinQueryIndex: min, MaxQueryTime: 5 * time.Second}})
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}
		start := poll(0)

		job := testJob("batch", 2, 100, 100)
		job.Type = structs.JobTypeBatch
		r := registerJob(t, s, job)

		got := poll(start.Index)
		for got.Index <= start.Index || len(got.Allocs) < 2 {
			got = poll(got.Index)
		}
		ids := make([]string, 0, len(got.Allocs))
		for id := range got.Allocs {
			ids = append(ids, id)
		}
		full, err := s.AllocGetAllocs(ctx, &structs.AllocsGetRequest{AllocIDs: ids,
			QueryOptions: structs.QueryOptions{MinQueryIndex: got.Index - 1}})
		if err != nil || len(full.Allocs) != 2 || full.Allocs[0].Job == nil {
			t.Fatalf("AllocGetAllocs = %+v, %v", full, err)
		}
		netStatus := &structs.AllocNetworkStatus{InterfaceName: "eth0", Address: "172.26.64.3"}
		report := func(status string) {
			t.Helper()
			var updates []*structs.Allocation
			for _, a := range full.Allocs {
				updates = append(updates, &structs.Allocation{ID: a.ID, ClientStatus: status,
					TaskStates:    map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}},
					NetworkStatus: netStatus})
			}
			if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n1", SecretID: "secret-n1", Alloc: updates}); err != nil {
				t.Fatal(err)
			}
		}
		report(structs.AllocClientStatusRunning)
		// The client's report of the allocation's network is kept.
		if a, _ := s.State().AllocByID(nil, ids[0]); a.NetworkStatus == nil || *a.NetworkStatus != *netStatus {
			t.Fatalf("NetworkStatus = %+v, want the client's %+v", a.NetworkStatus, netStatus)
		}
		if j, _ := s.State().JobByID(nil, "default", "batch"); j.Status != structs.JobStatusRunning {
			t.Fatalf("job status = %s", j.Status)
		}
		report(structs.AllocClientStatusComplete)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		j, _ := s.State().JobByID(nil, "default", "batch")
		if j.Status != structs.JobStatusDead {
			t.Fatalf("job status = %s, want dead", j.Status)
		}
		sum, _ := s.State().JobSummaryByID(nil, "default", "batch")
		if sum.Summary["web"].Complete != 2 {
			t.Fatalf("summary = %+v", sum.Summary)
		}
		// Re-evaluating the job places nothing new.
		d := registerJob(t, s, job)
		waitEvalStatus(t, s, d.EvalID, structs.EvalStatusComplete)
		if n := len(allocsOf(t, s, "batch", "")); n != 2 {
			t.Fatalf("allocs = %d after re-evaluation, want 2", n)
		}
		// Updates for allocations of another node are refused.
		registerNode(t, s, testNode("n2", 1000, 1000))
		if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: "n2", SecretID: "secret-n2",
			Alloc: []*structs.Allocation{{ID: ids[0], ClientStatus: structs.AllocClientStatusFailed}}}); structs.KindOf(err) != structs.KindPermission {
			t.Fatalf("foreign alloc update: %v, want a permission error", err)
		}
		if a, _ := s.State().AllocByID(nil, ids[0]); a.ClientStatus != structs.AllocClientStatusComplete {
			t.Fatalf("foreign node changed alloc to %s", a.ClientStatus)
		}
	})
}
