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

// The fake backend's side of updateBackend: versions are the stored jobs,
// there are no deployments, plans echo the job, and the scheduler
// configuration is the default until set.

// handleUpdates binds the update methods to the fake.
func (f *fakeBackend) handleUpdates(h *rpcapi.Handlers) {
	rpcapi.Handle(h, rpcapi.JobVersions, f.JobVersions)
	rpcapi.Handle(h, rpcapi.JobRevert, f.JobRevert)
	rpcapi.Handle(h, rpcapi.JobPlan, f.JobPlan)
	rpcapi.Handle(h, rpcapi.JobEvaluate, f.JobEvaluate)
	rpcapi.Handle(h, rpcapi.DeploymentList, f.DeploymentList)
	rpcapi.Handle(h, rpcapi.DeploymentGet, f.DeploymentGet)
	rpcapi.Handle(h, rpcapi.DeploymentAllocations, f.DeploymentAllocations)
	rpcapi.Handle(h, rpcapi.DeploymentFail, f.DeploymentFail)
	rpcapi.Handle(h, rpcapi.DeploymentPause, f.DeploymentPause)
	rpcapi.Handle(h, rpcapi.SchedulerGetConfig, f.SchedulerGetConfig)
	rpcapi.Handle(h, rpcapi.SchedulerSetConfig, f.SchedulerSetConfig)
}

func (f *fakeBackend) JobVersions(_ context.Context, r *structs.JobVersionsRequest) (*structs.JobVersionsResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	for _, j := range f.jobs {
		if j.ID == r.JobID {
			resp := &structs.JobVersionsResponse{Versions: []*structs.Job{j}, QueryMeta: structs.QueryMeta{Index: 5}}
			if r.Diffs {
				resp.Diffs = []*structs.JobDiff{}
			}
			return resp, nil
		}
	}
	return nil, structs.NotFound("job", r.JobID)
}

func (f *fakeBackend) JobEvaluate(_ context.Context, r *structs.JobEvaluateRequest) (*structs.JobRegisterResponse, error) {
	if r.ForceReschedule {
		return &structs.JobRegisterResponse{EvalID: "eval-force-reschedule", EvalCreateIndex: 16, WriteMeta: structs.WriteMeta{Index: 16}}, nil
	}
	if !f.hasJob(r.JobID) || r.Namespace != "default" {
		return nil, structs.NotFound("job", r.JobID)
	}
	return &structs.JobRegisterResponse{EvalID: "eval-forced", EvalCreateIndex: 15, JobModifyIndex: 3, WriteMeta: structs.WriteMeta{Index: 15}}, nil
}

func (f *fakeBackend) JobRevert(_ context.Context, r *structs.JobRevertRequest) (*structs.JobRegisterResponse, error) {
	if err := f.record(structs.QueryOptions{Namespace: r.Namespace}); err != nil {
		return nil, err
	}
	if r.EnforcePriorVersion != nil && *r.EnforcePriorVersion != 2 {
		return nil, structs.NewError(structs.KindConflict, "current job version 2 does not match the enforced prior version %d", *r.EnforcePriorVersion)
	}
	return &structs.JobRegisterResponse{EvalID: "eval-revert", JobModifyIndex: 11, WriteMeta: structs.WriteMeta{Index: 11}}, nil
}

func (f *fakeBackend) JobPlan(_ context.Context, r *structs.JobPlanRequest) (*structs.JobPlanResponse, error) {
	resp := &structs.JobPlanResponse{
		JobModifyIndex: 5,
		Annotations: &structs.PlanAnnotations{DesiredTGUpdates: map[string]*structs.DesiredUpdates{
			r.Job.TaskGroups[0].Name: {Place: uint64(r.Job.TaskGroups[0].Count)},
		}},
		WriteMeta: structs.WriteMeta{Index: 5},
	}
	if r.Diff {
		resp.Diff = structs.DiffJobs(nil, r.Job)
	}
	if r.Job.TaskGroups[0].Count > 2 {
		resp.CreatedEvals = []*structs.Evaluation{{ID: "eval-blocked", Status: structs.EvalStatusBlocked}}
	}
	return resp, nil
}

func (f *fakeBackend) DeploymentList(_ context.Context, r *structs.DeploymentListRequest) (*structs.DeploymentListResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	if r.JobID != "" && !f.hasJob(r.JobID) {
		return nil, structs.NotFound("job", r.JobID)
	}
	return &structs.DeploymentListResponse{QueryMeta: structs.QueryMeta{Index: 3}}, nil
}

// hasJob reports whether the fake has the job of exactly this ID.
func (f *fakeBackend) hasJob(id string) bool {
	for _, j := range f.jobs {
		if j.ID == id {
			return true
		}
	}
	return false
}

func (f *fakeBackend) DeploymentGet(_ context.Context, r *structs.DeploymentSpecificRequest) (*structs.SingleDeploymentResponse, error) {
	if err := f.record(r.QueryOptions); err != nil {
		return nil, err
	}
	if r.JobID != "" && !f.hasJob(r.JobID) {
		return nil, structs.NotFound("job", r.JobID)
	}
	if r.JobID != "" {
		return &structs.SingleDeploymentResponse{}, nil
	}
	return nil, structs.NotFound("deployment", r.DeploymentID)
}

func (f *fakeBackend) DeploymentAllocations(_ context.Context, r *structs.DeploymentSpecificRequest) (*structs.AllocListResponse, error) {
	resp := &structs.AllocListResponse{QueryMeta: structs.QueryMeta{Index: 6}}
	if r.DeploymentID == "d1" {
		resp.Allocations = []*structs.AllocListStub{{ID: "a1", DeploymentStatus: &structs.AllocDeploymentStatus{}}}
	}
	return resp, nil
}

func (f *fakeBackend) DeploymentFail(_ context.Context, r *structs.DeploymentFailRequest) (*structs.DeploymentUpdateResponse, error) {
	if r.DeploymentID != "d1" || r.Namespace != "default" {
		return nil, structs.NotFound("deployment", r.DeploymentID)
	}
	v := uint64(1)
	return &structs.DeploymentUpdateResponse{EvalID: "eval-fail", EvalCreateIndex: 12, DeploymentModifyIndex: 12, RevertedJobVersion: &v, Index: 13}, nil
}

func (f *fakeBackend) DeploymentPause(_ context.Context, r *structs.DeploymentPauseRequest) (*structs.DeploymentUpdateResponse, error) {
	if r.DeploymentID != "d1" || r.Namespace != "default" {
		return nil, structs.NotFound("deployment", r.DeploymentID)
	}
	if r.Pause {
		return &structs.DeploymentUpdateResponse{DeploymentModifyIndex: 14, Index: 14}, nil
	}
	return &structs.DeploymentUpdateResponse{EvalID: "eval-resume", EvalCreateIndex: 15, DeploymentModifyIndex: 15, Index: 15}, nil
}

func (f *fakeBackend) SchedulerGetConfig(_ context.Context, r *structs.SchedulerConfigRequest) (*structs.SchedulerConfigResponse, error) {
	return &structs.SchedulerConfigResponse{SchedulerConfig: structs.DefaultSchedulerConfiguration(), QueryMeta: structs.QueryMeta{Index: 4}}, f.record(r.QueryOptions)
}

func (f *fakeBackend) SchedulerSetConfig(_ context.Context, r *structs.SchedulerSetConfigRequest) (*structs.SchedulerSetConfigResponse, error) {
	updated := !r.CAS || r.Config.ModifyIndex == 4
	return &structs.SchedulerSetConfigResponse{Updated: updated, WriteMeta: structs.WriteMeta{Index: 8}}, nil
}

func TestHTTPUpdateEndpoints(t *testing.T) {
	jobs := []*structs.Job{{ID: "web", Namespace: "default"}}
	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody                 string
	}{
		{"versions with diffs", "GET", "/v1/job/web/versions?diffs=true", "", 200, `"Diffs":[]`},
		{"versions of unknown job", "GET", "/v1/job/zzz/versions", "", 404, `job "zzz" not found`},
		{"plan", "PUT", "/v1/job/web/plan", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Count": 2, "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}, "Diff": true}`, 200,
			`"JobModifyIndex":5,"CreatedEvals":[],"Diff":{"Type":"Added","ID":"web"`},
		{"plan annotations", "POST", "/v1/job/web/plan", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Count": 2, "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, 200,
			`"Annotations":{"DesiredTGUpdates":{"g":{"Ignore":0,"Place":2,`},
		{"plan created evals", "PUT", "/v1/job/web/plan", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Count": 3, "Tasks": [{"Name": "t", "Driver": "mock_driver"}]}]}}`, 200,
			`"CreatedEvals":[{"ID":"eval-blocked",`},
		{"evaluate", "PUT", "/v1/job/web/evaluate", "", 200, `{"EvalID":"eval-forced","EvalCreateIndex":15,"JobModifyIndex":3`},
		{"evaluate with Nomad's body", "POST", "/v1/job/web/evaluate", `{"JobID":"web","EvalOptions":{"ForceReschedule":false},"Region":"","Namespace":"","SecretID":""}`, 200, `"EvalID":"eval-forced"`},
		{"evaluate force reschedule", "PUT", "/v1/job/web/evaluate", `{"JobID":"web","EvalOptions":{"ForceReschedule":true}}`, 200, `"EvalID":"eval-force-reschedule"`},
		{"evaluate ID mismatch", "PUT", "/v1/job/web/evaluate", `{"JobID":"api"}`, 400, "does not match"},
		{"evaluate unknown job", "PUT", "/v1/job/zzz/evaluate", "", 404, `job "zzz" not found`},
		{"evaluate other namespace", "PUT", "/v1/job/web/evaluate?namespace=dev", "", 404, "not found"},
		{"plan ID mismatch", "PUT", "/v1/job/other/plan", validJobBody, 400, `does not match "other" in the URL`},
		{"plan invalid job", "PUT", "/v1/job/web/plan", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t"}]}]}}`, 400, "driver is missing"},
		{"revert", "PUT", "/v1/job/web/revert", `{"JobID": "web", "JobVersion": 1, "EnforcePriorVersion": 2}`, 200, `"EvalID":"eval-revert"`},
		{"revert wrong prior", "PUT", "/v1/job/web/revert", `{"JobID": "web", "JobVersion": 1, "EnforcePriorVersion": 5}`, 409, "does not match the enforced prior version 5"},
		{"revert ID mismatch", "POST", "/v1/job/web/revert", `{"JobID": "api", "JobVersion": 1}`, 400, "does not match"},
		{"deployments", "GET", "/v1/deployments", "", 200, `[]`},
		{"deployment allocations", "GET", "/v1/deployment/allocations/d1", "", 200, `[{"ID":"a1",`},
		{"deployment allocations unknown", "GET", "/v1/deployment/allocations/zz", "", 200, `[]`},
		{"deployment unknown", "GET", "/v1/deployment/abc", "", 404, `deployment "abc" not found`},
		{"deployment fail", "PUT", "/v1/deployment/fail/d1", `{"DeploymentID": "d1"}`, 200,
			`{"EvalID":"eval-fail","EvalCreateIndex":12,"DeploymentModifyIndex":12,"RevertedJobVersion":1,"Index":13}`},
		// Nomad's client sends its WriteRequest fields in the body.
		{"deployment fail with Nomad's body", "PUT", "/v1/deployment/fail/d1", `{"DeploymentID":"d1","Region":"global","Namespace":"default","SecretID":""}`, 200, `"EvalID":"eval-fail"`},
		{"deployment fail body namespace", "PUT", "/v1/deployment/fail/d1", `{"DeploymentID":"d1","Namespace":"dev"}`, 404, "not found"},
		{"deployment fail query namespace wins", "PUT", "/v1/deployment/fail/d1?namespace=default", `{"DeploymentID":"d1","Namespace":"dev"}`, 200, `"EvalID":"eval-fail"`},
		{"deployment pause with Nomad's body", "PUT", "/v1/deployment/pause/d1", `{"DeploymentID":"d1","Pause":true,"Region":"global","Namespace":"default","SecretID":""}`, 200, `"DeploymentModifyIndex":14`},
		{"deployment fail no body", "POST", "/v1/deployment/fail/d1", "", 200, `"EvalID":"eval-fail"`},
		{"deployment fail unknown", "PUT", "/v1/deployment/fail/zz", "", 404, `deployment "zz" not found`},
		{"deployment fail ID mismatch", "PUT", "/v1/deployment/fail/d1", `{"DeploymentID": "d2"}`, 400, "does not match"},
		{"deployment fail GET", "GET", "/v1/deployment/fail/d1", "", 405, ""},
		{"deployment pause", "PUT", "/v1/deployment/pause/d1", `{"DeploymentID": "d1", "Pause": true}`, 200,
			`{"EvalID":"","EvalCreateIndex":0,"DeploymentModifyIndex":14,"RevertedJobVersion":null,"Index":14}`},
		{"deployment resume", "POST", "/v1/deployment/pause/d1", `{"DeploymentID": "d1", "Pause": false}`, 200, `"EvalID":"eval-resume"`},
		{"deployment pause unknown", "PUT", "/v1/deployment/pause/zz", `{"Pause": true}`, 404, `not found`},
		{"scheduler config", "GET", "/v1/operator/scheduler/configuration", "", 200,
			`{"SchedulerConfig":{"SchedulerAlgorithm":"binpack","PreemptionConfig":{"SystemSchedulerEnabled":true,"SysBatchSchedulerEnabled":false,"BatchSchedulerEnabled":false,"ServiceSchedulerEnabled":false}`},
		{"set scheduler config", "PUT", "/v1/operator/scheduler/configuration", `{"PreemptionConfig": {"ServiceSchedulerEnabled": true}}`, 200, `{"Updated":true,"Index":8}`},
		{"set scheduler config stale cas", "POST", "/v1/operator/scheduler/configuration?cas=3", `{}`, 200, `{"Updated":false,"Index":8}`},
		{"set scheduler config bad cas", "PUT", "/v1/operator/scheduler/configuration?cas=x", `{}`, 400, `cas "x" is not an index`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ts := newFakeServer(t, &fakeBackend{jobs: jobs})
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
				t.Errorf("body %s does not contain %s", body, tc.wantBody)
			}
		})
	}
}

// TestSchedulerSetConfigFields: every field of Nomad's configuration
// reaches the server.
func TestSchedulerSetConfigFields(t *testing.T) {
	var got structs.SchedulerConfiguration
	h := rpcapi.NewHandlers()
	rpcapi.Handle(h, rpcapi.SchedulerSetConfig, func(_ context.Context, r *structs.SchedulerSetConfigRequest) (*structs.SchedulerSetConfigResponse, error) {
		got = r.Config
		return &structs.SchedulerSetConfigResponse{Updated: true, WriteMeta: structs.WriteMeta{Index: 3}}, nil
	})
	ts := httptest.NewServer(New(nil, &Config{RPC: h, Agent: fakeInfo{}, Logger: slog.New(slog.DiscardHandler)}).Handler())
	defer ts.Close()
	body := `{"SchedulerAlgorithm":"spread","PreemptionConfig":{"SystemSchedulerEnabled":true,"SysBatchSchedulerEnabled":true,` +
		`"BatchSchedulerEnabled":true,"ServiceSchedulerEnabled":true},"MemoryOversubscriptionEnabled":true,` +
		`"RejectJobRegistration":true,"PauseEvalBroker":true,"NodeLimitForFeasibilityChecks":123,"CreateIndex":0,"ModifyIndex":0}`
	req, _ := http.NewRequest(http.MethodPut, ts.URL+"/v1/operator/scheduler/configuration", strings.NewReader(body))
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := structs.SchedulerConfiguration{SchedulerAlgorithm: "spread", PreemptionConfig: structs.PreemptionConfig{
		SystemSchedulerEnabled: true, SysBatchSchedulerEnabled: true, BatchSchedulerEnabled: true, ServiceSchedulerEnabled: true},
		MemoryOversubscriptionEnabled: true, RejectJobRegistration: true, PauseEvalBroker: true, NodeLimitForFeasibilityChecks: 123}
	if resp.StatusCode != http.StatusOK || got != want {
		t.Fatalf("status %d, sent %+v, want %+v", resp.StatusCode, got, want)
	}
}
