package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

// JobValidate answers as the server does for the jobs of
// TestJobValidateEndpoint: a problem per task whose config has "comand",
// and the structure's problems from Validate.
func (f *fakeBackend) JobValidate(_ context.Context, r *structs.JobValidateRequest) (*structs.JobValidateResponse, error) {
	resp := &structs.JobValidateResponse{Problems: []string{}}
	job := r.Job.Copy()
	job.Canonicalize()
	if err := job.Validate(); err != nil {
		resp.Problems = append(resp.Problems, err.Error())
	}
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if _, ok := t.Config["comand"]; ok {
				resp.Problems = append(resp.Problems, "Config.comand: unknown field; did you mean \"command\"? (task "+t.Name+")")
			}
		}
	}
	return resp, nil
}

// TestJobValidateEndpoint: /v1/validate/job converts the job, reports the
// server's list of problems (and conversion errors) in Nomad's response
// shape with a 200, and a body without a job is a 400.
func TestJobValidateEndpoint(t *testing.T) {
	b := &fakeBackend{}
	ts := newFakeServer(t, b)
	cases := []struct {
		name       string
		body       string
		wantCode   int
		wantErrors []string
	}{
		{"valid", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "/bin/true"}}]}]}, "Region": "global", "Namespace": "default"}`, 200, nil},
		{"driver config", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Tasks": [
			{"Name": "t", "Driver": "raw_exec", "Config": {"comand": "/bin/true"}}]}]}}`, 200, []string{
			`Config.comand: unknown field; did you mean "command"? (task t)`,
		}},
		{"structure", `{"Job": {"ID": "web", "TaskGroups": [{"Name": "g", "Count": -1, "Tasks": [{"Name": "t", "Driver": "raw_exec", "Config": {"command": "x"}}]}]}}`, 200, []string{
			`group "g": count -1 must not be negative`}},
		{"no job", `{}`, 400, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := http.Post(ts.URL+"/v1/validate/job", "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if tc.wantCode != 200 {
				return
			}
			var out api.JobValidateResponse
			if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
				t.Fatal(err)
			}
			if !out.DriverConfigValidated {
				t.Error("DriverConfigValidated is false")
			}
			if len(out.ValidationErrors) != len(tc.wantErrors) {
				t.Fatalf("errors %q, want %d", out.ValidationErrors, len(tc.wantErrors))
			}
			for i, w := range tc.wantErrors {
				if !strings.Contains(out.ValidationErrors[i], w) || !strings.Contains(out.Error, w) {
					t.Errorf("error %d: %q (Error %q), want %q", i, out.ValidationErrors[i], out.Error, w)
				}
			}
		})
	}
}
