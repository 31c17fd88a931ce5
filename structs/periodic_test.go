package structs

import (
	"strings"
	"testing"
	"time"
)

func TestPeriodicConfigValidateAndNext(t *testing.T) {
	tests := []struct {
		name    string
		p       PeriodicConfig
		wantErr string
	}{
		{"one cron", PeriodicConfig{Enabled: true, Spec: "*/5 * * * *"}, ""},
		{"crons", PeriodicConfig{Enabled: true, Specs: []string{"@hourly", "0 3 * * 1-5"}}, ""},
		{"both", PeriodicConfig{Enabled: true, Spec: "@hourly", Specs: []string{"@daily"}}, "either cron or crons"},
		{"none", PeriodicConfig{Enabled: true}, "a cron expression is required"},
		{"bad cron", PeriodicConfig{Enabled: true, Spec: "61 * * * *"}, `"61 * * * *" does not parse`},
		{"bad zone", PeriodicConfig{Enabled: true, Spec: "@daily", TimeZone: "Nowhere/Else"}, `time zone "Nowhere/Else" is unknown`},
		{"disabled is not checked", PeriodicConfig{Spec: "nonsense"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
	from := time.Date(2026, 1, 4, 15, 7, 0, 0, time.UTC)
	p := PeriodicConfig{Specs: []string{"0 18 * * *", "30 15 * * *"}}
	if got := p.Next(from); !got.Equal(time.Date(2026, 1, 4, 15, 30, 0, 0, time.UTC)) {
		t.Errorf("Next = %s", got)
	}
	berlin := PeriodicConfig{Spec: "0 17 * * *", TimeZone: "Europe/Berlin"}
	if got := berlin.Next(from); !got.Equal(time.Date(2026, 1, 4, 16, 0, 0, 0, time.UTC)) {
		t.Errorf("Next in Berlin = %s, want 16:00 UTC", got.UTC())
	}
}

func TestJobKindRules(t *testing.T) {
	base := func(typ string) *Job {
		j := &Job{ID: "j", Type: typ, TaskGroups: []*TaskGroup{{Name: "g", Tasks: []*Task{{Name: "t", Driver: "mock"}}}}}
		j.Canonicalize()
		return j
	}
	tests := []struct {
		name    string
		job     func() *Job
		wantErr string
	}{
		{"periodic batch", func() *Job {
			j := base(JobTypeBatch)
			j.Periodic = &PeriodicConfig{Enabled: true, Spec: "@daily"}
			return j
		}, ""},
		{"periodic sysbatch", func() *Job {
			j := base(JobTypeSysBatch)
			j.Periodic = &PeriodicConfig{Enabled: true, Spec: "@daily"}
			return j
		}, ""},
		{"periodic service", func() *Job {
			j := base(JobTypeService)
			j.Periodic = &PeriodicConfig{Enabled: true, Spec: "@daily"}
			return j
		}, "a service job cannot be periodic"},
		{"parameterized system", func() *Job { j := base(JobTypeSystem); j.ParameterizedJob = &ParameterizedJobConfig{}; return j }, "a system job cannot be parameterized"},
		{"meta both required and optional", func() *Job {
			j := base(JobTypeBatch)
			j.ParameterizedJob = &ParameterizedJobConfig{MetaRequired: []string{"a"}, MetaOptional: []string{"a"}}
			return j
		}, `meta key "a" is both required and optional`},
		{"payload file escaping local", func() *Job {
			j := base(JobTypeBatch)
			j.ParameterizedJob = &ParameterizedJobConfig{}
			j.TaskGroups[0].Tasks[0].DispatchPayload = &DispatchPayloadConfig{File: "../secrets/x"}
			return j
		}, "must be a relative path inside the task's local/ directory"},
		{"payload file with a forbidden payload", func() *Job {
			j := base(JobTypeBatch)
			j.ParameterizedJob = &ParameterizedJobConfig{Payload: DispatchPayloadForbidden}
			j.TaskGroups[0].Tasks[0].DispatchPayload = &DispatchPayloadConfig{File: "in"}
			return j
		}, "forbids a payload"},
		{"payload over the limit", func() *Job { j := base(JobTypeBatch); j.Payload = make([]byte, DispatchPayloadSizeLimit+1); return j }, "at most 16384"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.job().Validate()
			if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("Validate = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestDiffJobsPeriodic(t *testing.T) {
	old := &Job{ID: "j", Periodic: &PeriodicConfig{Enabled: true, Spec: "@hourly"}}
	new := old.Copy()
	new.Periodic.Spec = "@daily"
	new.ParameterizedJob = &ParameterizedJobConfig{Payload: "required", MetaRequired: []string{"in"}}
	d := DiffJobs(old, new)
	var names []string
	for _, o := range d.Objects {
		names = append(names, o.Name+":"+o.Type)
	}
	if d.Type != DiffTypeEdited || strings.Join(names, ",") != "Periodic:Edited,ParameterizedJob:Added" {
		t.Errorf("diff = %s %v", d.Type, names)
	}
}
