package rpcapi

import (
	"context"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestMethodsDeclaredOnce checks that every method has a name of its own
// and a class.
func TestMethodsDeclaredOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range All() {
		if m.Name() == "" || seen[m.Name()] {
			t.Errorf("method name %q is empty or declared twice", m.Name())
		}
		seen[m.Name()] = true
		if m.Class() < Read || m.Class() > AtMostOnce {
			t.Errorf("%s has no class", m.Name())
		}
		if (m.Class() == Read) != (m.query != nil) || (m.Class() == Deduplicated) != (m.withID != nil) {
			t.Errorf("%s: class %s does not match its request type", m.Name(), m.Class())
		}
	}
}

func TestClasses(t *testing.T) {
	tests := []struct {
		m    *Info
		want Class
		safe bool
	}{
		{JobGet.Info(), Read, true},
		{NodeUpdateStatus.Info(), Idempotent, true},
		{JobPlan.Info(), Idempotent, true},
		{JobRegister.Info(), Deduplicated, true},
		{DeploymentFail.Info(), AtMostOnce, false},
	}
	for _, tt := range tests {
		if got := tt.m.Class(); got != tt.want || got.SafeToRepeat() != tt.safe {
			t.Errorf("%s: class %s (safe %v), want %s (safe %v)", tt.m.Name(), got, got.SafeToRepeat(), tt.want, tt.safe)
		}
	}
}

func TestQuery(t *testing.T) {
	req := &structs.JobListRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 7, MaxQueryTime: time.Minute}}
	if q := JobList.Info().Query(req); q == nil || q.MinQueryIndex != 7 || q.MaxQueryTime != time.Minute {
		t.Errorf("Query = %+v", q)
	}
	if q := JobRegister.Info().Query(&structs.JobRegisterRequest{}); q != nil {
		t.Errorf("a write's Query = %+v, want nil", q)
	}
}

func TestWithRequestID(t *testing.T) {
	orig := &structs.JobRegisterRequest{Job: &structs.Job{ID: "web"}}
	got, id := JobRegister.Info().WithRequestID(orig)
	withID := got.(*structs.JobRegisterRequest)
	if id == "" || withID.RequestID != id || withID.Job != orig.Job {
		t.Fatalf("WithRequestID = %+v, %q", withID, id)
	}
	if orig.RequestID != "" {
		t.Fatalf("the caller's request was changed: %q", orig.RequestID)
	}
	again, id2 := JobRegister.Info().WithRequestID(withID)
	if again != any(withID) || id2 != id {
		t.Errorf("a request with an ID got a new one: %q -> %q", id, id2)
	}
	read := &structs.JobListRequest{}
	if got, id := JobList.Info().WithRequestID(read); got != any(read) || id != "" {
		t.Errorf("a read got a request ID %q", id)
	}
}

func TestHandlersInvoke(t *testing.T) {
	h := NewHandlers()
	Handle(h, JobGet, func(_ context.Context, r *structs.JobSpecificRequest) (*structs.SingleJobResponse, error) {
		return &structs.SingleJobResponse{Job: &structs.Job{ID: r.JobID}}, nil
	})
	resp, err := JobGet.Call(context.Background(), h, &structs.JobSpecificRequest{JobID: "web"})
	if err != nil || resp.Job.ID != "web" {
		t.Fatalf("JobGet = %+v, %v", resp, err)
	}
	if !h.Serves(JobGet.Info()) || h.Serves(JobList.Info()) {
		t.Error("Serves is wrong")
	}
	if _, err := JobList.Call(context.Background(), h, &structs.JobListRequest{}); structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("a method not served: err = %v, want not found", err)
	}
	if _, err := h.Invoke(context.Background(), JobGet.Info(), &structs.JobListRequest{}); structs.KindOf(err) != structs.KindInvalid {
		t.Errorf("a request of the wrong type: err = %v, want invalid", err)
	}
	Handle(h, JobList, func(context.Context, *structs.JobListRequest) (*structs.JobListResponse, error) { return nil, nil })
	if _, err := JobList.Call(context.Background(), h, &structs.JobListRequest{}); err == nil {
		t.Error("a nil reply is not an error")
	}
}
