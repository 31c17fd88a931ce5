package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// TestJobRegisterSubmission: a registration's Submission (Nomad's
// RegisterOpts) reaches the server; a malformed one is refused.
func TestJobRegisterSubmission(t *testing.T) {
	b := &fakeBackend{}
	ts := newFakeServer(t, b)
	body := `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]},
		"Submission": {"Source": "job \"web\" {}", "Format": "hcl2", "VariableFlags": {"X": "x"}, "Variables": "a = 1"}}`
	resp := doRequest(t, ts, "PUT", "/v1/jobs", body)
	if resp.code != 200 || len(b.registers) != 1 {
		t.Fatalf("register = %d %s", resp.code, resp.body)
	}
	sub := b.registers[0].Submission
	if sub == nil || sub.Source != `job "web" {}` || sub.Format != "hcl2" || sub.VariableFlags["X"] != "x" || sub.Variables != "a = 1" {
		t.Fatalf("submission passed on: %+v", sub)
	}
	bad := strings.Replace(body, `"hcl2"`, `"yaml"`, 1)
	if r := doRequest(t, ts, "PUT", "/v1/jobs", bad); r.code != 400 || !strings.Contains(r.body, `format "yaml"`) {
		t.Fatalf("bad format = %d %s", r.code, r.body)
	}
}

func TestJobSubmissionRoute(t *testing.T) {
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.JobGetSubmission, func(_ context.Context, r *structs.JobSubmissionRequest) (*structs.JobSubmissionResponse, error) {
		if r.JobID != "web" || r.Version != 1 || r.Namespace != "first" {
			return nil, structs.NewError(structs.KindNotFound, "job source not found")
		}
		return &structs.JobSubmissionResponse{Submission: &structs.JobSubmission{Source: "src", Format: "hcl2", JobID: "web", Version: 1},
			QueryMeta: structs.QueryMeta{Index: 5}}, nil
	})
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	for _, tt := range []struct {
		path     string
		wantCode int
		wantBody string
	}{
		{"/v1/job/web/submission?version=1&namespace=first", 200, `{"Source":"src","Format":"hcl2","VariableFlags":null,"Variables":""}`},
		{"/v1/job/web/submission?version=0&namespace=first", 404, "job source not found"},
		{"/v1/job/web/submission", 400, "missing version"},
		{"/v1/job/web/submission?version=-1", 400, "is invalid"},
	} {
		rec := httptest.NewRecorder()
		hs.Handler().ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
		got, _ := io.ReadAll(rec.Body)
		if rec.Code != tt.wantCode || !strings.Contains(string(got), tt.wantBody) {
			t.Errorf("GET %s = %d %s; want %d with %s", tt.path, rec.Code, got, tt.wantCode, tt.wantBody)
		}
	}
}

type testResponse struct {
	code int
	body string
}

// doRequest sends one request to ts.
func doRequest(t *testing.T, ts *httptest.Server, method, path, body string) testResponse {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return testResponse{code: resp.StatusCode, body: string(b)}
}
