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

// fakePeriodic records the dispatch and force requests it answers.
type fakePeriodic struct {
	mu       sync.Mutex // guards the fields below
	dispatch *structs.JobDispatchRequest
	force    *structs.PeriodicForceRequest
}

func (f *fakePeriodic) Dispatch(_ context.Context, r *structs.JobDispatchRequest) (*structs.JobDispatchResponse, error) {
	f.mu.Lock()
	f.dispatch = r
	f.mu.Unlock()
	if r.JobID != "transcode" {
		return nil, structs.NotFound("job", r.JobID)
	}
	if len(r.Payload) > structs.DispatchPayloadSizeLimit {
		return nil, structs.Invalid("payload is %d bytes: at most %d", len(r.Payload), structs.DispatchPayloadSizeLimit)
	}
	return &structs.JobDispatchResponse{DispatchedJobID: "transcode/dispatch-1-abcdef01", EvalID: "e1", EvalCreateIndex: 7,
		JobCreateIndex: 7, WriteMeta: structs.WriteMeta{Index: 7}}, nil
}

func (f *fakePeriodic) Force(_ context.Context, r *structs.PeriodicForceRequest) (*structs.PeriodicForceResponse, error) {
	f.mu.Lock()
	f.force = r
	f.mu.Unlock()
	if r.JobID != "report" {
		return nil, structs.Invalid("job %q is not periodic", r.JobID)
	}
	return &structs.PeriodicForceResponse{JobID: "report/periodic-5", EvalID: "e2", EvalCreateIndex: 9, WriteMeta: structs.WriteMeta{Index: 9}}, nil
}

func TestPeriodicAndDispatchEndpoints(t *testing.T) {
	f := &fakePeriodic{}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.JobDispatch, f.Dispatch)
	rpcapi.Handle(h, rpcapi.JobPeriodicForce, f.Force)
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)

	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody                 string
		check                    func(t *testing.T)
	}{
		{name: "dispatch with Nomad's body", method: "POST", path: "/v1/job/transcode/dispatch",
			body:     `{"JobID":"transcode","Payload":"aGVsbG8=","Meta":{"input":"a"},"IdPrefixTemplate":"tmpl","Priority":70,"Region":"global","Namespace":"default"}`,
			wantCode: 200, wantBody: `{"DispatchedJobID":"transcode/dispatch-1-abcdef01","EvalID":"e1","EvalCreateIndex":7,"JobCreateIndex":7,"Index":7}`,
			check: func(t *testing.T) {
				r := f.dispatch
				if string(r.Payload) != "hello" || r.Meta["input"] != "a" || r.IDPrefixTemplate != "tmpl" || r.Namespace != "default" || r.Priority != 70 {
					t.Errorf("request = %+v", r)
				}
			}},
		{name: "dispatch idempotency token from the query", method: "PUT", path: "/v1/job/transcode/dispatch?idempotency_token=t1&namespace=ns1",
			body: `{}`, wantCode: 200, wantBody: `"DispatchedJobID"`,
			check: func(t *testing.T) {
				if f.dispatch.IdempotencyToken != "t1" || f.dispatch.Namespace != "ns1" {
					t.Errorf("request = %+v", f.dispatch)
				}
			}},
		{name: "dispatch idempotency token in the body", method: "PUT", path: "/v1/job/transcode/dispatch",
			body: `{"IdempotencyToken":"t2"}`, wantCode: 200,
			check: func(t *testing.T) {
				if f.dispatch.IdempotencyToken != "t2" {
					t.Errorf("request = %+v", f.dispatch)
				}
			}},
		{name: "dispatch of a child ID escaped in the URL", method: "POST", path: "/v1/job/a%2Fb/dispatch", wantCode: 404, wantBody: `job "a/b" not found`},
		{name: "dispatch payload that is not base64", method: "POST", path: "/v1/job/transcode/dispatch", body: `{"Payload":"***"}`, wantCode: 400},
		{name: "dispatch payload over the limit", method: "POST", path: "/v1/job/transcode/dispatch",
			body: `{"Payload":"` + strings.Repeat("QUJD", structs.DispatchPayloadSizeLimit/3+1) + `"}`, wantCode: 400, wantBody: "at most 16384"},
		{name: "dispatch ID mismatch", method: "POST", path: "/v1/job/transcode/dispatch", body: `{"JobID":"x"}`, wantCode: 400, wantBody: "does not match"},
		{name: "dispatch unknown field", method: "POST", path: "/v1/job/transcode/dispatch", body: `{"Paylod":"x"}`, wantCode: 400, wantBody: "unknown field"},
		{name: "periodic force", method: "POST", path: "/v1/job/report/periodic/force", wantCode: 200,
			wantBody: `{"EvalID":"e2","EvalCreateIndex":9,"Index":9}`},
		{name: "periodic force with Nomad's body", method: "PUT", path: "/v1/job/report/periodic/force",
			body: `{"Region":"global","Namespace":"default","SecretID":""}`, wantCode: 200, wantBody: `"EvalID":"e2"`},
		{name: "periodic force of a job that is not periodic", method: "POST", path: "/v1/job/web/periodic/force", wantCode: 400, wantBody: "not periodic"},
		{name: "periodic force GET", method: "GET", path: "/v1/job/report/periodic/force", wantCode: 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, ts.URL+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(body), tt.wantBody) {
				t.Fatalf("%s %s = %d %s, want %d with %q", tt.method, tt.path, resp.StatusCode, body, tt.wantCode, tt.wantBody)
			}
			if tt.check != nil {
				f.mu.Lock()
				defer f.mu.Unlock()
				tt.check(t)
			}
		})
	}
}
