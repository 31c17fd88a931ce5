package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestJobEvaluate(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	if _, err := s.JobEvaluate(ctx, &structs.JobEvaluateRequest{JobID: "web"}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("evaluate an unknown job: %v", err)
	}
	reg := registerJob(t, s, testJob("web", 1, 100, 100))
	resp, err := s.JobEvaluate(ctx, &structs.JobEvaluateRequest{JobID: "web"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.EvalID == "" || resp.EvalID == reg.EvalID || resp.EvalCreateIndex == 0 || resp.Index != resp.EvalCreateIndex {
		t.Fatalf("evaluate answered %+v", resp)
	}
	e, err := s.State().EvalByID(nil, resp.EvalID)
	if err != nil || e == nil || e.JobID != "web" || e.Namespace != "default" || e.TriggeredBy != structs.EvalTriggerJobRegister ||
		e.Type != structs.JobTypeService || e.CreateIndex != resp.EvalCreateIndex {
		t.Fatalf("stored eval %+v, %v", e, err)
	}
	// The job's namespace is the request's.
	upsertNamespace(t, s, &structs.Namespace{Name: "dev"})
	if _, err := s.JobEvaluate(ctx, &structs.JobEvaluateRequest{JobID: "web", Namespace: "dev"}); structs.KindOf(err) != structs.KindNotFound {
		t.Fatalf("evaluate in another namespace: %v", err)
	}
}
