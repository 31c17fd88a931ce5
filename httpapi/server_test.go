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
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// fakeBackend is a Backend over a few fixed jobs that records the requests
// it gets and fails with err when set.
type fakeBackend struct {
	mu        sync.Mutex // guards the fields below
	jobs      []*structs.Job
	registers []*structs.JobRegisterRequest
	lastQuery structs.QueryOptions
	err       error
}

// handlers binds the server's methods to the fake (the update methods are
// in updates_test.go).
func (f *fakeBackend) handlers() *rpcapi.Handlers {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.JobRegister, f.JobRegister)
	rpcapi.Handle(h, rpcapi.JobDeregister, f.JobDeregister)
	rpcapi.Handle(h, rpcapi.JobGet, f.JobGet)
	rpcapi.Handle(h, rpcapi.JobList, f.JobList)
	rpcapi.Handle(h, rpcapi.JobAllocations, f.JobAllocations)
	rpcapi.Handle(h, rpcapi.JobEvaluations, f.JobEvaluations)
	rpcapi.Handle(h, rpcapi.JobSummary, f.JobSummary)
	rpcapi.Handle(h, rpcapi.EvalAllocations, f.EvalAllocations)
	rpcapi.Handle(h, rpcapi.NodeAllocations, f.NodeAllocations)
	rpcapi.Handle(h, rpcapi.AllocList, f.AllocList)
	rpcapi.Handle(h, rpcapi.AllocGet, f.AllocGet)
	rpcapi.Handle(h, rpcapi.EvalList, f.EvalList)
	rpcapi.Handle(h, rpcapi.EvalGet, f.EvalGet)
	rpcapi.Handle(h, rpcapi.NodeList, f.NodeList)
	rpcapi.Handle(h, rpcapi.NodeGet, f.NodeGet)
	rpcapi.Handle(h, rpcapi.JobValidate, f.JobValidate)
	f.handleUpdates(h)
	return h
}

func (f *fakeBackend) record(q structs.QueryOptions) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastQuery = q
	return f.err
}

func (f *fakeBackend) JobRegister(_ context.Context, r *structs.JobRegisterRequest) (*structs.JobRegisterResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.registers = append(f.registers, r)
	return &structs.JobRegisterResponse{EvalID: "eval-1", EvalCreateIndex: 7, JobModifyIndex: 7, WriteMeta: structs.WriteMeta{Index: 7}}, nil
}

func (f *fakeBackend) JobDeregister(_ context.Context, r *structs.JobDeregisterRequest) (*structs.JobDeregisterResponse, error) {
	if err := f.record(structs.QueryOptions{Namespace: r.Namespace}); err != nil {
		return nil, err
	}
	return &structs.JobDeregisterResponse{EvalID: "eval-2", WriteMeta: structs.WriteMeta{Index: 9}}, nil
}

// JobGet finds a job by ID or unique prefix, as the server does.
func (f *fakeBackend) JobGet(_ context.Context, r *structs.JobSpecificRequest) (*structs.SingleJobResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	var matches []string
	for _, j := range f.jobs {
		if j.ID == r.JobID {
			return &structs.SingleJobResponse{Job: j, QueryMeta: structs.QueryMeta{Index: 5, KnownLeader: true}}, nil
		}
		if strings.HasPrefix(j.ID, r.JobID) {
			matches = append(matches, j.ID)
		}
	}
	switch len(matches) {
	case 0:
		return nil, structs.NotFound("job", r.JobID)
	case 1:
		return f.JobGet(context.Background(), &structs.JobSpecificRequest{JobID: matches[0]})
	}
	return nil, structs.Invalid("job prefix %q matches %d jobs (%s): give more of the ID", r.JobID, len(matches), strings.Join(matches, ", "))
}

// JobSummary counts the allocations of JobAllocations.
func (f *fakeBackend) JobSummary(ctx context.Context, r *structs.JobSpecificRequest) (*structs.JobSummaryResponse, error) {
	allocs, err := f.JobAllocations(ctx, r)
	if err != nil {
		return nil, err
	}
	sum := &structs.JobSummary{JobID: r.JobID, Namespace: "default", Summary: map[string]structs.TaskGroupSummary{}}
	for _, a := range allocs.Allocations {
		tg := sum.Summary[a.TaskGroup]
		switch a.ClientStatus {
		case structs.AllocClientStatusRunning:
			tg.Running++
		case structs.AllocClientStatusFailed:
			tg.Failed++
		}
		sum.Summary[a.TaskGroup] = tg
	}
	return &structs.JobSummaryResponse{JobSummary: sum, QueryMeta: structs.QueryMeta{Index: 5}}, nil
}

// NodeAllocations knows no node.
func (f *fakeBackend) NodeAllocations(_ context.Context, r *structs.NodeSpecificRequest) (*structs.AllocsGetResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	return nil, structs.NotFound("node", r.NodeID)
}

// EvalAllocations knows no evaluation.
func (f *fakeBackend) EvalAllocations(_ context.Context, r *structs.EvalSpecificRequest) (*structs.AllocListResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	return nil, structs.NotFound("evaluation", r.EvalID)
}

func (f *fakeBackend) JobList(_ context.Context, r *structs.JobListRequest) (*structs.JobListResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	out := &structs.JobListResponse{QueryMeta: structs.QueryMeta{Index: 5}}
	for _, j := range f.jobs {
		if strings.HasPrefix(j.ID, r.Prefix) {
			out.Jobs = append(out.Jobs, j.Stub(nil))
		}
	}
	return out, nil
}

func (f *fakeBackend) JobAllocations(_ context.Context, r *structs.JobSpecificRequest) (*structs.JobAllocationsResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	return &structs.JobAllocationsResponse{Allocations: []*structs.AllocListStub{
		{ID: "a1", TaskGroup: "g", ClientStatus: "running"},
		{ID: "a2", TaskGroup: "g", ClientStatus: "failed"},
	}}, nil
}

func (f *fakeBackend) JobEvaluations(_ context.Context, r *structs.JobSpecificRequest) (*structs.JobEvaluationsResponse, error) {
	return &structs.JobEvaluationsResponse{}, f.record(r.QueryOptions)
}

func (f *fakeBackend) AllocList(_ context.Context, r *structs.AllocListRequest) (*structs.AllocListResponse, error) {
	return &structs.AllocListResponse{}, f.record(r.QueryOptions)
}

func (f *fakeBackend) AllocGet(_ context.Context, r *structs.AllocSpecificRequest) (*structs.SingleAllocResponse, error) {
	return &structs.SingleAllocResponse{}, f.record(r.QueryOptions)
}

func (f *fakeBackend) EvalList(_ context.Context, r *structs.EvalListRequest) (*structs.EvalListResponse, error) {
	return &structs.EvalListResponse{}, f.record(r.QueryOptions)
}

func (f *fakeBackend) EvalGet(_ context.Context, r *structs.EvalSpecificRequest) (*structs.SingleEvalResponse, error) {
	return &structs.SingleEvalResponse{}, f.record(r.QueryOptions)
}

func (f *fakeBackend) NodeList(_ context.Context, r *structs.NodeListRequest) (*structs.NodeListResponse, error) {
	return &structs.NodeListResponse{}, f.record(r.QueryOptions)
}

func (f *fakeBackend) NodeGet(_ context.Context, r *structs.NodeSpecificRequest) (*structs.SingleNodeResponse, error) {
	return &structs.SingleNodeResponse{}, f.record(r.QueryOptions)
}

type fakeInfo struct{}

func (fakeInfo) Leader() string  { return "127.0.0.1:4647" }
func (fakeInfo) Peers() []string { return []string{"127.0.0.1:4647"} }
func (fakeInfo) Region() string  { return "global" }
func (fakeInfo) IsServer() bool  { return true }
func (fakeInfo) Contact() (bool, time.Duration) {
	return true, 0
}

func (fakeInfo) Self() *AgentSelf { return &AgentSelf{Config: map[string]any{"Region": "global"}} }
func (fakeInfo) Health() (*AgentHealthResponse, bool) {
	return &AgentHealthResponse{Server: &AgentHealth{Ok: true, Message: "ok"}}, true
}

func fakeParse(r *api.JobsParseRequest) (*api.Job, error) {
	if strings.Contains(r.JobHCL, "bad") {
		return nil, structs.Invalid("input.hcl:1,5-8: Unsupported block type")
	}
	return &api.Job{ID: api.String("parsed")}, nil
}

func newFakeServer(t *testing.T, b *fakeBackend) *httptest.Server {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	hs := New(nil, &Config{RPC: b.handlers(), Agent: fakeInfo{}, ParseJob: fakeParse, Logger: logger})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts
}

const validJobBody = `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`

func TestHTTPRequests(t *testing.T) {
	jobs := []*structs.Job{{ID: "web", Namespace: "default"}, {ID: "web2", Namespace: "default"}, {ID: "api", Namespace: "default"}}
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		backendErr error
		wantCode   int
		wantBody   string // substring
		wantHeader map[string]string
		registered int // registrations the backend saw
	}{
		{name: "unknown route", method: "GET", path: "/v1/nope", wantCode: 404, wantBody: "no such endpoint: GET /v1/nope"},
		{name: "wrong method", method: "DELETE", path: "/v1/jobs", wantCode: 405, wantBody: "use GET, POST, PUT", wantHeader: map[string]string{"Allow": "GET, POST, PUT"}},
		{name: "register", method: "PUT", path: "/v1/jobs", body: validJobBody, wantCode: 200, wantBody: `"EvalID":"eval-1"`, wantHeader: map[string]string{"X-Nomad-Index": "7", "Content-Type": "application/json"}, registered: 1},
		{name: "register on job path", method: "POST", path: "/v1/job/web", body: validJobBody, wantCode: 200, registered: 1},
		{name: "register ID mismatch", method: "POST", path: "/v1/job/other", body: validJobBody, wantCode: 400, wantBody: `job ID "web" in the body does not match "other" in the URL`},
		{name: "malformed JSON", method: "PUT", path: "/v1/jobs", body: `{"Job": {`, wantCode: 400, wantBody: "request body"},
		{name: "empty body", method: "PUT", path: "/v1/jobs", wantCode: 400, wantBody: "request body is empty"},
		{name: "trailing data", method: "PUT", path: "/v1/jobs", body: validJobBody + "{}", wantCode: 400, wantBody: "data after the JSON object"},
		{name: "unknown field", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "Cuont": 3}}`, wantCode: 400, wantBody: `unknown field Job.Cuont`},
		{name: "nested unknown field", method: "PUT", path: "/v1/jobs", body: `{"job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Config": {"anything": 1}, "Resources": {"CPU": 1, "Memroy": 3}}]}]}}`, wantCode: 400, wantBody: `unknown field job.TaskGroups[0].Tasks[0].Resources.Memroy`},
		{name: "unknown top-level field", method: "PUT", path: "/v1/jobs", body: `{"Jobb": {}}`, wantCode: 400, wantBody: `unknown field Jobb`},
		{name: "wildcard namespace", method: "PUT", path: "/v1/jobs?namespace=*", body: validJobBody, wantCode: 400, wantBody: `namespace "*" means all namespaces`},
		{name: "no job", method: "PUT", path: "/v1/jobs", body: `{}`, wantCode: 400, wantBody: "request body has no Job"},
		{name: "negative count", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Count": -1, "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, wantCode: 400, wantBody: `group "g": count -1 must not be negative`},
		{name: "missing driver", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t"}]}]}}`, wantCode: 400, wantBody: `task "t": driver is missing`},
		{name: "unsupported feature", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "Multiregion": {"Strategy": {"MaxParallel": 1}}, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, wantCode: 400, wantBody: "Multiregion (multiregion block) is not supported by drover yet"},
		{name: "periodic service job", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "Periodic": {"Spec": "@daily"}, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, wantCode: 400, wantBody: `periodic: a service job cannot be periodic: use type "batch" or "sysbatch"`},
		{name: "bad cron", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "Type": "batch", "Periodic": {"Spec": "61 * * * *"}, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, wantCode: 400, wantBody: `cron expression "61 * * * *" does not parse`},
		{name: "warning", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "web", "UI": {"Description": "x"}, "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, wantCode: 200, wantBody: `"Warnings":"1 warning:\n\n* job: UI (ui block) is not supported by drover yet and was ignored"`, registered: 1},
		{name: "body too large", method: "PUT", path: "/v1/jobs", body: `{"Job": {"ID": "` + strings.Repeat("x", maxBodyBytes) + `"}}`, wantCode: 413, wantBody: "request body is larger than the limit of 10485760 bytes"},
		{name: "backend conflict", method: "PUT", path: "/v1/jobs", body: validJobBody, backendErr: structs.NewError(structs.KindConflict, "index mismatch"), wantCode: 409, wantBody: "index mismatch"},
		{name: "backend unavailable", method: "GET", path: "/v1/jobs", backendErr: structs.NewError(structs.KindUnavailable, "no leader"), wantCode: 503, wantBody: "no leader"},
		{name: "backend internal", method: "GET", path: "/v1/jobs", backendErr: io.ErrUnexpectedEOF, wantCode: 500},
		{name: "list", method: "GET", path: "/v1/jobs?prefix=web", wantCode: 200, wantBody: `"ID":"web2"`, wantHeader: map[string]string{"X-Nomad-Index": "5", "X-Nomad-LastContact": "0"}},
		{name: "pretty", method: "GET", path: "/v1/job/api?pretty", wantCode: 200, wantBody: "{\n    \"Region\""},
		{name: "get exact", method: "GET", path: "/v1/job/web", wantCode: 200, wantBody: `"ID":"web"`, wantHeader: map[string]string{"X-Nomad-KnownLeader": "true"}},
		{name: "get by prefix", method: "GET", path: "/v1/job/ap", wantCode: 200, wantBody: `"ID":"api"`},
		{name: "ambiguous prefix", method: "GET", path: "/v1/job/we", wantCode: 400, wantBody: `job prefix "we" matches 2 jobs (web, web2)`},
		{name: "unknown job", method: "GET", path: "/v1/job/zzz", wantCode: 404, wantBody: `job "zzz" not found`},
		{name: "unknown alloc", method: "GET", path: "/v1/allocation/abc", wantCode: 404, wantBody: `allocation "abc" not found`},
		{name: "unknown eval", method: "GET", path: "/v1/evaluation/abc", wantCode: 404, wantBody: `evaluation "abc" not found`},
		{name: "unknown node", method: "GET", path: "/v1/node/abc/allocations", wantCode: 404, wantBody: `node "abc" not found`},
		{name: "bad index", method: "GET", path: "/v1/jobs?index=x", wantCode: 400, wantBody: `index "x" is invalid`},
		{name: "bad wait", method: "GET", path: "/v1/jobs?index=1&wait=soon", wantCode: 400, wantBody: `wait "soon" is invalid`},
		{name: "bad purge", method: "DELETE", path: "/v1/job/web?purge=maybe", wantCode: 400, wantBody: `purge="maybe" is invalid`},
		{name: "deregister", method: "DELETE", path: "/v1/job/web?purge=true", wantCode: 200, wantBody: `"EvalID":"eval-2"`, wantHeader: map[string]string{"X-Nomad-Index": "9"}},
		{name: "summary", method: "GET", path: "/v1/job/web/summary", wantCode: 200, wantBody: `"Summary":{"g":{"Queued":0,"Complete":0,"Failed":1,"Running":1`},
		{name: "versions", method: "GET", path: "/v1/job/web/versions", wantCode: 200, wantBody: `{"Versions":[{"Region":"","Namespace":"default","ID":"web"`},
		{name: "no deployment", method: "GET", path: "/v1/job/web/deployment", wantCode: 200, wantBody: `null`},
		{name: "no deployments", method: "GET", path: "/v1/job/web/deployments", wantCode: 200, wantBody: `[]`},
		{name: "deployment of unknown job", method: "GET", path: "/v1/job/zzz/deployment", wantCode: 404, wantBody: `job "zzz" not found`},
		{name: "regions", method: "GET", path: "/v1/regions", wantCode: 200, wantBody: `["global"]`},
		{name: "empty list is []", method: "GET", path: "/v1/evaluations", wantCode: 200, wantBody: `[]`},
		{name: "leader", method: "GET", path: "/v1/status/leader", wantCode: 200, wantBody: `"127.0.0.1:4647"`},
		{name: "peers", method: "GET", path: "/v1/status/peers", wantCode: 200, wantBody: `["127.0.0.1:4647"]`},
		{name: "health", method: "GET", path: "/v1/agent/health", wantCode: 200, wantBody: `"server":{"ok":true,"message":"ok"}`},
		{name: "self", method: "GET", path: "/v1/agent/self", wantCode: 200, wantBody: `"config":{"Region":"global"}`},
		{name: "parse", method: "POST", path: "/v1/jobs/parse", body: `{"JobHCL": "job \"parsed\" {}"}`, wantCode: 200, wantBody: `"ID":"parsed"`},
		{name: "parse canonicalize", method: "POST", path: "/v1/jobs/parse", body: `{"JobHCL": "job \"parsed\" {}", "Canonicalize": true}`, wantCode: 200,
			wantBody: `"Region":"global","Namespace":"default","ID":"parsed","Name":"parsed","Type":"service","Priority":50,"AllAtOnce":false`},
		{name: "parse error", method: "POST", path: "/v1/jobs/parse", body: `{"JobHCL": "bad"}`, wantCode: 400, wantBody: "input.hcl:1,5-8: Unsupported block type"},
		{name: "parse empty", method: "PUT", path: "/v1/jobs/parse", body: `{}`, wantCode: 400, wantBody: "JobHCL is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &fakeBackend{jobs: jobs, err: tc.backendErr}
			ts := newFakeServer(t, b)
			req, err := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.wantCode {
				t.Errorf("status = %d, want %d; body %q", resp.StatusCode, tc.wantCode, body)
			}
			if !strings.Contains(string(body), tc.wantBody) {
				t.Errorf("body %q does not contain %q", body, tc.wantBody)
			}
			for k, v := range tc.wantHeader {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
				t.Errorf("error Content-Type = %q, want text/plain", resp.Header.Get("Content-Type"))
			}
			b.mu.Lock()
			defer b.mu.Unlock()
			if len(b.registers) != tc.registered {
				t.Errorf("backend saw %d registrations, want %d", len(b.registers), tc.registered)
			}
		})
	}
}

func TestQueryOptions(t *testing.T) {
	tests := []struct {
		query string
		want  structs.QueryOptions
	}{
		{"", structs.QueryOptions{Namespace: "default"}},
		{"namespace=*&prefix=ab&region=r1&stale", structs.QueryOptions{Namespace: "*", Prefix: "ab", Region: "r1", AllowStale: true}},
		{"index=12", structs.QueryOptions{Namespace: "default", MinQueryIndex: 12, MaxQueryTime: structs.DefaultBlockingWait}},
		{"index=12&wait=5000ms", structs.QueryOptions{Namespace: "default", MinQueryIndex: 12, MaxQueryTime: 5e9}},
		{"index=12&wait=3", structs.QueryOptions{Namespace: "default", MinQueryIndex: 12, MaxQueryTime: 3e9}},
		{"index=12&wait=1h", structs.QueryOptions{Namespace: "default", MinQueryIndex: 12, MaxQueryTime: structs.MaxBlockingWait}},
		{"per_page=2&next_token=abc", structs.QueryOptions{Namespace: "default", PerPage: 2, NextToken: "abc"}},
	}
	for _, tc := range tests {
		req := httptest.NewRequest("GET", "/v1/jobs?"+tc.query, nil)
		got, err := queryOptions(req)
		if err != nil {
			t.Errorf("queryOptions(%q): %v", tc.query, err)
			continue
		}
		if got != tc.want {
			t.Errorf("queryOptions(%q) = %+v, want %+v", tc.query, got, tc.want)
		}
	}
}

func TestRegisterSetsNamespaceAndDefaults(t *testing.T) {
	b := &fakeBackend{}
	ts := newFakeServer(t, b)
	resp, err := ts.Client().Post(ts.URL+"/v1/jobs?namespace=team", "application/json", strings.NewReader(validJobBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.registers) != 1 {
		t.Fatalf("registrations = %d, want 1", len(b.registers))
	}
	j := b.registers[0].Job
	if j.Namespace != "team" || j.Region != "global" || j.Name != "web" || j.Priority != 50 {
		t.Errorf("registered job = ns %q region %q name %q priority %d, want team/global/web/50", j.Namespace, j.Region, j.Name, j.Priority)
	}
}
