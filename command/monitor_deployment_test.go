package command

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/drover-io/drover/api"
)

const runDeploymentID = "dddd1111-0000-0000-0000-000000000000"

// deploymentFixture is runJobFixture for a service job whose registration
// (JobModifyIndex 5) made deployment runDeploymentID: each read of the
// deployment and of the job's allocations returns the next of steps (the
// last one over and over), with a higher index, as blocking queries do.
func deploymentFixture(t *testing.T, steps []deploymentStep) *fakeAgent {
	t.Helper()
	pending := &api.AllocationListStub{ID: allocID, NodeID: nodeID, TaskGroup: "web", JobID: "hello", ClientStatus: "pending", CreateIndex: 6}
	f := newFakeAgent(t)
	f.json("PUT /v1/jobs", api.JobRegisterResponse{EvalID: evalID, JobModifyIndex: 5})
	f.json("GET /v1/evaluation/"+evalID, &api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete"})
	f.json("GET /v1/evaluation/"+evalID+"/allocations", []*api.AllocationListStub{pending})
	dep := func(status, desc string, healthy, unhealthy int) *api.Deployment {
		return &api.Deployment{ID: runDeploymentID, JobID: "hello", JobVersion: 0, JobSpecModifyIndex: 5,
			Status: status, StatusDescription: desc, CreateIndex: 6, ModifyIndex: 6,
			TaskGroups: map[string]*api.DeploymentState{"web": {DesiredTotal: 1, PlacedAllocs: 1, HealthyAllocs: healthy, UnhealthyAllocs: unhealthy}}}
	}
	f.json("GET /v1/job/hello/deployment", dep("running", "Deployment is running", 0, 0))
	var depReads, allocReads atomic.Int64
	f.mux.HandleFunc("GET /v1/deployment/"+runDeploymentID, func(w http.ResponseWriter, r *http.Request) {
		n := int(depReads.Add(1))
		s := steps[min(n, len(steps)-1)]
		w.Header().Set("X-Nomad-Index", strconv.Itoa(10+n))
		_ = json.NewEncoder(w).Encode(dep(s.status, s.desc, s.healthy, s.unhealthy))
	})
	// The allocations are read before each read of the deployment.
	f.mux.HandleFunc("GET /v1/job/hello/allocations", func(w http.ResponseWriter, r *http.Request) {
		n := int(allocReads.Add(1)) - 1
		s := steps[min(n, len(steps)-1)]
		a := *pending
		a.ClientStatus, a.TaskStates = s.client, s.tasks
		if s.health != nil {
			a.DeploymentStatus = &api.AllocDeploymentStatus{Healthy: s.health}
		}
		old := &api.AllocationListStub{ID: "old-alloc", JobVersion: 0, CreateIndex: 2, ClientStatus: "failed"}
		w.Header().Set("X-Nomad-Index", strconv.Itoa(100+n))
		_ = json.NewEncoder(w).Encode([]*api.AllocationListStub{old, &a})
	})
	return f
}

// deploymentStep is what the agent reports at one point of a deployment.
type deploymentStep struct {
	status, desc       string
	healthy, unhealthy int
	client             string
	health             *bool
	tasks              map[string]*api.TaskState
}

// TestJobRunMonitorsDeployment: the first version of a service job is
// followed through its deployment until it is successful.
func TestJobRunMonitorsDeployment(t *testing.T) {
	yes := true
	f := deploymentFixture(t, []deploymentStep{
		{status: "running", desc: "Deployment is running", client: "pending"},
		{status: "running", desc: "Deployment is running", client: "running"},
		{status: "running", desc: "Deployment is running", healthy: 1, client: "running", health: &yes},
		{status: "successful", desc: "Deployment completed successfully", healthy: 1, client: "running", health: &yes},
	})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 0 {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	golden(t, "job_run_deployment", r.stdout)
	if strings.Contains(r.stdout, "old-alloc") {
		t.Errorf("followed an allocation of an earlier registration:\n%s", r.stdout)
	}
}

// TestJobRunDeploymentFailsExits1: the allocation is running when the
// evaluation ends, then fails: the deployment fails and job run exits 1,
// saying why, where it used to exit 0 once the allocation ran.
func TestJobRunDeploymentFailsExits1(t *testing.T) {
	no := false
	failedTask := map[string]*api.TaskState{"greeter": {State: "dead", Failed: true, Events: []*api.TaskEvent{
		{Type: "Started", DisplayMessage: "Task started by client"},
		{Type: "Terminated", DisplayMessage: "Exit Code: 3"},
		{Type: "Not Restarting", FailsTask: true, DisplayMessage: "Exceeded allowed attempts 0 in interval 30m0s and mode is \"fail\""},
	}}}
	f := deploymentFixture(t, []deploymentStep{
		{status: "running", desc: "Deployment is running", client: "running"},
		{status: "running", desc: "Deployment is running", client: "failed", health: &no, tasks: failedTask},
		{status: "failed", desc: "Failed due to unhealthy allocations", unhealthy: 1, client: "failed", health: &no, tasks: failedTask},
	})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", r.code, r.stdout)
	}
	for _, want := range []string{
		`Monitoring deployment "dddd1111"`,
		`Allocation "1234abcd" is unhealthy`,
		`Deployment "dddd1111" failed: Failed due to unhealthy allocations`,
		`Task "greeter" failed: Terminated: Exit Code: 3`,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestJobRunPlacementFailureWithDeployment: allocations could not be
// placed and the deployment waits for them: job run says so and exits 2
// at once instead of waiting for the progress deadline.
func TestJobRunPlacementFailureWithDeployment(t *testing.T) {
	f := runJobFixture(t,
		&api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete",
			FailedTGAllocs: map[string]*api.AllocationMetric{"web": fixtureMetric()}},
		nil, nil)
	f.json("GET /v1/job/hello/deployment", &api.Deployment{ID: runDeploymentID, JobID: "hello", JobSpecModifyIndex: 5, Status: "running"})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 2 || !strings.Contains(r.stdout, "drover deployment status dddd1111") {
		t.Fatalf("exit %d, want 2:\n%s", r.code, r.stdout)
	}
}

// TestJobRunOlderDeploymentIgnored: the job's latest deployment is of an
// earlier version (the new one has no update strategy): the allocations
// are followed instead.
func TestJobRunOlderDeploymentIgnored(t *testing.T) {
	running := &api.AllocationListStub{ID: allocID, NodeID: nodeID, TaskGroup: "web", JobID: "hello", ClientStatus: "running"}
	f := runJobFixture(t, &api.Evaluation{ID: evalID, JobID: "hello", Type: "service", Status: "complete"},
		[]*api.AllocationListStub{running}, []*api.AllocationListStub{running})
	f.json("GET /v1/job/hello/deployment", &api.Deployment{ID: runDeploymentID, JobID: "hello", JobSpecModifyIndex: 3, Status: "failed"})
	r := runCLI(t, f.srv.URL, helloParser(t), "job", "run", writeJobFile(t))
	if r.code != 0 || strings.Contains(r.stdout, "Monitoring deployment") || !strings.Contains(r.stdout, "All allocations are running") {
		t.Fatalf("exit %d:\n%s", r.code, r.stdout)
	}
}
