package command

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

func TestJobEval(t *testing.T) {
	eval := &api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete",
		BlockedEval:    "bbbbbbbb-0000-0000-0000-000000000000",
		FailedTGAllocs: map[string]*api.AllocationMetric{"web": fixtureMetric()}}
	f := runJobFixture(t, eval, []*api.AllocationListStub{}, []*api.AllocationListStub{})
	var forced []bool
	f.mux.HandleFunc("PUT /v1/job/hello/evaluate", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			EvalOptions struct{ ForceReschedule bool }
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		forced = append(forced, body.EvalOptions.ForceReschedule)
		_ = json.NewEncoder(w).Encode(api.JobRegisterResponse{EvalID: evalID, EvalCreateIndex: 9})
	})
	f.fail("PUT /v1/job/nope/evaluate", http.StatusNotFound, `job "nope" not found`)

	r := runCLI(t, f.srv.URL, nil, "job", "eval", "-detach", "hello")
	if r.code != 0 || r.stdout != "Evaluation ID: "+evalID+"\n" {
		t.Fatalf("job eval -detach: %+v", r)
	}
	// Followed, an evaluation that could not place everything exits 2,
	// as job run's.
	r = runCLI(t, f.srv.URL, nil, "job", "eval", "hello")
	if r.code != 2 || !strings.Contains(r.stdout, "Evaluation") {
		t.Fatalf("job eval: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "eval", "nope"); r.code != 1 || !strings.Contains(r.stderr, `job "nope" not found`) {
		t.Errorf("job eval of an unknown job: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "eval", "-detach", "-force-reschedule", "hello"); r.code != 0 {
		t.Errorf("job eval -force-reschedule: %+v", r)
	}
	if len(forced) != 3 || forced[0] || forced[1] || !forced[2] {
		t.Errorf("ForceReschedule sent = %v, want only by the last call", forced)
	}
}
