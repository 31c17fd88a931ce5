package server

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/structs"
)

func poolNames(t *testing.T, s *Server) string {
	t.Helper()
	resp, err := s.NodePoolList(context.Background(), &structs.NodePoolListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range resp.NodePools {
		names = append(names, p.Name)
	}
	return fmt.Sprint(names)
}

func TestNodePools(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		ctx := context.Background()
		if got := poolNames(t, s); got != "[all default]" {
			t.Fatalf("pools of an empty cluster = %s, want the built-in ones", got)
		}
		gpu := testNode("g1", 4000, 4096)
		gpu.NodePool = "gpu"
		registerNode(t, s, gpu)
		registerNode(t, s, testNode("d1", 4000, 4096))
		if got := poolNames(t, s); got != "[all default gpu]" {
			t.Fatalf("pools = %s, want gpu (a node's pool) listed", got)
		}
		if _, err := s.NodePoolUpsert(ctx, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{
			{Name: "batch", Description: "batch nodes", Meta: map[string]string{"team": "data"}}}}); err != nil {
			t.Fatal(err)
		}
		got, err := s.NodePoolGet(ctx, &structs.NodePoolSpecificRequest{Name: "batch"})
		if err != nil || got.NodePool.Description != "batch nodes" || got.NodePool.Meta["team"] != "data" || got.NodePool.CreateIndex == 0 {
			t.Fatalf("NodePoolGet(batch) = %+v, %v", got, err)
		}

		for _, tc := range []struct {
			name string
			call func() error
			kind structs.ErrorKind
		}{
			{"write built-in", func() error {
				_, err := s.NodePoolUpsert(ctx, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "default", Description: "x"}}})
				return err
			}, structs.KindInvalid},
			{"bad name", func() error {
				_, err := s.NodePoolUpsert(ctx, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "a b"}}})
				return err
			}, structs.KindInvalid},
			{"delete built-in", func() error {
				_, err := s.NodePoolDelete(ctx, &structs.NodePoolDeleteRequest{Names: []string{"all"}})
				return err
			}, structs.KindInvalid},
			{"get unknown", func() error {
				_, err := s.NodePoolGet(ctx, &structs.NodePoolSpecificRequest{Name: "nope"})
				return err
			}, structs.KindNotFound},
			{"job in unknown pool", func() error {
				j := testJob("lost", 1, 100, 100)
				j.NodePool = "nope"
				_, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: j})
				return err
			}, structs.KindInvalid},
		} {
			if err := tc.call(); structs.KindOf(err) != tc.kind {
				t.Fatalf("%s: err = %v, want kind %v", tc.name, err, tc.kind)
			}
		}

		// A job of pool gpu runs on its node only; a default one elsewhere.
		j := testJob("train", 2, 100, 100)
		j.NodePool = "gpu"
		registerJob(t, s, j)
		registerJob(t, s, testJob("web", 2, 100, 100))
		jobIdle(t, s, "train")
		jobIdle(t, s, "web")
		for job, node := range map[string]string{"train": "g1", "web": "d1"} {
			allocs := running(t, s, job)
			if len(allocs) != 2 {
				t.Fatalf("%s: %d allocs, want 2", job, len(allocs))
			}
			for _, a := range allocs {
				if a.NodeID != node {
					t.Fatalf("%s placed on %s, want %s", job, a.NodeID, node)
				}
			}
		}

		// batch holds a live job: not deleted until the job is gone.
		b := testJob("etl", 1, 100, 100)
		b.NodePool = "batch"
		registerJob(t, s, b)
		if _, err := s.NodePoolDelete(ctx, &structs.NodePoolDeleteRequest{Names: []string{"batch"}}); structs.KindOf(err) != structs.KindConflict {
			t.Fatalf("delete of a pool with a job: %v, want a conflict", err)
		}
		if _, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "etl", Purge: true}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.NodePoolDelete(ctx, &structs.NodePoolDeleteRequest{Names: []string{"batch"}}); err != nil {
			t.Fatal(err)
		}
		if got := poolNames(t, s); got != "[all default gpu]" {
			t.Fatalf("pools after delete = %s", got)
		}
	})
}

// TestNodePoolListPages: per_page and next_token page the list by name.
func TestNodePoolListPages(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newTestServer(t, nil)
		if _, err := s.NodePoolUpsert(context.Background(), &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "batch"}}}); err != nil {
			t.Fatal(err)
		}
		var pages []string
		token := ""
		for range 4 {
			resp, err := s.NodePoolList(context.Background(), &structs.NodePoolListRequest{QueryOptions: structs.QueryOptions{PerPage: 2, NextToken: token}})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range resp.NodePools {
				names = append(names, p.Name)
			}
			pages = append(pages, fmt.Sprint(names))
			if token = resp.NextToken; token == "" {
				break
			}
		}
		if got := fmt.Sprint(pages); got != "[[all batch] [default]]" {
			t.Errorf("pages = %s, want [[all batch] [default]]", got)
		}
	})
}
