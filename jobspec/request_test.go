package jobspec

import (
	"strings"
	"testing"

	"github.com/drover-io/drover/api"
)

const varsJob = `
variable "image" {
  type    = string
  default = "redis:6"
}

variable "count" {
  type    = number
  default = 1
}

variable "dcs" {
  type    = list(string)
  default = ["dc1"]
}

job "v" {
  datacenters = var.dcs
  group "g" {
    count = var.count
    task "t" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}
`

func TestParseRequest(t *testing.T) {
	tests := []struct {
		name      string
		req       *api.JobsParseRequest
		wantImage string
		wantCount int
		wantDCs   string
		wantErr   string
	}{
		{
			name:      "defaults",
			req:       &api.JobsParseRequest{JobHCL: varsJob},
			wantImage: "redis:6", wantCount: 1, wantDCs: "dc1",
		},
		{
			name:      "variable file",
			req:       &api.JobsParseRequest{JobHCL: varsJob, Variables: "image = \"redis:7\"\ndcs = [\"a\", \"b\"]\n"},
			wantImage: "redis:7", wantCount: 1, wantDCs: "a,b",
		},
		{
			name: "flags win over the file",
			req: &api.JobsParseRequest{JobHCL: varsJob, Variables: `image = "redis:7"`,
				VarFlags: map[string]string{"image": "redis:8", "count": "3", "dcs": `["x"]`}},
			wantImage: "redis:8", wantCount: 3, wantDCs: "x",
		},
		{
			name:    "undeclared flag",
			req:     &api.JobsParseRequest{JobHCL: varsJob, VarFlags: map[string]string{"nope": "1"}},
			wantErr: `Undeclared variable: A value was given for variable "nope"`,
		},
		{
			name:    "undeclared in file",
			req:     &api.JobsParseRequest{JobHCL: varsJob, Variables: "nope = 1\n"},
			wantErr: "variables.hcl:1:1: Undeclared variable",
		},
		{
			name:    "flag of the wrong type",
			req:     &api.JobsParseRequest{JobHCL: varsJob, VarFlags: map[string]string{"count": "many"}},
			wantErr: "Invalid value for variable",
		},
		{
			name:    "empty",
			req:     &api.JobsParseRequest{},
			wantErr: "Missing job",
		},
		{
			name:    "nil",
			wantErr: "Missing job",
		},
		{
			name:    "HCL1",
			req:     &api.JobsParseRequest{JobHCL: varsJob, HCLv1: true},
			wantErr: "HCL1 is not supported",
		},
		{
			name:    "syntax error",
			req:     &api.JobsParseRequest{JobHCL: "job \"x\" {\n  group = \n}\n"},
			wantErr: "job.nomad.hcl:2:11: Invalid expression",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := ParseRequest(tt.req)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseRequest error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseRequest: %v", err)
			}
			tg := job.TaskGroups[0]
			if got := tg.Tasks[0].Config["image"]; got != tt.wantImage {
				t.Errorf("image = %v, want %q", got, tt.wantImage)
			}
			if *tg.Count != tt.wantCount {
				t.Errorf("count = %d, want %d", *tg.Count, tt.wantCount)
			}
			if got := strings.Join(job.Datacenters, ","); got != tt.wantDCs {
				t.Errorf("datacenters = %q, want %q", got, tt.wantDCs)
			}
		})
	}
}

// TestParseRequestGroupless: the API's parse takes a job without a group
// (Nomad's TestJobs_Parse parses `job "example" {}`); a job file run from
// the command line is still refused with the position.
func TestParseRequestGroupless(t *testing.T) {
	const src = `job "example" {}`
	job, err := ParseRequest(&api.JobsParseRequest{JobHCL: src})
	if err != nil {
		t.Fatalf("ParseRequest: %v", err)
	}
	if job.ID == nil || *job.ID != "example" || len(job.TaskGroups) != 0 {
		t.Fatalf("parsed %+v", job)
	}
	if _, err := Parse("example.nomad.hcl", []byte(src)); err == nil || !strings.Contains(err.Error(), `Job "example" has no group`) {
		t.Fatalf("Parse = %v, want the missing group", err)
	}
}
