package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// TestJobValidateEndpoint: /v1/validate/job reports a job's problems,
// task config blocks included, without registering it.
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
			{"Name": "t", "Driver": "raw_exec", "Config": {"comand": "/bin/true"}},
			{"Name": "d", "Driver": "docker", "Config": {"image": "redis", "port_map": [{"db": 6379}]}},
			{"Name": "p", "Driver": "my-plugin", "Config": {"anything": 1}}]}]}}`, 200, []string{
			`Job.TaskGroups[0].Tasks[0].Config.comand: unknown field; did you mean "command"? (group "g", task "t", driver "raw_exec")`,
			`Job.TaskGroups[0].Tasks[0].Config.command: required field is missing (group "g", task "t", driver "raw_exec")`,
			`Job.TaskGroups[0].Tasks[1].Config.port_map: a Nomad docker option drover does not support: publishing ports is not supported yet`,
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
					t.Errorf("error %d = %q, want %q", i, out.ValidationErrors[i], w)
				}
			}
		})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.registers) != 0 {
		t.Errorf("%d jobs registered by validation", len(b.registers))
	}
}
