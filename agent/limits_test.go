package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deepJobHCL is a job file whose meta nests n objects deep: the attack of
// issue 19 (120,000 levels overflowed the stack and killed the agent,
// server and client together; 40,000 cost 20 s of CPU and 687 MB).
func deepJobHCL(n int) string {
	return "job \"x\" {\n  meta = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n}\n"
}

// jsonBody encodes v as a request body.
func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// nestedJSON is {"a": {"a": ... 1}}, n objects deep.
func nestedJSON(n int) string {
	return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)
}

// TestAgentRefusesInputBeyondLimits sends the attacks to a dev
// agent's real HTTP API: each gets a 400 naming the problem, and the agent
// goes on serving.
func TestAgentRefusesInputBeyondLimits(t *testing.T) {
	ta := startDevAgent(t)
	jobWithConfig := func(config string) string {
		return strings.Replace(mockJobBody("deep", "1"), `{"run_for": "10s"}`, config, 1)
	}
	tests := []struct {
		name, method, path, body string
		wantCode                 int
		wantBody                 []string
	}{
		{"HCL 120,000 levels deep", "POST", "/v1/jobs/parse", jsonBody(t, map[string]string{"JobHCL": deepJobHCL(120_000)}), 400,
			[]string{"job.nomad.hcl:2:", "Nesting too deep", "at most 100 levels deep"}},
		{"HCL 40,000 levels deep", "POST", "/v1/jobs/parse", jsonBody(t, map[string]string{"JobHCL": deepJobHCL(40_000)}), 400,
			[]string{"job.nomad.hcl:2:", "Nesting too deep"}},
		{"HCL that computes too much", "POST", "/v1/jobs/parse", jsonBody(t, map[string]string{"JobHCL": "locals {\n  a = indent(1000000000, \"a\\nb\")\n}\n" + deepJobHCL(1)}), 400,
			[]string{"the job file computes more than 16 MiB"}},
		{"task config JSON 5,000 levels deep", "PUT", "/v1/jobs", jobWithConfig(nestedJSON(5000)), 400,
			[]string{"request body: line 3, column", "Nesting too deep at Job.TaskGroups[0].Tasks[0].Config.a.a"}},
		{"task config 40 levels deep", "PUT", "/v1/jobs", jobWithConfig(nestedJSON(40)), 400,
			[]string{`group "g", task "t": config is nested deeper than 32 levels at config.a.a`}},
		{"body nested 5,000 levels deep elsewhere", "PUT", "/v1/operator/scheduler/configuration", strings.Repeat("[", 5000) + strings.Repeat("]", 5000), 400,
			[]string{"Nesting too deep at [0][0]"}},
		{"body too large", "PUT", "/v1/jobs", `{"Job": {"ID": "big", "Meta": {"a": "` + strings.Repeat("x", 11<<20) + `"}}}`, 413,
			[]string{"larger than the limit of 10485760 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, b := ta.do(tc.method, tc.path, tc.body)
			if code != tc.wantCode {
				t.Fatalf("%s %s = %d %.300s, want %d", tc.method, tc.path, code, b, tc.wantCode)
			}
			for _, want := range tc.wantBody {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("%s %s body %.300q does not contain %q", tc.method, tc.path, b, want)
				}
			}
			// The agent is still serving.
			code, _, b = ta.do("GET", "/v1/agent/health", "")
			if code != http.StatusOK {
				t.Fatalf("after the attack: GET /v1/agent/health = %d %s", code, b)
			}
		})
	}
	// Nothing was registered.
	code, _, _ := ta.do("GET", "/v1/job/deep", "")
	if code != http.StatusNotFound {
		t.Errorf("GET /v1/job/deep = %d, want 404: a refused job must not be stored", code)
	}
}

// TestConfigFileBeyondLimits: an agent configuration nested too deep, or
// too large, stops the agent from starting with an error naming the file,
// the position and the limit.
func TestConfigFileBeyondLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"HCL nested too deep", write("deep.hcl", "client {\n  meta = "+strings.Repeat("{a=", 100_000)+"1"+strings.Repeat("}", 100_000)+"\n}\n"),
			[]string{"invalid agent configuration:", "deep.hcl:2:", "Nesting too deep", "at most 100 levels deep"}},
		{"plugin config nested too deep", write("plugin.hcl", "plugin \"raw_exec\" {\n  config "+strings.Repeat("{\n a ", 200)+"{}"+strings.Repeat("}\n", 200)+"\n}\n"),
			[]string{"plugin.hcl:", "Nesting too deep"}},
		{"JSON nested too deep", write("deep.json", `{"client": {"meta": `+nestedJSON(100_000)+`}}`),
			[]string{"invalid agent configuration:", "deep.json:1:", "Nesting too deep at client.meta.a.a"}},
		{"JSON content in a .hcl file", write("deep-json.hcl", `{"client": {"meta": `+nestedJSON(100_000)+`}}`),
			[]string{"deep-json.hcl:1:", "Nesting too deep"}},
		{"HCL too large", write("big.hcl", strings.Repeat("# comment\n", 110_000)),
			[]string{"invalid agent configuration:", "big.hcl: Input too large", "the limit is 1048576 bytes (1 MiB)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := runCommand([]string{"-dev", "-config", tc.path}, &stdout, &stderr, nil, nil)
			if code != 1 {
				t.Fatalf("exit code = %d, want 1; stderr %q", code, stderr.String())
			}
			for _, want := range tc.want {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr %.400q does not contain %q", stderr.String(), want)
				}
			}
		})
	}
}
