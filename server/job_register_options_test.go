package server

import (
	"context"
	"testing"

	"github.com/drover-io/drover/structs"
)

// TestJobRegisterOptions checks the register options of Nomad's API:
// PreserveCounts and PreserveResources keep what the stored job has, and
// EvalPriority sets the evaluation's priority (of a deregistration too).
func TestJobRegisterOptions(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	first := testJob("web", 3, 100, 100)
	first.TaskGroups = append(first.TaskGroups, &structs.TaskGroup{Name: "db", Count: 2,
		Tasks: []*structs.Task{{Name: "pg", Driver: "mock", Resources: &structs.Resources{CPU: 200, MemoryMB: 200}}}})
	registerJob(t, s, first)

	update := func() *structs.Job {
		j := testJob("web", 5, 50, 50)
		j.TaskGroups = append(j.TaskGroups,
			&structs.TaskGroup{Name: "db", Count: 7, Tasks: []*structs.Task{{Name: "pg", Driver: "mock", Resources: &structs.Resources{CPU: 20, MemoryMB: 20}}}},
			&structs.TaskGroup{Name: "new", Count: 4, Tasks: []*structs.Task{{Name: "x", Driver: "mock", Resources: &structs.Resources{CPU: 30, MemoryMB: 30}}}})
		return j
	}
	type want struct {
		counts map[string]int
		cpu    map[string]int // group -> its task's CPU
	}
	tests := []struct {
		name string
		req  structs.JobRegisterRequest
		want want
	}{
		{"neither", structs.JobRegisterRequest{},
			want{map[string]int{"web": 5, "db": 7, "new": 4}, map[string]int{"web": 50, "db": 20, "new": 30}}},
		{"preserve counts", structs.JobRegisterRequest{PreserveCounts: true},
			want{map[string]int{"web": 3, "db": 2, "new": 4}, map[string]int{"web": 50, "db": 20, "new": 30}}},
		{"preserve resources", structs.JobRegisterRequest{PreserveResources: true},
			want{map[string]int{"web": 5, "db": 7, "new": 4}, map[string]int{"web": 100, "db": 200, "new": 30}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Each case starts from the first version again.
			if _, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: first}); err != nil {
				t.Fatal(err)
			}
			req := tc.req
			req.Job = update()
			if _, err := s.JobRegister(ctx, &req); err != nil {
				t.Fatal(err)
			}
			got, err := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
			if err != nil {
				t.Fatal(err)
			}
			for _, tg := range got.Job.TaskGroups {
				if tg.Count != tc.want.counts[tg.Name] {
					t.Errorf("group %s: count %d, want %d", tg.Name, tg.Count, tc.want.counts[tg.Name])
				}
				if cpu := tg.Tasks[0].Resources.CPU; cpu != tc.want.cpu[tg.Name] {
					t.Errorf("group %s: cpu %d, want %d", tg.Name, cpu, tc.want.cpu[tg.Name])
				}
			}
		})
	}

	t.Run("eval priority", func(t *testing.T) {
		for _, tc := range []struct {
			override, want int
		}{{0, structs.JobDefaultPriority}, {99, 99}} {
			r, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: testJob("prio", 1, 10, 10), EvalPriority: tc.override})
			if err != nil {
				t.Fatal(err)
			}
			e, err := s.State().EvalByID(nil, r.EvalID)
			if err != nil || e == nil {
				t.Fatalf("eval %s: %v", r.EvalID, err)
			}
			if e.Priority != tc.want {
				t.Errorf("register with eval priority %d: eval priority %d, want %d", tc.override, e.Priority, tc.want)
			}
		}
		d, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "prio", EvalPriority: 97})
		if err != nil {
			t.Fatal(err)
		}
		e, err := s.State().EvalByID(nil, d.EvalID)
		if err != nil || e == nil || e.Priority != 97 {
			t.Errorf("deregister eval %+v (%v): want priority 97", e, err)
		}
		if _, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: testJob("prio", 1, 10, 10), EvalPriority: 101}); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("eval priority 101: %v, want invalid", err)
		}
	})
}
