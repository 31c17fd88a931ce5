package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// recorder serves a few methods and records the requests they get.
type recorder struct {
	mu   sync.Mutex // guards the field below
	reqs []any
}

func (r *recorder) add(req any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs = append(r.reqs, req)
}

func (r *recorder) last() any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) == 0 {
		return nil
	}
	return r.reqs[len(r.reqs)-1]
}

func (r *recorder) server(t *testing.T) *httptest.Server {
	t.Helper()
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.AllocList, func(_ context.Context, req *structs.AllocListRequest) (*structs.AllocListResponse, error) {
		r.add(req)
		resp := &structs.AllocListResponse{}
		if req.PerPage > 0 {
			resp.NextToken = "next-of-" + req.NextToken
		}
		return resp, nil
	})
	rpcapi.Handle(h, rpcapi.NodeList, func(_ context.Context, req *structs.NodeListRequest) (*structs.NodeListResponse, error) {
		r.add(req)
		return &structs.NodeListResponse{}, nil
	})
	rpcapi.Handle(h, rpcapi.NodeGet, func(_ context.Context, req *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
		r.add(req)
		return &structs.SingleNodeResponse{Node: &structs.Node{ID: "n1", SecretID: "top-secret"}}, nil
	})
	rpcapi.Handle(h, rpcapi.JobRegister, func(_ context.Context, req *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error) {
		r.add(req)
		return &structs.JobRegisterResponse{EvalID: "e"}, nil
	})
	rpcapi.Handle(h, rpcapi.JobDeregister, func(_ context.Context, req *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error) {
		r.add(req)
		return &structs.JobDeregisterResponse{}, nil
	})
	rpcapi.Handle(h, rpcapi.AllocStop, func(_ context.Context, req *structs.AllocStopRequest) (*structs.AllocStopResponse, error) {
		r.add(req)
		return &structs.AllocStopResponse{}, nil
	})
	rpcapi.Handle(h, rpcapi.EvalGet, func(_ context.Context, req *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error) {
		r.add(req)
		resp := &structs.SingleEvalResponse{Eval: &structs.Evaluation{ID: "e1", BlockedEval: "e2"}}
		if req.IncludeRelated {
			resp.Related = []*structs.EvaluationStub{{ID: "e2", PreviousEval: "e1"}}
		}
		return resp, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

// TestNomadRequestParameters checks that the parameters Nomad's API client
// sends reach the server: ?resources on lists, the register options, and
// ?eval_priority on a deregistration.
func TestNomadRequestParameters(t *testing.T) {
	tests := []struct {
		method, path, body string
		check              func(req any) bool
	}{
		{"GET", "/v1/allocations?resources=true", "", func(req any) bool { return req.(*structs.AllocListRequest).Resources }},
		{"GET", "/v1/allocations", "", func(req any) bool { return !req.(*structs.AllocListRequest).Resources }},
		{"GET", "/v1/nodes?resources=true", "", func(req any) bool { return req.(*structs.NodeListRequest).Resources }},
		{"PUT", "/v1/jobs", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]},
			"PreserveCounts": true, "PreserveResources": true, "EvalPriority": 99}`, func(req any) bool {
			r := req.(*structs.JobRegisterRequest)
			return r.PreserveCounts && r.PreserveResources && r.EvalPriority == 99
		}},
		{"PUT", "/v1/allocation/a1/stop?reschedule=true&no_shutdown_delay=true", "", func(req any) bool {
			r := req.(*structs.AllocStopRequest)
			return r.AllocID == "a1" && r.Reschedule && r.NoShutdownDelay && !r.NoShuffle
		}},
		{"DELETE", "/v1/job/web?purge=false&global=false&eval_priority=97&no_shutdown_delay=false", "", func(req any) bool {
			return req.(*structs.JobDeregisterRequest).EvalPriority == 97
		}},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			rec := &recorder{}
			ts := rec.server(t)
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if got := rec.last(); got == nil || !tc.check(got) {
				t.Errorf("the server got %+v", got)
			}
		})
	}
	t.Run("eval_priority must be a number", func(t *testing.T) {
		ts := (&recorder{}).server(t)
		req, _ := http.NewRequest("DELETE", ts.URL+"/v1/job/web?eval_priority=high", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	})
}

// TestNodeSecretIDIsEmpty checks that a node's JSON holds "SecretID": ""
// as Nomad's does, never the secret.
func TestNodeSecretIDIsEmpty(t *testing.T) {
	ts := (&recorder{}).server(t)
	resp, err := http.Get(ts.URL + "/v1/node/n1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), `"SecretID":""`) || strings.Contains(string(body), "top-secret") {
		t.Errorf("body %s: want \"SecretID\":\"\" and no secret", body)
	}
	if !strings.Contains(string(body), `"ID":"n1"`) {
		t.Errorf("body %s: no ID", body)
	}
}

// TestPagingHeaders checks that a paged list answers X-Nomad-NextToken as
// Nomad's does, and that a bad per_page is refused.
func TestPagingHeaders(t *testing.T) {
	ts := (&recorder{}).server(t)
	resp, err := http.Get(ts.URL + "/v1/allocations?per_page=1&next_token=abc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Nomad-NextToken"); got != "next-of-abc" {
		t.Errorf("X-Nomad-NextToken %q", got)
	}
	resp, err = http.Get(ts.URL + "/v1/allocations?per_page=many")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("per_page=many: status %d, want 400", resp.StatusCode)
	}
}

// TestEvalRelated checks GET /v1/evaluation/:id?related=true: the
// evaluation with its RelatedEvals, which are absent otherwise.
func TestEvalRelated(t *testing.T) {
	ts := (&recorder{}).server(t)
	for _, tc := range []struct {
		query string
		want  bool
	}{{"?related=true", true}, {"", false}} {
		resp, err := http.Get(ts.URL + "/v1/evaluation/e1" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `"ID":"e1"`) {
			t.Errorf("%q: body %s", tc.query, body)
		}
		if got := strings.Contains(string(body), `"RelatedEvals":[{"ID":"e2"`); got != tc.want {
			t.Errorf("%q: body %s: related evals shown %t, want %t", tc.query, body, got, tc.want)
		}
	}
}
