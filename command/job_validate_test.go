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

// runChecked is runCLI with the real job parser and the built-in drivers'
// task config schemas, as the drover binary runs.
func runChecked(t *testing.T, addr string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	d := deps{
		runAgent:    func([]string, io.Writer, io.Writer) int { t.Error("agent run unexpectedly"); return 1 },
		parseJob:    jobspecParse,
		taskConfigs: builtinTaskConfigs(),
		now:         func() time.Time { return fixedNow },
		getenv: func(k string) string {
			if k == "DROVER_ADDR" {
				return addr
			}
			return ""
		},
		readFile: os.ReadFile,
	}
	code := run(args, newMeta(&stdout, &stderr, d))
	return result{code, stdout.String(), stderr.String()}
}

const badConfigJob = `job "web" {
  group "g" {
    task "api" {
      driver = "raw_exec"
      config {
        comand = "/bin/true"
      }
    }
    task "cache" {
      driver = "docker"
      config {
        image    = "redis:${NOMAD_META_tag}"
        shm_size = "${NOMAD_META_shm}"
        ipc_mode = "host"
        # (ports and port_map are supported;
        # ipc_mode is not)
        mount {
          target = "/data"
          readonly = "yes"
        }
      }
    }
    task "plugin" {
      driver = "my-plugin"
      config {
        anything = 1
      }
    }
  }
}
`

// TestBadTaskConfigRefusedLocally: job run, plan and validate find the
// mistakes in tasks' config blocks before sending anything, each named
// with its file:line:col, with a guess at a typo and a hint for a Nomad
// option drover does not take. References resolved on the node pass;
// drivers the CLI does not know are left to the node.
func TestBadTaskConfigRefusedLocally(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.nomad.hcl")
	if err := os.WriteFile(path, []byte(badConfigJob), 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeAgent(t)
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"job", "run", path}, 1},
		{[]string{"job", "plan", path}, 255},
		{[]string{"job", "validate", path}, 1},
	} {
		t.Run(tc.args[1], func(t *testing.T) {
			r := runChecked(t, f.srv.URL, tc.args...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, want := range []string{
				path + `:6:9: group "g", task "api": raw_exec config field "comand": unknown field; did you mean "command"?`,
				path + `:5:7: group "g", task "api": raw_exec config field "command": required field is missing`,
				path + `:14:9: group "g", task "cache": docker config field "ipc_mode": a Nomad docker option drover does not support: not supported: containers have their own IPC namespace`,
				path + `:19:11: group "g", task "cache": docker config field "mount[0].readonly": want bool, got "yes"`,
			} {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks\n%s\n---\n%s", want, r.stderr)
				}
			}
			for _, unwanted := range []string{"shm_size", "image", "plugin"} {
				if strings.Contains(r.stderr, unwanted) {
					t.Errorf("stderr mentions %s:\n%s", unwanted, r.stderr)
				}
			}
		})
	}
	if s := f.sent(); len(s) != 0 {
		t.Errorf("requests sent for a bad job file: %v", s)
	}
}

func TestJobValidate(t *testing.T) {
	good := filepath.Join(t.TempDir(), "ok.nomad.hcl")
	if err := os.WriteFile(good, []byte(exampleJob), 0o644); err != nil {
		t.Fatal(err)
	}
	var got api.JobValidateRequest
	f := newFakeAgent(t)
	f.mux.HandleFunc("PUT /v1/validate/job", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
		_ = json.NewEncoder(w).Encode(&api.JobValidateResponse{DriverConfigValidated: true})
	})
	r := runChecked(t, f.srv.URL, "job", "validate", good)
	if r.code != 0 || r.stdout != "Job validation successful\n" || got.Job == nil || *got.Job.ID != "example" {
		t.Fatalf("valid job: %+v, sent %+v", r, got)
	}

	g := newFakeAgent(t)
	g.json("PUT /v1/validate/job", &api.JobValidateResponse{DriverConfigValidated: true,
		ValidationErrors: []string{`group "cache": count -1 must not be negative`}, Error: "x"})
	r = runChecked(t, g.srv.URL, "job", "validate", good)
	if r.code != 1 || !strings.Contains(r.stderr, "Job validation errors:\n  * group \"cache\": count -1 must not be negative") {
		t.Fatalf("agent's errors: %+v", r)
	}

	// No agent: checked here only, and said so.
	r = runChecked(t, "http://127.0.0.1:1", "job", "validate", good)
	if r.code != 0 || !strings.Contains(r.stdout, "could not be reached: the job was checked here only") || !strings.Contains(r.stdout, "Job validation successful") {
		t.Fatalf("no agent: %+v", r)
	}
}
