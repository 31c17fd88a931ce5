package command

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

func TestServiceCommands(t *testing.T) {
	f := newFakeAgent(t)
	f.json("GET /v1/services", []*api.ServiceRegistrationListStub{
		{Namespace: "default", Services: []*api.ServiceRegistrationStub{
			{ServiceName: "web", Tags: []string{"a", "b"}}, {ServiceName: "db-primary", Tags: []string{}}}},
	})
	f.json("GET /v1/service/web", []*api.ServiceRegistration{
		{ID: "_nomad-task-1", ServiceName: "web", Namespace: "default", JobID: "shop", Address: "10.0.0.5", Port: 25000,
			Tags: []string{"a"}, NodeID: "8f0c3b1e-aaaa-bbbb-cccc-000000000001", AllocID: "71e2d3c4-aaaa-bbbb-cccc-000000000002"},
	})
	f.json("GET /v1/service/none", []*api.ServiceRegistration{})
	f.mux.HandleFunc("DELETE /v1/service/web/_nomad-task-1", func(w http.ResponseWriter, r *http.Request) {})
	f.fail("DELETE /v1/service/web/nope", http.StatusNotFound, `service registration "nope" not found in namespace "default"`)

	tests := []struct {
		args       []string
		code       int
		wantOut    string
		wantErrSub string
	}{
		{args: []string{"service", "list"}, wantOut: "" +
			"Service Name  Tags\n" +
			"web           [a,b]\n" +
			"db-primary    []\n"},
		{args: []string{"service", "info", "web"}, wantOut: "" +
			"Job ID  Address         Tags  Node ID   Alloc ID\n" +
			"shop    10.0.0.5:25000  [a]   8f0c3b1e  71e2d3c4\n"},
		{args: []string{"service", "info", "none"}, wantOut: "No service registrations found\n"},
		{args: []string{"service", "delete", "web", "_nomad-task-1"}, wantOut: "Successfully deleted service registration\n"},
		{args: []string{"service", "delete", "web", "nope"}, code: 1, wantErrSub: `not found in namespace "default"`},
		{args: []string{"service", "info"}, code: 1, wantErrSub: "give the service's name"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			r := runCLI(t, f.srv.URL, nil, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d; stderr %q", r.code, tt.code, r.stderr)
			}
			if tt.wantOut != "" && r.stdout != tt.wantOut {
				t.Errorf("stdout =\n%s\nwant\n%s", r.stdout, tt.wantOut)
			}
			if !strings.Contains(r.stderr, tt.wantErrSub) {
				t.Errorf("stderr = %q, want %q in it", r.stderr, tt.wantErrSub)
			}
		})
	}
	if !slices.Contains(f.sent(), "DELETE /v1/service/web/_nomad-task-1") {
		t.Errorf("requests = %q", f.sent())
	}
}

func TestFormatChecks(t *testing.T) {
	got := formatChecks(api.AllocCheckStatuses{
		"b": {Service: "web", Task: "", Check: "ready", Mode: "readiness", Status: "pending"},
		"a": {Service: "api", Task: "server", Check: "alive", Mode: "healthiness", Status: "success"},
	})
	want := "Nomad Service Checks:\n" +
		"Service  Task     Name   Mode         Status\n" +
		"api      server   alive  healthiness  success\n" +
		"web      (group)  ready  readiness    pending\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
