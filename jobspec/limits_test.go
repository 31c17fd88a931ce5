package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

// deepHCL is a job file whose meta value nests n objects deep (the attack
// of the issue: 120,000 levels overflowed the stack, 40,000 cost 20 s of
// CPU and 687 MB).
func deepHCL(n int) string {
	return "job \"x\" {\n  meta = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n}\n"
}

func TestParseRefusesInputBeyondLimits(t *testing.T) {
	deepJSON := `{"Job": {"ID": "x", "TaskGroups": [{"Name": "g", "Tasks": [{"Name": "t", "Config": ` +
		strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000) + `}]}]}}`
	tests := []struct {
		name     string
		filename string
		src      string
		want     string
	}{
		{"HCL 40,000 levels deep", "deep.hcl", deepHCL(40_000), "deep.hcl:2:"},
		{"HCL 120,000 levels deep", "deep.hcl", deepHCL(120_000), "at most 100 levels deep"},
		{"operator chain", "ops.hcl", "locals {\n  a = " + strings.Repeat("!", 100_000) + "true\n}\n", "ops.hcl:2:"},
		{"HCL too large", "big.hcl", "job \"x\" {\n" + strings.Repeat("# padding\n", 120_000) + "}\n",
			"big.hcl: Input too large: it is 1200012 bytes, and the limit is 1048576 bytes (1 MiB)"},
		{"JSON 5,000 levels deep", "deep.json", deepJSON, "deep.json:1:"},
		{"JSON path", "deep.json", deepJSON, "Nesting too deep at Job.TaskGroups[0].Tasks[0].Config.a.a"},
		{"JSON too large", "big.json", `{"ID": "x", "Meta": {"a": "` + strings.Repeat("x", 10<<20) + `"}}`, "the limit is 10485760 bytes (10 MiB)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job, err := Parse(tc.filename, []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse = %v, %v; want an error containing %q", job, err, tc.want)
			}
		})
	}
}

func TestParseRequestRefusesDeepVariables(t *testing.T) {
	deepList := strings.Repeat("[", 500) + strings.Repeat("]", 500)
	tests := []struct {
		name string
		req  *api.JobsParseRequest
		want string
	}{
		{"job file", &api.JobsParseRequest{JobHCL: deepHCL(120_000)}, "job.nomad.hcl:2:"},
		{"variable file", &api.JobsParseRequest{JobHCL: varsJob, Variables: "dcs = " + deepList + "\n"},
			"variables.hcl:1:"},
		{"-var value", &api.JobsParseRequest{JobHCL: varsJob, VarFlags: map[string]string{"dcs": deepList}},
			"-var dcs:1:101: Nesting too deep"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job, err := ParseRequest(tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseRequest = %v, %v; want an error containing %q", job, err, tc.want)
			}
		})
	}
}

func TestParseFileRefusesLargeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.nomad.hcl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: 1 GiB that ParseFile must not read.
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = ParseFile(path)
	if err == nil || !strings.Contains(err.Error(), "huge.nomad.hcl: Input too large: it is 1073741824 bytes") {
		t.Fatalf("ParseFile = %v, want a size error", err)
	}
}
