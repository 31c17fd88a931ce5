package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestEvalGetRelated checks ?related=true: an evaluation that could not
// place everything lists the blocked evaluation it created, and the
// blocked one lists it back.
func TestEvalGetRelated(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	r := registerJob(t, s, testJob("web", 1, 100, 100)) // no node: placement fails
	eval := waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
	if eval.BlockedEval == "" {
		t.Fatalf("no blocked eval: %+v", eval)
	}
	tests := []struct {
		id, want string
		include  bool
	}{
		{eval.ID, eval.BlockedEval, true},
		{eval.BlockedEval, eval.ID, true},
		{eval.ID, "", false},
	}
	for _, tc := range tests {
		resp, err := s.EvalGet(ctx, &structs.EvalSpecificRequest{EvalID: tc.id, IncludeRelated: tc.include})
		if err != nil {
			t.Fatal(err)
		}
		if !tc.include {
			if resp.Related != nil {
				t.Errorf("related evals without asking: %+v", resp.Related)
			}
			continue
		}
		if len(resp.Related) != 1 || resp.Related[0].ID != tc.want {
			t.Errorf("eval %s: related %+v, want %s", tc.id, resp.Related, tc.want)
		}
	}
}
