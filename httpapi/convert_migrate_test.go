package httpapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertMigrateStrategy(t *testing.T) {
	def := structs.DefaultMigrateStrategy()
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	cases := []struct {
		name    string
		mutate  func(j *api.Job)
		want    *structs.MigrateStrategy
		warn    string
		wantErr string
	}{
		{name: "service without migrate block gets Nomad's default", mutate: func(*api.Job) {}, want: def},
		{
			name: "group overlays the job's",
			mutate: func(j *api.Job) {
				j.Migrate = raw(`{"MaxParallel": 2}`)
				j.TaskGroups[0].Migrate = raw(`{"MinHealthyTime": 1000000000}`)
			},
			want: &structs.MigrateStrategy{MaxParallel: 2, HealthCheck: "checks", MinHealthyTime: time.Second, HealthyDeadline: def.HealthyDeadline},
		},
		{
			name:   "task_states",
			mutate: func(j *api.Job) { j.TaskGroups[0].Migrate = raw(`{"HealthCheck": "task_states"}`) },
			want:   &structs.MigrateStrategy{MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: def.MinHealthyTime, HealthyDeadline: def.HealthyDeadline},
		},
		{
			name:   "batch ignores it",
			mutate: func(j *api.Job) { j.Type = api.String("batch"); j.Migrate = raw(`{"MaxParallel": 2}`) },
			warn:   "migrate block applies to service jobs only",
		},
		{name: "negative max_parallel", mutate: func(j *api.Job) { j.TaskGroups[0].Migrate = raw(`{"MaxParallel": -1}`) }, wantErr: "max_parallel is -1"},
		{name: "bad health check", mutate: func(j *api.Job) { j.Migrate = raw(`{"HealthCheck": "nope"}`) }, wantErr: `health_check "nope" is invalid`},
		{name: "not an object", mutate: func(j *api.Job) { j.Migrate = raw(`[1]`) }, wantErr: "migrate block"},
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
			eq(t, "group migrate", out.TaskGroups[0].Migrate, c.want)
		})
	}
}
