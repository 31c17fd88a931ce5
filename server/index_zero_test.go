package server

import (
	"context"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestIndexOfDataNeverWritten checks Nomad's answers on a fresh cluster:
// reads of tables never written answer index 0 (Nomad's API tests check
// it), reads of unknown jobs, evaluations and nodes answer empty lists, and
// the client's own query still gets an index it can block on.
func TestIndexOfDataNeverWritten(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	tests := []struct {
		name string
		read func() (structs.QueryMeta, int, error)
	}{
		{"allocations", func() (structs.QueryMeta, int, error) {
			r, err := s.AllocList(ctx, &structs.AllocListRequest{})
			if err != nil {
				return structs.QueryMeta{}, 0, err
			}
			return r.QueryMeta, len(r.Allocations), nil
		}},
		{"evaluations", func() (structs.QueryMeta, int, error) {
			r, err := s.EvalList(ctx, &structs.EvalListRequest{})
			if err != nil {
				return structs.QueryMeta{}, 0, err
			}
			return r.QueryMeta, len(r.Evaluations), nil
		}},
		{"unknown job's allocations", func() (structs.QueryMeta, int, error) {
			r, err := s.JobAllocations(ctx, &structs.JobSpecificRequest{JobID: "nope"})
			if err != nil {
				return structs.QueryMeta{}, 0, err
			}
			return r.QueryMeta, len(r.Allocations), nil
		}},
		{"unknown job's evaluations", func() (structs.QueryMeta, int, error) {
			r, err := s.JobEvaluations(ctx, &structs.JobSpecificRequest{JobID: "nope"})
			if err != nil {
				return structs.QueryMeta{}, 0, err
			}
			return r.QueryMeta, len(r.Evaluations), nil
		}},
		{"unknown evaluation's allocations", func() (structs.QueryMeta, int, error) {
			r, err := s.EvalAllocations(ctx, &structs.EvalSpecificRequest{EvalID: "8e231cf4-ca48-43ff-b694-5801e69e22fa"})
			if err != nil {
				return structs.QueryMeta{}, 0, err
			}
			return r.QueryMeta, len(r.Allocations), nil
		}},
		{"unknown node's allocations", func() (structs.QueryMeta, int, error) {
			r, err := s.NodeAllocations(ctx, &structs.NodeSpecificRequest{NodeID: "nope"})
			if err != nil {
				return structs.QueryMeta{}, 0, err
			}
			return r.QueryMeta, len(r.Allocs), nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			meta, n, err := tc.read()
			if err != nil {
				t.Fatal(err)
			}
			if meta.Index != 0 || n != 0 {
				t.Errorf("index %d, %d items: want index 0 and none", meta.Index, n)
			}
		})
	}

	t.Run("a query on index 1 blocks on such data", func(t *testing.T) {
		start := time.Now()
		r, err := s.AllocList(ctx, &structs.AllocListRequest{QueryOptions: structs.QueryOptions{MinQueryIndex: 1, MaxQueryTime: 50 * time.Millisecond}})
		if err != nil || r.Index != 0 {
			t.Fatalf("%+v, %v", r, err)
		}
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("returned after %v: it did not block", d)
		}
	})

	t.Run("a client's allocations query is never at 0", func(t *testing.T) {
		registerNode(t, s, testNode("n1", 4000, 4096))
		r, err := s.NodeGetClientAllocs(ctx, &structs.NodeSpecificRequest{NodeID: "n1", SecretID: "secret-n1"})
		if err != nil || r.Index == 0 {
			t.Fatalf("%+v, %v", r, err)
		}
		g, err := s.AllocGetAllocs(ctx, &structs.AllocsGetRequest{AllocIDs: []string{"nope"}})
		if err != nil || g.Index == 0 {
			t.Fatalf("%+v, %v", g, err)
		}
	})
}
