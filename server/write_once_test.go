package server

import (
	"context"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/server/state"
	"github.com/drover-io/drover/structs"
)

func countEvals(t *testing.T, s *Server, jobID string) int {
	t.Helper()
	evals, err := s.State().EvalsByJob(nil, structs.DefaultNamespace, jobID)
	if err != nil {
		t.Fatal(err)
	}
	return len(evals)
}

// TestDeduplicatedWrites sends each deduplicated write twice with the same
// request ID, as a caller retrying after a lost reply does: the repeat gets
// the first reply and changes nothing.
func TestDeduplicatedWrites(t *testing.T) {
	s := newTestServer(t, nil)
	ctx := context.Background()
	registerNode(t, s, testNode("n1", 1000, 1000))
	placed := registerJob(t, s, testJob("placed", 1, 100, 100))
	waitEvalStatus(t, s, placed.EvalID, structs.EvalStatusComplete)
	alloc := allocsOf(t, s, "placed", structs.AllocDesiredStatusRun)[0]

	tests := []struct {
		name string
		// write makes the write with request ID id.
		write func(id string) (any, error)
		// changes counts what one application of the write changes.
		changes func() int
	}{
		{"register a new job with enforce index 0", func(id string) (any, error) {
			return s.JobRegister(ctx, &structs.JobRegisterRequest{Job: testJob("web", 0, 10, 10), EnforceIndex: true, WriteRequest: structs.WriteRequest{RequestID: id}})
		}, func() int { return countEvals(t, s, "web") }},
		{"register an unchanged job", func(id string) (any, error) {
			return s.JobRegister(ctx, &structs.JobRegisterRequest{Job: testJob("web", 0, 10, 10), WriteRequest: structs.WriteRequest{RequestID: id}})
		}, func() int { return countEvals(t, s, "web") }},
		{"revert a job", func(id string) (any, error) {
			return s.JobRevert(ctx, &structs.JobRevertRequest{JobID: "web", JobVersion: 0, WriteRequest: structs.WriteRequest{RequestID: id}})
		}, func() int { return countEvals(t, s, "web") }},
		{"stop an allocation", func(id string) (any, error) {
			return s.AllocStop(ctx, &structs.AllocStopRequest{AllocID: alloc.ID, WriteRequest: structs.WriteRequest{RequestID: id}})
		}, func() int { return countEvals(t, s, "placed") }},
		{"set the scheduler configuration with CAS", func(id string) (any, error) {
			cfg, err := s.SchedulerGetConfig(ctx, &structs.SchedulerConfigRequest{})
			if err != nil {
				return nil, err
			}
			c := *cfg.SchedulerConfig
			c.MemoryOversubscriptionEnabled = !c.MemoryOversubscriptionEnabled
			return s.SchedulerSetConfig(ctx, &structs.SchedulerSetConfigRequest{Config: c, CAS: true, WriteRequest: structs.WriteRequest{RequestID: id}})
		}, func() int { return int(s.State().Index("scheduler_config")) }},
		{"purge a job", func(id string) (any, error) {
			return s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "web", Purge: true, WriteRequest: structs.WriteRequest{RequestID: id}})
		}, func() int { return countEvals(t, s, "web") }},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "revert a job" {
				// A second version to revert from.
				registerJob(t, s, testJob("web", 0, 20, 10))
			}
			id := "req-" + string(rune('a'+i))
			before := tt.changes()
			first, err := tt.write(id)
			if err != nil {
				t.Fatalf("first write: %v", err)
			}
			once := tt.changes()
			if once == before {
				t.Fatalf("the first write changed nothing (%d)", once)
			}
			again, err := tt.write(id)
			if err != nil {
				t.Fatalf("repeat: %v", err)
			}
			if !reflect.DeepEqual(first, again) {
				t.Errorf("repeat reply = %+v, want the first one %+v", again, first)
			}
			if got := tt.changes(); got != once {
				t.Errorf("the repeat was applied again: %d -> %d", once, got)
			}
		})
	}

	// A request ID longer than a UUID needs is refused.
	_, err := s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "placed", WriteRequest: structs.WriteRequest{RequestID: strings.Repeat("x", 129)}})
	if structs.KindOf(err) != structs.KindInvalid {
		t.Fatalf("a 129-byte request ID: err = %v, want invalid", err)
	}

	// An ID reused for another method is an error, not another's reply.
	_, err = s.JobDeregister(ctx, &structs.JobDeregisterRequest{JobID: "placed", WriteRequest: structs.WriteRequest{RequestID: "req-a"}})
	if structs.KindOf(err) != structs.KindConflict {
		t.Fatalf("reused request ID: err = %v, want a conflict", err)
	}
}

// TestWriteRecordsSurviveRestart: a server restarted on its raft stores
// remembers the writes applied before, whether from its snapshot or from
// its log, and applies their repeats no more.
func TestWriteRecordsSurviveRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		cfg := func() *Config {
			return &Config{NodeName: "persist", LogStore: logs, StableStore: logs, SnapshotStore: snaps}
		}
		reg := func(s *Server, id, jobID string) *structs.JobRegisterResponse {
			t.Helper()
			r, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{
				Job: testJob(jobID, 0, 10, 10), EnforceIndex: true, WriteRequest: structs.WriteRequest{RequestID: id}})
			if err != nil {
				t.Fatalf("JobRegister %s: %v", id, err)
			}
			return r
		}
		s1, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		inSnapshot := reg(s1, "in-snapshot", "a")
		if err := s1.raft.Snapshot().Error(); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		inLog := reg(s1, "in-log", "b")
		want := s1.State().LatestIndex()
		if err := s1.Shutdown(); err != nil {
			t.Fatal(err)
		}

		s2, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := s2.Shutdown(); err != nil {
				t.Error(err)
			}
		}()
		settled(t, "state replayed", func() (bool, string) { return s2.State().LatestIndex() >= want, "behind" })
		for _, tc := range []struct {
			id, job string
			first   *structs.JobRegisterResponse
		}{{"in-snapshot", "a", inSnapshot}, {"in-log", "b", inLog}} {
			if got := reg(s2, tc.id, tc.job); !reflect.DeepEqual(got, tc.first) {
				t.Errorf("%s: repeat after restart = %+v, want %+v", tc.id, got, tc.first)
			}
			if n := countEvals(t, s2, tc.job); n != 1 {
				t.Errorf("%s: %d evaluations, want 1", tc.id, n)
			}
		}
	})
}

// TestFSMAppliesAWriteOnce: two raft entries of the same deduplicated write
// (a repeat that passed the method's check while the first was still being
// committed) are applied once; both answer the first one's record.
func TestFSMAppliesAWriteOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := newFSM(slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		entry := func(evalID string) []byte {
			job := testJob("web", 1, 100, 100)
			job.Canonicalize()
			body, err := encodeMsgpack(f.handle, &JobRegisterCommand{Job: job, Eval: &structs.Evaluation{ID: evalID, Namespace: "default", JobID: "web", Status: "pending"}})
			if err != nil {
				t.Fatal(err)
			}
			buf, err := encodeCommand(f.handle, WriteOnceRequestType, &WriteOnceCommand{
				RequestID: "r1", Time: 1, ReplyType: "first", Reply: []byte(evalID), Type: JobRegisterRequestType, Body: body})
			if err != nil {
				t.Fatal(err)
			}
			return buf
		}
		for i, evalID := range []string{"e1", "e2"} {
			resp := f.Apply(&raft.Log{Index: uint64(10 + i), Type: raft.LogCommand, Data: entry(evalID)})
			rec, ok := resp.(*state.WriteRecord)
			if !ok || rec.Index != 10 || string(rec.Reply) != "e1" {
				t.Fatalf("entry %d answered %+v, want the record of the first", i, resp)
			}
		}
		evals, err := f.State().EvalsByJob(nil, "default", "web")
		if err != nil || len(evals) != 1 || evals[0].ID != "e1" {
			t.Fatalf("evals = %v, %v; want e1 only", evals, err)
		}
	})
}
