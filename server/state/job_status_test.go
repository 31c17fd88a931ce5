package state

import (
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestSummaryAfterPurge registers a job again under the ID of a purged one
// whose allocations and evaluations are still in the store (they stay until
// garbage collected): the new job's summary and status start from zero and
// do not move when the old allocations change later.
func TestSummaryAfterPurge(t *testing.T) {
	s := newStore(t)
	old := testJob("web")
	if err := s.UpsertJob(10, old); err != nil {
		t.Fatal(err)
	}
	old, _ = s.JobByID(nil, "default", "web")
	oldEval := &structs.Evaluation{ID: "e-old", Namespace: "default", JobID: "web",
		Status: structs.EvalStatusComplete, QueuedAllocations: map[string]int{"web": 1}}
	_ = s.UpsertEvals(11, []*structs.Evaluation{oldEval})
	a0, a1 := testAlloc("a0", old, "n1", 0), testAlloc("a1", old, "n1", 1)
	if err := s.UpsertAllocs(12, []*structs.Allocation{a0, a1}); err != nil {
		t.Fatal(err)
	}
	failed := a0.Copy()
	failed.ClientStatus = structs.AllocClientStatusFailed
	running := a1.Copy()
	running.ClientStatus = structs.AllocClientStatusRunning
	_ = s.UpdateAllocsFromClient(13, []*structs.Allocation{failed, running})
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum.Summary["web"].Failed != 1 || sum.Summary["web"].Running != 1 {
		t.Fatalf("summary of the first job = %+v", sum.Summary)
	}

	// job stop -purge: the allocations are stopped, the job deleted.
	stop := func(a *structs.Allocation) *structs.Allocation {
		c := a.Copy()
		c.DesiredStatus = structs.AllocDesiredStatusStop
		return c
	}
	_ = s.UpsertAllocs(14, []*structs.Allocation{stop(a0), stop(a1)})
	if err := s.DeleteJob(15, "default", "web"); err != nil {
		t.Fatal(err)
	}
	// job run again, with the same ID.
	if err := s.UpsertJob(16, testJob("web")); err != nil {
		t.Fatal(err)
	}
	newEval := &structs.Evaluation{ID: "e-new", Namespace: "default", JobID: "web", Status: structs.EvalStatusPending}
	_ = s.UpsertEvals(16, []*structs.Evaluation{newEval})

	zero := structs.TaskGroupSummary{}
	sum, _ := s.JobSummaryByID(nil, "default", "web")
	if sum == nil || sum.Summary["web"] != zero {
		t.Fatalf("summary of the new job = %+v, want zero counts", sum)
	}
	if sum.CreateIndex != 16 {
		t.Errorf("summary CreateIndex = %d, want 16 (the new job's)", sum.CreateIndex)
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusPending {
		t.Errorf("new job status = %q, want pending", j.Status)
	}

	// The old running allocation finishes: the new job does not count it.
	done := running.Copy()
	done.ClientStatus = structs.AllocClientStatusComplete
	_ = s.UpdateAllocsFromClient(17, []*structs.Allocation{done})
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum.Summary["web"] != zero {
		t.Fatalf("summary after an old allocation changed = %+v, want zero counts", sum.Summary)
	}

	// The new job's own allocation counts.
	cur, _ := s.JobByID(nil, "default", "web")
	_ = s.UpsertAllocs(18, []*structs.Allocation{testAlloc("b0", cur, "n1", 0)})
	if sum, _ := s.JobSummaryByID(nil, "default", "web"); sum.Summary["web"].Starting != 1 || sum.Summary["web"].Failed != 0 {
		t.Fatalf("summary with the new job's allocation = %+v", sum.Summary)
	}
	if j, _ := s.JobByID(nil, "default", "web"); j.Status != structs.JobStatusRunning {
		t.Errorf("new job status = %q, want running", j.Status)
	}
}
