package server

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/drover-io/drover/structs"
)

func scaledJob() *structs.Job {
	j := testJob("web", 2, 100, 100)
	j.TaskGroups[0].Scaling = &structs.ScalingPolicy{Type: structs.ScalingPolicyTypeHorizontal, Min: 1, Max: 5, Enabled: true,
		Policy: map[string]any{"cooldown": "1m"}}
	j.TaskGroups[0].Tasks[0].ScalingPolicies = []*structs.ScalingPolicy{{Type: structs.ScalingPolicyTypeVerticalCPU, Min: 50, Max: 500, Enabled: true}}
	return j
}

// TestJobScale checks a count change: a new version with the count, an
// evaluation, an event; counts outside the scaling block's bounds are
// refused unless overridden.
func TestJobScale(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerJob(t, s, scaledJob())
	count := func(n int64) *int64 { return &n }

	tests := []struct {
		name      string
		req       structs.JobScaleRequest
		wantErr   string
		wantKind  structs.ErrorKind
		wantCount int
	}{
		{name: "up", req: structs.JobScaleRequest{Group: "web", Count: count(4), Message: "more"}, wantCount: 4},
		{name: "above max", req: structs.JobScaleRequest{Group: "web", Count: count(6)},
			wantErr: `group "web": count 6 is outside the scaling block's bounds [1, 5]`, wantKind: structs.KindInvalid},
		{name: "below min", req: structs.JobScaleRequest{Group: "web", Count: count(0)},
			wantErr: `count 0 is outside the scaling block's bounds [1, 5]`, wantKind: structs.KindInvalid},
		{name: "override", req: structs.JobScaleRequest{Group: "web", Count: count(0), PolicyOverride: true}, wantCount: 0},
		{name: "negative", req: structs.JobScaleRequest{Group: "web", Count: count(-1), PolicyOverride: true},
			wantErr: "must not be negative", wantKind: structs.KindInvalid},
		{name: "unknown group", req: structs.JobScaleRequest{Group: "db", Count: count(1)},
			wantErr: `group "db" does not exist in job "web"`, wantKind: structs.KindInvalid},
		{name: "unknown job", req: structs.JobScaleRequest{JobID: "nope", Group: "web", Count: count(1)}, wantKind: structs.KindNotFound, wantErr: "nope"},
		{name: "error with count", req: structs.JobScaleRequest{Group: "web", Count: count(1), Error: true},
			wantErr: "cannot change the count", wantKind: structs.KindInvalid},
		{name: "down", req: structs.JobScaleRequest{Group: "web", Count: count(1), Message: "less"}, wantCount: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, err := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
			if err != nil {
				t.Fatal(err)
			}
			req := tc.req
			if req.JobID == "" {
				req.JobID = "web"
			}
			resp, err := s.JobScale(ctx, &req)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || structs.KindOf(err) != tc.wantKind {
					t.Fatalf("error = %v (kind %v), want %q of kind %v", err, structs.KindOf(err), tc.wantErr, tc.wantKind)
				}
				after, _ := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
				if after.Job.Version != before.Job.Version {
					t.Errorf("a refused request changed the job's version")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			after, err := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
			if err != nil {
				t.Fatal(err)
			}
			if got := after.Job.TaskGroups[0].Count; got != tc.wantCount {
				t.Errorf("count = %d, want %d", got, tc.wantCount)
			}
			if after.Job.Version != before.Job.Version+1 {
				t.Errorf("version = %d, want %d (a scale is a new version, as in Nomad)", after.Job.Version, before.Job.Version+1)
			}
			ev, err := s.EvalGet(ctx, &structs.EvalSpecificRequest{EvalID: resp.EvalID})
			if err != nil || ev.Eval == nil || ev.Eval.TriggeredBy != structs.EvalTriggerScaling {
				t.Fatalf("eval %s = %+v, %v; want one triggered by %s", resp.EvalID, ev, err, structs.EvalTriggerScaling)
			}
			events := after.Job.ScalingEvents["web"]
			if len(events) == 0 || events[0].Count == nil || *events[0].Count != int64(tc.wantCount) ||
				events[0].PreviousCount != int64(before.Job.TaskGroups[0].Count) || *events[0].EvalID != resp.EvalID {
				t.Errorf("newest event = %+v, want the change %d -> %d with eval %s", events[0], before.Job.TaskGroups[0].Count, tc.wantCount, resp.EvalID)
			}
		})
	}
}

// TestJobScaleEventOnly checks that a request without a count records its
// message and changes neither the version nor the count.
func TestJobScaleEventOnly(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerJob(t, s, scaledJob())
	before, _ := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
	ev, err := s.JobScale(ctx, &structs.JobScaleRequest{JobID: "web", Group: "web", Message: "metrics unavailable", Error: true})
	if err != nil {
		t.Fatal(err)
	}
	if ev.EvalID != "" || ev.EvalCreateIndex != 0 || ev.JobModifyIndex != before.Job.JobModifyIndex {
		t.Errorf("event-only reply = %+v, want no evaluation and the job's JobModifyIndex %d", ev, before.Job.JobModifyIndex)
	}
	st, err := s.JobScaleStatus(ctx, &structs.JobSpecificRequest{JobID: "web"})
	if err != nil {
		t.Fatal(err)
	}
	g := st.TaskGroups["web"]
	if g.Desired != 2 || len(g.Events) != 1 || !g.Events[0].Error || g.Events[0].Message != "metrics unavailable" || g.Events[0].Count != nil {
		t.Errorf("status = %+v, want desired 2 and the error event", g)
	}
	if st.JobModifyIndex != before.Job.JobModifyIndex {
		t.Errorf("JobModifyIndex = %d, want %d unchanged", st.JobModifyIndex, before.Job.JobModifyIndex)
	}
	// Registering the job again keeps the events and the policy IDs.
	policies, err := s.ScalingPolicyList(ctx, &structs.ScalingPolicyListRequest{})
	if err != nil || len(policies.Policies) != 2 {
		t.Fatalf("policies = %+v, %v; want 2", policies, err)
	}
	j := scaledJob()
	j.TaskGroups[0].Count = 3
	registerJob(t, s, j)
	after, _ := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: "web"})
	if len(after.Job.ScalingEvents["web"]) != 1 {
		t.Errorf("events after a registration = %+v, want the one kept", after.Job.ScalingEvents)
	}
	again, _ := s.ScalingPolicyList(ctx, &structs.ScalingPolicyListRequest{})
	for i := range again.Policies {
		if again.Policies[i].ID != policies.Policies[i].ID {
			t.Errorf("policy %d ID changed from %s to %s across versions", i, policies.Policies[i].ID, again.Policies[i].ID)
		}
	}
}

func TestScalingPolicies(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerJob(t, s, scaledJob())
	other := testJob("api", 1, 100, 100)
	other.TaskGroups[0].Scaling = &structs.ScalingPolicy{Type: structs.ScalingPolicyTypeHorizontal, Min: 0, Max: 3, Enabled: false}
	registerJob(t, s, other)

	tests := []struct {
		name      string
		req       structs.ScalingPolicyListRequest
		wantTypes string
	}{
		{"all", structs.ScalingPolicyListRequest{}, "horizontal,horizontal,vertical_cpu"},
		{"by job", structs.ScalingPolicyListRequest{Job: "api"}, "horizontal"},
		{"by type prefix", structs.ScalingPolicyListRequest{Type: "vertical"}, "vertical_cpu"},
		{"other namespace", structs.ScalingPolicyListRequest{QueryOptions: structs.QueryOptions{Namespace: "prod"}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.ScalingPolicyList(ctx, &tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var types []string
			for _, p := range resp.Policies {
				types = append(types, p.Type)
			}
			sortStrings(types)
			if got := strings.Join(types, ","); got != tc.wantTypes {
				t.Errorf("types = %q, want %q", got, tc.wantTypes)
			}
		})
	}
	list, _ := s.ScalingPolicyList(ctx, &structs.ScalingPolicyListRequest{Job: "web", Type: "horizontal"})
	got, err := s.ScalingPolicyGet(ctx, &structs.ScalingPolicySpecificRequest{ID: list.Policies[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	p := got.Policy
	if p.Target["Job"] != "web" || p.Target["Group"] != "web" || p.Target["Namespace"] != "default" || p.Max != 5 || p.Policy["cooldown"] != "1m" {
		t.Errorf("policy = %+v", p)
	}
	if _, err := s.ScalingPolicyGet(ctx, &structs.ScalingPolicySpecificRequest{ID: "nope"}); structs.KindOf(err) != structs.KindNotFound {
		t.Errorf("unknown policy: error %v, want not found", err)
	}
}

// TestJobRegisterScalingBounds checks that a registration whose count is
// outside its scaling block's bounds is refused.
func TestJobRegisterScalingBounds(t *testing.T) {
	s := newTestServer(t, nil)
	j := scaledJob()
	j.TaskGroups[0].Count = 9
	_, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: j})
	if err == nil || !strings.Contains(err.Error(), `group "web": count 9 is outside the scaling block's bounds [1, 5]`) {
		t.Fatalf("error = %v", err)
	}
}

func sortStrings(s []string) { slices.Sort(s) }
