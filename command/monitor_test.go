package command

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/jobspec"
)

// TestMonitorFollowsChanges serves an evaluation that is pending on the
// first read and an allocation that goes pending -> running -> complete,
// raising the index each time, as blocking queries do.
func TestMonitorFollowsChanges(t *testing.T) {
	f := newFakeAgent(t)
	var evalReads, allocReads atomic.Int64
	f.mux.HandleFunc("PUT /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(api.JobRegisterResponse{EvalID: evalID})
	})
	f.mux.HandleFunc("GET /v1/evaluation/"+evalID, func(w http.ResponseWriter, r *http.Request) {
		n := evalReads.Add(1)
		status := "pending"
		if n > 1 {
			status = "complete"
		}
		w.Header().Set("X-Nomad-Index", strconv.FormatInt(n, 10))
		_ = json.NewEncoder(w).Encode(&api.Evaluation{ID: evalID, JobID: "hello", Type: "batch", Status: status})
	})
	alloc := func(status string) *api.AllocationListStub {
		return &api.AllocationListStub{ID: allocID, NodeID: nodeID, JobID: "hello", TaskGroup: "g", ClientStatus: status}
	}
	f.json("GET /v1/evaluation/"+evalID+"/allocations", []*api.AllocationListStub{alloc("pending")})
	f.mux.HandleFunc("GET /v1/job/hello/allocations", func(w http.ResponseWriter, r *http.Request) {
		n := allocReads.Add(1)
		statuses := []string{"pending", "running", "complete"}
		s := statuses[min(int(n)-1, len(statuses)-1)]
		if r.URL.Query().Get("all") != "true" {
			t.Errorf("allocations queried without all=true")
		}
		w.Header().Set("X-Nomad-Index", strconv.FormatInt(100+n, 10))
		_ = json.NewEncoder(w).Encode([]*api.AllocationListStub{alloc(s), {ID: "other", ClientStatus: "failed"}})
	})
	parse := func(string, []byte, jobspec.Options) (*api.Job, error) { return &api.Job{ID: api.String("hello")}, nil }
	r := runCLI(t, f.srv.URL, parse, "job", "run", "-verbose", writeJobFile(t))
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	want := []string{
		`Monitoring evaluation "` + evalID + `"`,
		`Allocation "` + allocID + `" created: node "` + nodeID + `", group "g"`,
		`Evaluation status changed: "pending" -> "complete"`,
		"Waiting for allocations to finish",
		`Allocation "` + allocID + `" status changed: "pending" -> "running"`,
		`Allocation "` + allocID + `" status changed: "running" -> "complete"`,
		"All allocations completed",
	}
	out := r.stdout
	for _, w := range want {
		i := strings.Index(out, w)
		if i < 0 {
			t.Fatalf("missing or out of order: %q in\n%s", w, r.stdout)
		}
		out = out[i+len(w):]
	}
	if strings.Contains(r.stdout, `"other"`) {
		t.Errorf("followed an allocation the evaluation did not create:\n%s", r.stdout)
	}
}
