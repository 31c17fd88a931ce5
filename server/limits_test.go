package server

import (
	"context"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

func TestJobCountLimit(t *testing.T) {
	s := newTestServer(t, func(c *Config) { c.JobMaxCount = 100 })
	ctx := context.Background()
	twoGroups := func(a, b int) *structs.Job {
		j := testJob("two", a, 10, 10)
		g := *j.TaskGroups[0]
		g.Name, g.Count = "api", b
		j.TaskGroups = append(j.TaskGroups, &g)
		return j
	}
	tests := []struct {
		name     string
		job      *structs.Job
		wantText []string // empty: accepted
	}{
		{"at the limit", testJob("ok", 100, 10, 10), nil},
		{"a group over the limit", testJob("huge", 1_000_000_000, 10, 10), []string{`task group "web"`, "1000000000", "limit of 100", "job_max_count"}},
		{"int64 max", testJob("max", int(^uint(0)>>1), 10, 10), []string{`task group "web"`, "limit of 100"}},
		{"the groups together over the limit", twoGroups(60, 50), []string{`job "two"`, "110 allocations", "limit of 100"}},
		{"the groups together at the limit", twoGroups(60, 40), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, regErr := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: tt.job.Copy()})
			_, planErr := s.JobPlan(ctx, &structs.JobPlanRequest{Job: tt.job.Copy()})
			for what, err := range map[string]error{"register": regErr, "plan": planErr} {
				if len(tt.wantText) == 0 {
					if err != nil {
						t.Errorf("%s: %v", what, err)
					}
					continue
				}
				if structs.KindOf(err) != structs.KindInvalid || structs.KindInvalid.HTTPStatus() != 400 {
					t.Fatalf("%s: err = %v, want a 400", what, err)
				}
				for _, want := range tt.wantText {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not contain %q", what, err, want)
					}
				}
			}
			if len(tt.wantText) > 0 {
				if j, _ := s.State().JobByID(nil, structs.DefaultNamespace, tt.job.ID); j != nil {
					t.Errorf("refused job %q was stored", tt.job.ID)
				}
			}
		})
	}
}

func TestJobCountLimitDefault(t *testing.T) {
	s := newTestServer(t, nil)
	if s.config.JobMaxCount != DefaultJobMaxCount {
		t.Fatalf("JobMaxCount = %d", s.config.JobMaxCount)
	}
	_, err := s.JobPlan(context.Background(), &structs.JobPlanRequest{Job: testJob("big", DefaultJobMaxCount+1, 10, 10)})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("count %d: %v", DefaultJobMaxCount+1, err)
	}
}
