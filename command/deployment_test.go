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

const deploymentID = "d1e2f3a4-0000-1111-2222-333344445555"

func fixtureDeployment() *api.Deployment {
	return &api.Deployment{
		ID: deploymentID, Namespace: "default", JobID: "hello", JobVersion: 3,
		Status: "running", StatusDescription: "Deployment is running",
		TaskGroups: map[string]*api.DeploymentState{
			"web": {AutoRevert: true, ProgressDeadline: 10 * time.Minute, RequireProgressBy: fixedNow.Add(10 * time.Minute),
				DesiredTotal: 3, PlacedAllocs: 2, HealthyAllocs: 1},
			"db": {DesiredTotal: 1, PlacedAllocs: 1, UnhealthyAllocs: 1},
		},
	}
}

func TestDeploymentListAndStatus(t *testing.T) {
	failed := fixtureDeployment()
	failed.ID, failed.JobVersion, failed.Status = "a0b1c2d3-9999", 2, "failed"
	failed.StatusDescription = "Failed due to progress deadline - rolling back to job version 1"
	f := newFakeAgent(t)
	f.json("GET /v1/deployments", []*api.Deployment{fixtureDeployment(), failed})
	f.json("GET /v1/deployment/d1e2", fixtureDeployment())
	f.fail("GET /v1/deployment/zz", http.StatusNotFound, `deployment "zz" not found`)

	r := runCLI(t, f.srv.URL, nil, "deployment", "list")
	if r.code != 0 {
		t.Fatalf("list: exit %d: %s", r.code, r.stderr)
	}
	golden(t, "deployment_list", r.stdout)
	r = runCLI(t, f.srv.URL, nil, "deployment", "status", "d1e2")
	if r.code != 0 {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	golden(t, "deployment_status", r.stdout)
	r = runCLI(t, f.srv.URL, nil, "deployment", "status", "-verbose", "d1e2")
	if r.code != 0 || !strings.Contains(r.stdout, "ID          = "+deploymentID+"\n") {
		t.Fatalf("status -verbose: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "deployment", "status", "zz"); r.code != 1 || !strings.Contains(r.stderr, `deployment "zz" not found`) {
		t.Fatalf("unknown: %+v", r)
	}
	if r := runCLI(t, f.srv.URL, nil, "deployment", "status"); r.code != 1 || !strings.Contains(r.stderr, "takes one argument") {
		t.Fatalf("no argument: %+v", r)
	}

	g := newFakeAgent(t)
	g.json("GET /v1/deployments", []*api.Deployment{})
	if r := runCLI(t, g.srv.URL, nil, "deployment", "list"); r.code != 0 || r.stdout != "No deployments found\n" {
		t.Fatalf("empty list: %+v", r)
	}
}

// TestDeploymentStatusCanaries shows Nomad's Promoted and Canaries
// columns for a deployment with canaries.
func TestDeploymentStatusCanaries(t *testing.T) {
	d := fixtureDeployment()
	d.StatusDescription = "Deployment is running but requires manual promotion"
	d.TaskGroups["web"].DesiredCanaries = 1
	d.TaskGroups["web"].PlacedCanaries = []string{"c1"}
	f := newFakeAgent(t)
	f.json("GET /v1/deployment/d1e2", d)
	r := runCLI(t, f.srv.URL, nil, "deployment", "status", "d1e2")
	if r.code != 0 {
		t.Fatalf("status: exit %d: %s", r.code, r.stderr)
	}
	golden(t, "deployment_status_canaries", r.stdout)
}

func TestDeploymentChanges(t *testing.T) {
	reverted := uint64(2)
	tests := []struct {
		name     string
		args     []string
		path     string
		resp     api.DeploymentUpdateResponse
		wantBody string
		wantOut  string
	}{
		{"fail", []string{"fail", "-detach", "d1e2"}, "/v1/deployment/fail/" + deploymentID,
			api.DeploymentUpdateResponse{EvalID: evalID, RevertedJobVersion: &reverted},
			`{"DeploymentID":"` + deploymentID + `"}`,
			"Deployment \"d1e2f3a4\" failed\nJob \"hello\" reverted to version 2\nEvaluation ID: " + evalID + "\n"},
		{"pause", []string{"pause", "d1e2"}, "/v1/deployment/pause/" + deploymentID,
			api.DeploymentUpdateResponse{},
			`{"DeploymentID":"` + deploymentID + `","Pause":true}`,
			"Deployment \"d1e2f3a4\" paused\n"},
		{"resume", []string{"resume", "-detach", "-verbose", "d1e2"}, "/v1/deployment/pause/" + deploymentID,
			api.DeploymentUpdateResponse{EvalID: evalID},
			`{"DeploymentID":"` + deploymentID + `","Pause":false}`,
			"Deployment \"" + deploymentID + "\" resumed\nEvaluation ID: " + evalID + "\n"},
		{"promote all", []string{"promote", "-detach", "d1e2"}, "/v1/deployment/promote/" + deploymentID,
			api.DeploymentUpdateResponse{EvalID: evalID},
			`{"DeploymentID":"` + deploymentID + `","All":true}`,
			"Deployment \"d1e2f3a4\" promoted\nEvaluation ID: " + evalID + "\n"},
		{"promote groups", []string{"promote", "-detach", "-group", "web", "-group", "db", "d1e2"}, "/v1/deployment/promote/" + deploymentID,
			api.DeploymentUpdateResponse{EvalID: evalID},
			`{"DeploymentID":"` + deploymentID + `","All":false,"Groups":["web","db"]}`,
			"Deployment \"d1e2f3a4\" promoted\nEvaluation ID: " + evalID + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body string
			f := newFakeAgent(t)
			f.json("GET /v1/deployment/d1e2", fixtureDeployment())
			f.mux.HandleFunc("PUT "+tc.path, func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				body = strings.TrimSpace(string(b))
				_ = json.NewEncoder(w).Encode(&tc.resp)
			})
			r := runCLI(t, f.srv.URL, nil, append([]string{"deployment"}, tc.args...)...)
			if r.code != 0 || r.stdout != tc.wantOut {
				t.Fatalf("exit %d, out %q, want %q; stderr %s", r.code, r.stdout, tc.wantOut, r.stderr)
			}
			if body != tc.wantBody {
				t.Errorf("sent %s, want %s", body, tc.wantBody)
			}
		})
	}

	f := newFakeAgent(t)
	f.json("GET /v1/deployment/d1e2", fixtureDeployment())
	f.fail("PUT /v1/deployment/fail/"+deploymentID, http.StatusBadRequest, `deployment "x" is failed: only a running or paused deployment can change`)
	if r := runCLI(t, f.srv.URL, nil, "deployment", "fail", "d1e2"); r.code != 1 || !strings.Contains(r.stderr, `Error failing deployment "d1e2f3a4": deployment "x" is failed`) {
		t.Fatalf("terminal: %+v", r)
	}
}

func TestAwaitsPromotion(t *testing.T) {
	group := func(desired, healthy int, auto, promoted bool) *api.DeploymentState {
		return &api.DeploymentState{DesiredCanaries: desired, HealthyAllocs: healthy, AutoPromote: auto, Promoted: promoted, DesiredTotal: 3}
	}
	tests := []struct {
		name   string
		groups map[string]*api.DeploymentState
		status string
		want   bool
	}{
		{"no canaries", map[string]*api.DeploymentState{"web": group(0, 1, false, false)}, "running", false},
		{"canary not healthy yet", map[string]*api.DeploymentState{"web": group(1, 0, false, false)}, "running", false},
		{"healthy, manual", map[string]*api.DeploymentState{"web": group(1, 1, false, false)}, "running", true},
		{"healthy, auto_promote", map[string]*api.DeploymentState{"web": group(1, 1, true, false)}, "running", false},
		{"one group without auto_promote", map[string]*api.DeploymentState{"web": group(1, 1, true, false), "api": group(1, 1, false, false)}, "running", true},
		{"one group still unhealthy", map[string]*api.DeploymentState{"web": group(1, 1, false, false), "api": group(2, 1, false, false)}, "running", false},
		{"promoted", map[string]*api.DeploymentState{"web": group(1, 1, false, true)}, "running", false},
		{"paused", map[string]*api.DeploymentState{"web": group(1, 1, false, false)}, "paused", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := awaitsPromotion(&api.Deployment{Status: tc.status, TaskGroups: tc.groups}); got != tc.want {
				t.Fatalf("awaitsPromotion = %v, want %v", got, tc.want)
			}
		})
	}
}
