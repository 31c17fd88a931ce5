package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertUpdateStrategy(t *testing.T) {
	def := structs.DefaultUpdateStrategy()
	cases := []struct {
		name    string
		mutate  func(j *api.Job)
		job     *structs.UpdateStrategy
		group   *structs.UpdateStrategy
		warn    string
		wantErr string
	}{
		{name: "service without update block gets Nomad's default", mutate: func(*api.Job) {}, job: def, group: def},
		{
			name:   "group inherits the job's block",
			mutate: func(j *api.Job) { j.Update = &api.UpdateStrategy{MaxParallel: api.Int(3), AutoRevert: api.Bool(true)} },
			job:    &structs.UpdateStrategy{Stagger: def.Stagger, MaxParallel: 3, HealthCheck: "checks", MinHealthyTime: def.MinHealthyTime, HealthyDeadline: def.HealthyDeadline, ProgressDeadline: def.ProgressDeadline, AutoRevert: true},
			group:  &structs.UpdateStrategy{Stagger: def.Stagger, MaxParallel: 3, HealthCheck: "checks", MinHealthyTime: def.MinHealthyTime, HealthyDeadline: def.HealthyDeadline, ProgressDeadline: def.ProgressDeadline, AutoRevert: true},
		},
		{
			name: "group block overrides the job's",
			mutate: func(j *api.Job) {
				j.Update = &api.UpdateStrategy{MaxParallel: api.Int(3)}
				j.TaskGroups[0].Update = &api.UpdateStrategy{MaxParallel: api.Int(0), MinHealthyTime: api.Duration(time.Second)}
			},
			job:   &structs.UpdateStrategy{Stagger: def.Stagger, MaxParallel: 3, HealthCheck: "checks", MinHealthyTime: def.MinHealthyTime, HealthyDeadline: def.HealthyDeadline, ProgressDeadline: def.ProgressDeadline},
			group: &structs.UpdateStrategy{Stagger: def.Stagger, MaxParallel: 0, HealthCheck: "checks", MinHealthyTime: time.Second, HealthyDeadline: def.HealthyDeadline, ProgressDeadline: def.ProgressDeadline},
		},
		{
			name: "batch jobs ignore it",
			mutate: func(j *api.Job) {
				j.Type = api.String("batch")
				j.Update = &api.UpdateStrategy{MaxParallel: api.Int(2)}
			},
			warn: "applies to service jobs only",
		},
		{
			name: "canary and auto_promote kept",
			mutate: func(j *api.Job) {
				j.TaskGroups[0].Update = &api.UpdateStrategy{Canary: api.Int(2), AutoPromote: api.Bool(true)}
			},
			job: def,
			group: &structs.UpdateStrategy{Stagger: def.Stagger, MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: def.MinHealthyTime,
				HealthyDeadline: def.HealthyDeadline, ProgressDeadline: def.ProgressDeadline, Canary: 2, AutoPromote: true},
		},
		{
			name: "canary without max_parallel warns",
			mutate: func(j *api.Job) {
				j.TaskGroups[0].Update = &api.UpdateStrategy{Canary: api.Int(1), MaxParallel: api.Int(0)}
			},
			job:   def,
			group: &structs.UpdateStrategy{Stagger: def.Stagger, HealthCheck: "checks", MinHealthyTime: def.MinHealthyTime, HealthyDeadline: def.HealthyDeadline, ProgressDeadline: def.ProgressDeadline, Canary: 1},
			warn:  "has no effect with max_parallel = 0",
		},
		{
			name:    "auto_promote without canary",
			mutate:  func(j *api.Job) { j.Update = &api.UpdateStrategy{AutoPromote: api.Bool(true)} },
			wantErr: "auto_promote needs canary greater than zero",
		},
		{
			name:    "negative canary",
			mutate:  func(j *api.Job) { j.Update = &api.UpdateStrategy{Canary: api.Int(-1)} },
			wantErr: "canary -1 must not be negative",
		},
		{
			name:    "min_healthy_time beyond healthy_deadline",
			mutate:  func(j *api.Job) { j.Update = &api.UpdateStrategy{MinHealthyTime: api.Duration(time.Hour)} },
			wantErr: "min_healthy_time 1h0m0s must be less than healthy_deadline",
		},
		{
			name:    "bad health check",
			mutate:  func(j *api.Job) { j.Update = &api.UpdateStrategy{HealthCheck: api.String("nope")} },
			wantErr: `health_check "nope" is invalid`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, warnings, err := ConvertJob(minimalJob(c.mutate))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.warn != "" && !strings.Contains(strings.Join(warnings, "\n"), c.warn) {
				t.Fatalf("warnings %q lack %q", warnings, c.warn)
			}
			eq(t, "job update", out.Update, c.job)
			eq(t, "group update", out.TaskGroups[0].Update, c.group)
		})
	}
}
