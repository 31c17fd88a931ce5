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

// fakeScaling records the scaling requests it gets and answers them as
// the server would for job "web" with group "g" (scaling bounds [1, 5]).
type fakeScaling struct {
	mu    sync.Mutex // guards the fields below
	scale []*structs.JobScaleRequest
	lists []*structs.ScalingPolicyListRequest
	tags  []*structs.JobTagRequest
}

func (f *fakeScaling) jobScale(_ context.Context, r *structs.JobScaleRequest) (*structs.JobRegisterResponse, error) {
	f.mu.Lock()
	f.scale = append(f.scale, r)
	f.mu.Unlock()
	if r.Count != nil && (*r.Count < 1 || *r.Count > 5) {
		return nil, structs.Invalid("group %q: count %d is outside the scaling block's bounds [1, 5]", r.Group, *r.Count)
	}
	return &structs.JobRegisterResponse{EvalID: "eval-1", EvalCreateIndex: 9, JobModifyIndex: 9, WriteMeta: structs.WriteMeta{Index: 9}}, nil
}

func (f *fakeScaling) jobScaleStatus(_ context.Context, r *structs.JobSpecificRequest) (*structs.JobScaleStatusResponse, error) {
	if r.JobID != "web" {
		return nil, structs.NotFound("job", r.JobID)
	}
	three := int64(3)
	return &structs.JobScaleStatusResponse{JobID: "web", Namespace: "default", JobModifyIndex: 9,
		TaskGroups: map[string]structs.TaskGroupScaleStatus{
			"g": {Desired: 3, Placed: 3, Running: 2, Healthy: 2, Events: []*structs.ScalingEvent{{Count: &three, PreviousCount: 1, Time: 7}}},
			"h": {Desired: 1},
		}, QueryMeta: structs.QueryMeta{Index: 9}}, nil
}

func (f *fakeScaling) policyList(_ context.Context, r *structs.ScalingPolicyListRequest) (*structs.ScalingPolicyListResponse, error) {
	f.mu.Lock()
	f.lists = append(f.lists, r)
	f.mu.Unlock()
	return &structs.ScalingPolicyListResponse{Policies: []*structs.ScalingPolicyListStub{{ID: "p1", Type: "horizontal", Enabled: true,
		Target: map[string]string{"Namespace": "default", "Job": "web", "Group": "g"}}}}, nil
}

func (f *fakeScaling) policyGet(_ context.Context, r *structs.ScalingPolicySpecificRequest) (*structs.SingleScalingPolicyResponse, error) {
	if r.ID != "p1" {
		return nil, structs.NotFound("scaling policy", r.ID)
	}
	return &structs.SingleScalingPolicyResponse{Policy: &structs.ScalingPolicy{ID: "p1", Type: "horizontal", Min: 1, Max: 5, Enabled: true,
		Target: map[string]string{"Namespace": "default", "Job": "web", "Group": "g"}, Policy: map[string]any{"cooldown": "1m"}}}, nil
}

func (f *fakeScaling) tag(_ context.Context, r *structs.JobTagRequest) (*structs.JobTagResponse, error) {
	f.mu.Lock()
	f.tags = append(f.tags, r)
	f.mu.Unlock()
	return &structs.JobTagResponse{Version: 2, WriteMeta: structs.WriteMeta{Index: 10}}, nil
}

func newScalingAPI(t *testing.T) (*httptest.Server, *fakeScaling) {
	t.Helper()
	f := &fakeScaling{}
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.JobScale, f.jobScale)
	rpcapi.Handle(h, rpcapi.JobScaleStatus, f.jobScaleStatus)
	rpcapi.Handle(h, rpcapi.ScalingPolicyList, f.policyList)
	rpcapi.Handle(h, rpcapi.ScalingPolicyGet, f.policyGet)
	rpcapi.Handle(h, rpcapi.JobTagVersion, f.tag)
	hs := New(nil, &Config{RPC: h, Agent: fakeInfo{}, ParseJob: fakeParse, Logger: slog.New(slog.DiscardHandler)})
	ts := httptest.NewServer(hs.Handler())
	t.Cleanup(ts.Close)
	return ts, f
}

func TestScalingEndpoints(t *testing.T) {
	ts, f := newScalingAPI(t)
	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody                 string // a substring of the answer
	}{
		{"scale", "POST", "/v1/job/web/scale", `{"Count": 4, "Target": {"Group": "g"}, "Message": "up", "Meta": {"by": "ci"}}`,
			200, `"EvalID":"eval-1"`},
		{"scale outside the bounds", "POST", "/v1/job/web/scale", `{"Count": 9, "Target": {"Group": "g"}}`,
			400, `group "g": count 9 is outside the scaling block's bounds [1, 5]`},
		{"scale without a group", "PUT", "/v1/job/web/scale", `{"Count": 2}`, 400, `set "Target": {"Group": "<group>"}`},
		{"scale another job's target", "PUT", "/v1/job/web/scale", `{"Count": 2, "Target": {"Group": "g", "Job": "api"}}`,
			400, `job "api" in the target does not match "web"`},
		{"event only", "POST", "/v1/job/web/scale?namespace=prod", `{"Target": {"Group": "g"}, "Error": true, "Message": "no metrics"}`, 200, `"JobModifyIndex"`},
		{"status", "GET", "/v1/job/web/scale", "", 200,
			`"TaskGroups":{"g":{"Desired":3,"Placed":3,"Running":2,"Healthy":2,"Unhealthy":0,"Events":[{"Time":7,"Count":3,"PreviousCount":1`},
		{"status: a group without events has []", "GET", "/v1/job/web/scale", "", 200, `"h":{"Desired":1,"Placed":0,"Running":0,"Healthy":0,"Unhealthy":0,"Events":[]}`},
		{"status of an unknown job", "GET", "/v1/job/nope/scale", "", 404, `nope`},
		{"policies", "GET", "/v1/scaling/policies?job=web&type=horizontal", "", 200, `[{"ID":"p1","Enabled":true,"Type":"horizontal"`},
		{"policy", "GET", "/v1/scaling/policy/p1", "", 200, `"Namespace":"default","ID":"p1","Type":"horizontal"`},
		{"unknown policy", "GET", "/v1/scaling/policy/zz", "", 404, "zz"},
		{"tag", "PUT", "/v1/job/web/versions/golden/tag", `{"Version": 1, "Description": "good"}`, 200, `{"Version":2}`},
		{"untag", "DELETE", "/v1/job/web/versions/golden/tag", "", 200, `{"Version":2}`},
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
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.wantCode || !strings.Contains(string(b), tt.wantBody) {
				t.Errorf("%s %s = %d %s\nwant %d and %s", tt.method, tt.path, resp.StatusCode, b, tt.wantCode, tt.wantBody)
			}
		})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	first := f.scale[0]
	if first.JobID != "web" || first.Group != "g" || *first.Count != 4 || first.Message != "up" || first.Meta["by"] != "ci" || first.Namespace != "default" {
		t.Errorf("first scale request = %+v", first)
	}
	if ev := f.scale[len(f.scale)-1]; ev.Count != nil || !ev.Error || ev.Namespace != "prod" {
		t.Errorf("event-only request = %+v", ev)
	}
	if l := f.lists[0]; l.Job != "web" || l.Type != "horizontal" {
		t.Errorf("list request = %+v", l)
	}
	if tag := f.tags[0]; tag.Name != "golden" || tag.Description != "good" || *tag.Version != 1 || tag.Unset {
		t.Errorf("tag request = %+v", tag)
	}
	if un := f.tags[1]; un.Name != "golden" || !un.Unset {
		t.Errorf("untag request = %+v", un)
	}
}
