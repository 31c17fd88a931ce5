package server

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-io/drover/plugins/base"
	"github.com/drover-io/drover/structs"
)

// TestTaskConfigsCheckedOnSubmit: a job whose task config has a typo or a
// Nomad option the driver does not take is refused by JobRegister and
// JobPlan, each problem named by its path in the job; nothing is stored.
// Tasks of drivers the validator does not know pass.
func TestTaskConfigsCheckedOnSubmit(t *testing.T) {
	schemas := base.TaskConfigSchemas{"docker": {
		Fields: []*base.Field{
			{Name: "image", Type: base.TypeString, Required: true},
			{Name: "auth_soft_fail", Type: base.TypeBool},
		},
		Hints: map[string]string{"ipc_mode": "containers have their own IPC namespace"},
	}}
	s := newTestServer(t, func(c *Config) { c.TaskConfigs = schemas })
	job := testJob("web", 1, 100, 100)
	job.TaskGroups[0].Tasks = append(job.TaskGroups[0].Tasks, &structs.Task{
		Name: "redis", Driver: "docker",
		Config:    map[string]any{"image": "redis", "auth_soft_fial": true, "ipc_mode": "host"},
		Resources: &structs.Resources{CPU: 100, MemoryMB: 100},
	})
	wants := []string{
		`Job.TaskGroups[0].Tasks[1].Config.auth_soft_fial: unknown field; did you mean "auth_soft_fail"? (group "web", task "redis", driver "docker")`,
		`Job.TaskGroups[0].Tasks[1].Config.ipc_mode: a Nomad docker option drover does not support: containers have their own IPC namespace (group "web", task "redis", driver "docker")`,
	}
	check := func(what string, err error) {
		t.Helper()
		if structs.KindOf(err) != structs.KindInvalid {
			t.Fatalf("%s: %v, want an invalid-kind error", what, err)
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error\n%s\nlacks %s", what, err, w)
			}
		}
		if strings.Contains(err.Error(), "Tasks[0]") {
			t.Errorf("%s: the mock task (a driver the validator does not know) was checked: %v", what, err)
		}
	}
	_, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: job})
	check("register", err)
	_, err = s.JobPlan(context.Background(), &structs.JobPlanRequest{Job: job})
	check("plan", err)
	if j, _ := s.State().JobByID(nil, "default", "web"); j != nil {
		t.Fatalf("refused job stored: %+v", j)
	}
	checked, err := s.JobValidate(context.Background(), &structs.JobValidateRequest{Job: job})
	if err != nil {
		t.Fatalf("JobValidate: %v", err)
	}
	check("validate", structs.Invalid("%s", strings.Join(checked.Problems, "\n")))
	if j, _ := s.State().JobByID(nil, "default", "web"); j != nil {
		t.Fatalf("validated job stored: %+v", j)
	}

	fixed := job.Copy()
	fixed.TaskGroups[0].Tasks[1].Config = map[string]any{"image": "redis:${NOMAD_META_tag}", "auth_soft_fail": "${NOMAD_META_soft}"}
	registerJob(t, s, fixed)
}
