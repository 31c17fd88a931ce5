package httpapi

import (
	"strings"
	"testing"
	"time"

	"github.com/drover-io/drover/api"
	"github.com/drover-io/drover/structs"
)

func TestConvertReschedulePolicy(t *testing.T) {
	svc := structs.DefaultReschedulePolicy(structs.JobTypeService)
	cases := []struct {
		name    string
		mutate  func(j *api.Job)
		want    *structs.ReschedulePolicy
		wantErr string
	}{
		{name: "service default", mutate: func(*api.Job) {}, want: svc},
		{
			name:   "batch default",
			mutate: func(j *api.Job) { j.Type = api.String("batch") },
			want:   &structs.ReschedulePolicy{Attempts: 1, Interval: 24 * time.Hour, Delay: 5 * time.Second, DelayFunction: "constant"},
		},
		{
			name:   "system has none",
			mutate: func(j *api.Job) { j.Type = api.String("system") },
		},
		{
			name:   "sysbatch has none",
			mutate: func(j *api.Job) { j.Type = api.String("sysbatch") },
		},
		{
			name: "job block merged into the group",
			mutate: func(j *api.Job) {
				j.Reschedule = &api.ReschedulePolicy{Delay: api.Duration(time.Minute), DelayFunction: api.String("fibonacci")}
			},
			want: &structs.ReschedulePolicy{Delay: time.Minute, DelayFunction: "fibonacci", MaxDelay: time.Hour, Unlimited: true},
		},
		{
			name: "group block overrides the job's",
			mutate: func(j *api.Job) {
				j.Reschedule = &api.ReschedulePolicy{Delay: api.Duration(time.Minute), DelayFunction: api.String("fibonacci")}
				j.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: api.Int(2), Interval: api.Duration(time.Hour),
					Delay: api.Duration(time.Second), DelayFunction: api.String("constant"), Unlimited: api.Bool(false)}
			},
			want: &structs.ReschedulePolicy{Attempts: 2, Interval: time.Hour, Delay: time.Second, DelayFunction: "constant", MaxDelay: time.Hour},
		},
		{
			name:    "bad delay function",
			mutate:  func(j *api.Job) { j.Reschedule = &api.ReschedulePolicy{DelayFunction: api.String("linear")} },
			wantErr: `DelayFunction (delay_function) "linear" must be one of`,
		},
		{
			name: "negative attempts",
			mutate: func(j *api.Job) {
				j.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: api.Int(-1), Unlimited: api.Bool(false)}
			},
			wantErr: "Attempts (attempts) must not be negative",
		},
		{
			name: "attempts without interval",
			mutate: func(j *api.Job) {
				j.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: api.Int(3), Unlimited: api.Bool(false)}
			},
			wantErr: "Interval (interval) must be positive",
		},
		{
			name:    "zero delay",
			mutate:  func(j *api.Job) { j.Reschedule = &api.ReschedulePolicy{Delay: api.Duration(0)} },
			wantErr: "Delay (delay) must be positive",
		},
		{
			name:    "max_delay below delay",
			mutate:  func(j *api.Job) { j.Reschedule = &api.ReschedulePolicy{MaxDelay: api.Duration(time.Second)} },
			wantErr: "MaxDelay (max_delay) 1s must not be less than Delay (delay) 30s",
		},
		{
			name: "system job with a block",
			mutate: func(j *api.Job) {
				j.Type = api.String("system")
				j.Reschedule = &api.ReschedulePolicy{Attempts: api.Int(1)}
			},
			wantErr: "reschedule block is not allowed in system jobs",
		},
		{
			name: "sysbatch job with a block",
			mutate: func(j *api.Job) {
				j.Type = api.String("sysbatch")
				j.TaskGroups[0].ReschedulePolicy = &api.ReschedulePolicy{Attempts: api.Int(1)}
			},
			wantErr: "reschedule block is not allowed in sysbatch jobs",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := ConvertJob(minimalJob(c.mutate))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "group reschedule policy", out.TaskGroups[0].ReschedulePolicy, c.want)
		})
	}
}
