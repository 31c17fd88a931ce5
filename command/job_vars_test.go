package command

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
)

const varJobFile = `variable "image" {
  type = string
}

variable "count" {
  type    = number
  default = 1
}

variable "zone" {
  default = "none"
}

job "vars" {
  meta {
    zone = var.zone
  }
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

// TestJobRunVariables checks that -var, -var-file (HCL and JSON) and
// NOMAD_VAR_ values reach the job that is submitted, later sources
// winning.
func TestJobRunVariables(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	jobPath := write("vars.nomad.hcl", varJobFile)
	hclVars := write("prod.vars", "image = \"redis:7\"\ncount = 2\n")
	jsonVars := write("more.json", `{"count": 3}`)

	var got api.JobRegisterRequest
	f := newFakeAgent(t)
	f.mux.HandleFunc("PUT /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		_ = json.NewEncoder(w).Encode(api.JobRegisterResponse{EvalID: evalID, JobModifyIndex: 5})
	})
	var stdout, stderr bytes.Buffer
	d := deps{
		runAgent: func([]string, io.Writer, io.Writer) int { t.Error("agent run unexpectedly"); return 1 },
		parseJob: jobspecParse,
		now:      func() time.Time { return fixedNow },
		getenv: func(k string) string {
			if k == "DROVER_ADDR" {
				return f.srv.URL
			}
			return ""
		},
		environ:  func() []string { return []string{"NOMAD_VAR_zone=eu", "NOMAD_VAR_image=from-env", "HOME=/root"} },
		readFile: os.ReadFile,
	}
	code := run([]string{"job", "run", "-detach", "-var-file", hclVars, "-var-file=" + jsonVars, "-var", "count=4", jobPath},
		newMeta(&stdout, &stderr, d))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	tg := got.Job.TaskGroups[0]
	if img := tg.Tasks[0].Config["image"]; img != "redis:7" {
		t.Errorf("image = %v, want redis:7 (the var file wins over NOMAD_VAR_image)", img)
	}
	if *tg.Count != 4 {
		t.Errorf("count = %d, want 4 (-var wins over the files)", *tg.Count)
	}
	if z := got.Job.Meta["zone"]; z != "eu" {
		t.Errorf("zone = %q, want eu from NOMAD_VAR_zone", z)
	}
	// The job file and its variables travel with the job, as Nomad's
	// job run sends them, for the servers to keep with the version.
	var sub api.JobSubmission
	if err := json.Unmarshal(got.Submission, &sub); err != nil {
		t.Fatalf("submission %s: %v", got.Submission, err)
	}
	if sub.Source != varJobFile || sub.Format != "hcl2" || sub.VariableFlags["count"] != "4" ||
		sub.Variables != "image = \"redis:7\"\ncount = 2\n\n{\"count\": 3}" {
		t.Errorf("submission sent: %+v", sub)
	}
}

func TestJobValidateVariableErrors(t *testing.T) {
	dir := t.TempDir()
	jobPath := filepath.Join(dir, "vars.nomad.hcl")
	if err := os.WriteFile(jobPath, []byte(varJobFile), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing value", nil, jobPath + `:1:1: Missing value for variable: Variable "image" has no default`},
		{"undeclared -var", []string{"-var", "image=x", "-var", "imag=y"}, `Undeclared variable: A value was given for variable "imag"`},
		{"bad -var syntax", []string{"-var", "image"}, `-var "image": use -var 'name=value'`},
		{"missing var file", []string{"-var-file", filepath.Join(dir, "nope.vars")}, "read variable file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAgent(t)
			r := runChecked(t, f.srv.URL, append(append([]string{"job", "validate"}, tt.args...), jobPath)...)
			if r.code != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 1 and %q", r.code, r.stderr, tt.want)
			}
			if s := f.sent(); len(s) != 0 {
				t.Errorf("sent %v, want nothing", s)
			}
		})
	}
}
