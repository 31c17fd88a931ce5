package server

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

func TestJobGetResolvesPrefixes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		for _, id := range []string{"web", "web2", "api"} {
			registerJob(t, s, testJob(id, 0, 10, 10))
		}
		upsertNamespace(t, s, &structs.Namespace{Name: "team"})
		registerJob(t, s, jobIn("team", "batch"))
		tests := []struct {
			id, ns   string
			want     string // the job's ID, or "" for an error
			wantKind structs.ErrorKind
			wantMsg  string
		}{
			{id: "web", want: "web"}, // the exact ID wins over the longer one
			{id: "ap", want: "api"},
			{id: "we", wantKind: structs.KindInvalid, wantMsg: `job prefix "we" matches 2 jobs (web, web2): give more of the ID`},
			{id: "zzz", wantKind: structs.KindNotFound, wantMsg: `job "zzz" not found`},
			{id: "bat", wantKind: structs.KindNotFound},
			{id: "bat", ns: "team", want: "batch"},
			{id: "bat", ns: "*", want: "batch"},
			{id: "web", ns: "*", want: "web"},
		}
		for _, tt := range tests {
			resp, err := s.JobGet(ctx, &structs.JobSpecificRequest{JobID: tt.id, QueryOptions: structs.QueryOptions{Namespace: tt.ns}})
			if tt.want != "" {
				if err != nil || resp.Job == nil || resp.Job.ID != tt.want {
					t.Errorf("JobGet(%q in %q) = %+v, %v; want %s", tt.id, tt.ns, resp, err, tt.want)
				}
				continue
			}
			if structs.KindOf(err) != tt.wantKind || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("JobGet(%q in %q): err = %v, want %v %q", tt.id, tt.ns, err, tt.wantKind, tt.wantMsg)
			}
		}
	})
}

func TestCompositeReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		registerNode(t, s, testNode("node-1", 1000, 1000))
		registerNode(t, s, testNode("node-2", 1000, 1000))
		r := registerJob(t, s, testJob("web", 2, 100, 100))
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		placed := allocsOf(t, s, "web", structs.AllocDesiredStatusRun)
		if len(placed) != 2 {
			t.Fatalf("%d allocations placed", len(placed))
		}

		sum, err := s.JobSummary(ctx, &structs.JobSpecificRequest{JobID: "web", QueryOptions: structs.QueryOptions{Namespace: "*"}})
		if err != nil || sum.JobSummary.Summary["web"].Starting != 2 {
			t.Errorf("JobSummary in every namespace = %+v, %v", sum, err)
		}

		ea, err := s.EvalAllocations(ctx, &structs.EvalSpecificRequest{EvalID: r.EvalID[:8]})
		if err != nil || len(ea.Allocations) != 2 || ea.Index == 0 {
			t.Errorf("EvalAllocations = %+v, %v", ea, err)
		}
		for _, a := range ea.Allocations {
			if a.EvalID != r.EvalID {
				t.Errorf("allocation %s of eval %s listed for %s", a.ID, a.EvalID, r.EvalID)
			}
		}
		// As Nomad: an unknown evaluation placed nothing.
		if none, err := s.EvalAllocations(ctx, &structs.EvalSpecificRequest{EvalID: "nope"}); err != nil || none.Allocations == nil || len(none.Allocations) != 0 {
			t.Errorf("EvalAllocations of an unknown eval: %+v, %v", none, err)
		}

		total := 0
		for _, node := range []string{"node-1", "node-2"} {
			na, err := s.NodeAllocations(ctx, &structs.NodeSpecificRequest{NodeID: node})
			if err != nil {
				t.Fatalf("NodeAllocations(%s): %v", node, err)
			}
			for _, a := range na.Allocs {
				if a.NodeID != node || a.Job == nil {
					t.Errorf("NodeAllocations(%s) holds %s of node %s (job %v)", node, a.ID, a.NodeID, a.Job)
				}
			}
			total += len(na.Allocs)
		}
		if total != 2 {
			t.Errorf("the nodes hold %d allocations, want 2", total)
		}
		if _, err := s.NodeAllocations(ctx, &structs.NodeSpecificRequest{NodeID: "node-"}); structs.KindOf(err) != structs.KindInvalid {
			t.Errorf("NodeAllocations of an ambiguous prefix: %v", err)
		}

		for _, err := range []error{
			func() error {
				_, err := s.DeploymentGet(ctx, &structs.DeploymentSpecificRequest{JobID: "nope"})
				return err
			}(),
			func() error {
				_, err := s.DeploymentList(ctx, &structs.DeploymentListRequest{JobID: "nope"})
				return err
			}(),
		} {
			if structs.KindOf(err) != structs.KindNotFound || !strings.Contains(err.Error(), `job "nope" not found`) {
				t.Errorf("deployments of an unknown job: %v", err)
			}
		}
		if d, err := s.DeploymentGet(ctx, &structs.DeploymentSpecificRequest{JobID: "web"}); err != nil {
			t.Errorf("DeploymentGet of a known job: %+v, %v", d, err)
		}

		an, err := s.AllocNode(ctx, &structs.AllocSpecificRequest{AllocID: placed[0].ID[:8]})
		if err != nil || an.Alloc.ID != placed[0].ID || an.Node == nil || an.Node.ID != placed[0].NodeID {
			t.Errorf("AllocNode = %+v, %v; want %s on %s", an, err, placed[0].ID, placed[0].NodeID)
		}

		stop, err := s.AllocStop(ctx, &structs.AllocStopRequest{AllocID: placed[0].ID[:8]})
		if err != nil || stop.EvalID == "" {
			t.Fatalf("AllocStop by prefix = %+v, %v", stop, err)
		}
		if a, _ := s.State().AllocByID(nil, placed[0].ID); a.DesiredStatus != structs.AllocDesiredStatusStop {
			t.Errorf("the allocation stopped by prefix is %s", a.DesiredStatus)
		}
	})
}
