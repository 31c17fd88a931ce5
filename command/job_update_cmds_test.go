package command

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

func planFixture() *api.JobPlanResponse {
	return &api.JobPlanResponse{
		JobModifyIndex: 7,
		Diff: &api.JobDiff{Type: "Edited", ID: "hello",
			Fields: []*api.FieldDiff{{Type: "Edited", Name: "Priority", Old: "50", New: "80"}},
			TaskGroups: []*api.TaskGroupDiff{{
				Type: "Edited", Name: "web", Updates: map[string]uint64{"create/destroy update": 1, "ignore": 2},
				Fields: []*api.FieldDiff{{Type: "Edited", Name: "Count", Old: "2", New: "3"}},
				Tasks: []*api.TaskDiff{{
					Type: "Edited", Name: "app", Annotations: []string{"forces create/destroy update"},
					Fields: []*api.FieldDiff{{Type: "Added", Name: "Env[V]", New: "2"}},
					Objects: []*api.ObjectDiff{{Type: "Edited", Name: "Config", Fields: []*api.FieldDiff{
						{Type: "Edited", Name: "run_for", Old: "10s", New: "20s"},
						{Type: "Deleted", Name: "exit_code", Old: "0"},
					}}},
				}, {Type: "None", Name: "side"}},
			}},
		},
		Annotations: &api.PlanAnnotations{
			DesiredTGUpdates: map[string]*api.DesiredUpdates{"web": {Ignore: 2, DestructiveUpdate: 1, Preemptions: 1}},
			PreemptedAllocs:  []*api.AllocationListStub{{ID: allocID, JobID: "low", NodeID: nodeID, TaskGroup: "cache"}},
		},
	}
}

func TestJobPlanShowsDiffAndDryRun(t *testing.T) {
	f := newFakeAgent(t)
	f.json("PUT /v1/job/hello/plan", planFixture())
	path := writeJobFile(t)
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "plan", path)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (changes): %s", r.code, r.stderr)
	}
	golden(t, "job_plan", strings.ReplaceAll(r.stdout, path, "hello.hcl"))
}

func TestJobPlanExitCodes(t *testing.T) {
	noChange := &api.JobPlanResponse{JobModifyIndex: 7, Diff: &api.JobDiff{Type: "None", ID: "hello"},
		Annotations: &api.PlanAnnotations{DesiredTGUpdates: map[string]*api.DesiredUpdates{"web": {Ignore: 2, InPlaceUpdate: 1}}}}
	f := newFakeAgent(t)
	f.json("PUT /v1/job/hello/plan", noChange)
	if r := runCLI(t, f.srv.URL, helloParser(t), "job", "plan", writeJobFile(t)); r.code != 0 || !strings.Contains(r.stdout, "- All tasks successfully allocated.") {
		t.Fatalf("no change: %+v", r)
	}
	g := newFakeAgent(t)
	g.fail("PUT /v1/job/hello/plan", http.StatusBadRequest, "group \"web\": count -1 must not be negative")
	if r := runCLI(t, g.srv.URL, helloParser(t), "job", "plan", writeJobFile(t)); r.code != 255 || !strings.Contains(r.stderr, "count -1") {
		t.Fatalf("error: %+v", r)
	}
}

func TestJobRunCheckIndex(t *testing.T) {
	var got api.JobRegisterRequest
	f := newFakeAgent(t)
	f.mux.HandleFunc("PUT /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		http.Error(w, "enforcing job modify index 7: job \"hello\" exists with conflicting job modify index 9", http.StatusConflict)
	})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", "-check-index", "7", writeJobFile(t))
	if r.code != 1 || !got.EnforceIndex || got.JobModifyIndex != 7 || !strings.Contains(r.stderr, "conflicting job modify index 9") {
		t.Fatalf("exit %d, request %+v, stderr %s", r.code, got, r.stderr)
	}
}

func TestJobHistory(t *testing.T) {
	v := func(n uint64, stable bool) *api.Job {
		return &api.Job{ID: api.String("hello"), Version: &n, Stable: &stable, SubmitTime: new(int64(fixedNow.UnixNano()))}
	}
	f := newFakeAgent(t)
	f.json("GET /v1/job/hello", &api.Job{ID: api.String("hello")})
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "hello"}})
	f.json("GET /v1/job/hello/versions", &api.JobVersionsResponse{
		Versions: []*api.Job{v(1, false), v(0, true)},
		Diffs: []*api.JobDiff{{Type: "Edited", ID: "hello", TaskGroups: []*api.TaskGroupDiff{{Type: "Edited", Name: "web",
			Fields: []*api.FieldDiff{{Type: "Edited", Name: "Count", Old: "1", New: "2"}}}}}},
	})
	r := runCLI(t, f.srv.URL, nil, "job", "history", "-p", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	golden(t, "job_history", r.stdout)
}

func TestJobRevert(t *testing.T) {
	var got api.JobRevertRequest
	f := newFakeAgent(t)
	f.json("GET /v1/job/hello", &api.Job{ID: api.String("hello")})
	f.json("GET /v1/jobs", []*api.JobListStub{{ID: "hello"}})
	f.mux.HandleFunc("PUT /v1/job/hello/revert", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &got)
		_ = json.NewEncoder(w).Encode(&api.JobRegisterResponse{EvalID: evalID})
	})
	r := runCLI(t, f.srv.URL, nil, "job", "revert", "-detach", "hello", "3")
	if r.code != 0 || got.JobVersion != 3 || got.JobID != "hello" || !strings.Contains(r.stdout, "Evaluation ID: "+evalID) {
		t.Fatalf("exit %d, request %+v, out %s %s", r.code, got, r.stdout, r.stderr)
	}
	// A version that is not a number is the name of a version tag.
	f.json("GET /v1/job/hello/versions", api.JobVersionsResponse{Versions: []*api.Job{
		{ID: api.String("hello"), Version: uint64p(2)},
		{ID: api.String("hello"), Version: uint64p(1), VersionTag: json.RawMessage(`{"Name":"golden","Description":"good"}`)},
	}})
	if r := runCLI(t, f.srv.URL, nil, "job", "revert", "hello", "x"); r.code != 1 || !strings.Contains(r.stderr, `job "hello" has no version numbered or tagged "x"`) {
		t.Fatalf("bad version: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "job", "revert", "-detach", "hello", "golden"); r.code != 0 || got.JobVersion != 1 {
		t.Fatalf("revert to a tag: %+v, request %+v", r, got)
	}
}

func TestOperatorSchedulerConfig(t *testing.T) {
	cfg := &api.SchedulerConfiguration{SchedulerAlgorithm: "binpack", PreemptionConfig: api.PreemptionConfig{SystemSchedulerEnabled: true}, ModifyIndex: 5}
	var put api.SchedulerConfiguration
	var query string
	f := newFakeAgent(t)
	f.json("GET /v1/operator/scheduler/configuration", &api.SchedulerConfigurationResponse{SchedulerConfig: cfg, Index: 5})
	f.mux.HandleFunc("PUT /v1/operator/scheduler/configuration", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &put)
		query = r.URL.RawQuery
		_ = json.NewEncoder(w).Encode(&api.SchedulerSetConfigurationResponse{Updated: !strings.Contains(query, "cas=4"), Index: 6})
	})
	r := runCLI(t, f.srv.URL, nil, "operator", "scheduler", "get-config")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	golden(t, "operator_scheduler_get_config", r.stdout)

	r = runCLI(t, f.srv.URL, nil, "operator", "scheduler", "set-config", "-preempt-service-scheduler=true", "-preempt-system-scheduler=false")
	if r.code != 0 || r.stdout != "Scheduler configuration updated!\n" {
		t.Fatalf("set-config: %+v", r)
	}
	want := api.PreemptionConfig{ServiceSchedulerEnabled: true}
	if put.PreemptionConfig != want || put.SchedulerAlgorithm != "binpack" || strings.Contains(query, "cas") {
		t.Fatalf("sent %+v (query %q)", put, query)
	}
	r = runCLI(t, f.srv.URL, nil, "operator", "scheduler", "set-config", "-check-index", "4", "-preempt-batch-scheduler=true")
	if r.code != 1 || !strings.Contains(r.stderr, "could not be atomically updated") || !strings.Contains(query, "cas=4") {
		t.Fatalf("stale CAS: %+v (query %q)", r, query)
	}
}

func TestJobStatusShowsLatestDeployment(t *testing.T) {
	s := fixtureJobStatus()
	s.Deployment = &api.Deployment{ID: "d1e2f3a4-0000-0000-0000-000000000000", Status: "running", StatusDescription: "Deployment is running",
		TaskGroups: map[string]*api.DeploymentState{"web": {AutoRevert: true, DesiredTotal: 3, PlacedAllocs: 2, HealthyAllocs: 1,
			RequireProgressBy: fixedNow.Add(10 * time.Minute)}}}
	golden(t, "job_status_deployment", formatJobStatus(s, fixedNow, false))
}

func uint64p(v uint64) *uint64 { return &v }
