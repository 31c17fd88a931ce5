package server

import (
	"context"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// nestedConfig returns a task config holding maps nested depth deep.
func nestedConfig(depth int) map[string]any {
	var v any = "leaf"
	for range depth {
		v = map[string]any{"x": v}
	}
	return map[string]any{"run_for": "10s", "deep": v}
}

// TestDeepConfigRefusedBeforeRaft: issue 19's job whose task config nests
// 5,000 deep was committed, then failed to decode on every restart. Now
// it is a 400 and raft never sees it; the server restarts cleanly.
func TestDeepConfigRefusedBeforeRaft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		cfg := func() *Config {
			return &Config{NodeName: "deep", LogStore: logs, StableStore: logs, SnapshotStore: snaps}
		}
		s, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		registerNode(t, s, testNode("n1", 4000, 4096))
		before := s.raft.LastIndex()

		job := testJob("deep", 1, 100, 100)
		job.TaskGroups[0].Tasks[0].Config = nestedConfig(5000)
		for name, call := range map[string]func() error{
			"register": func() error {
				_, err := s.JobRegister(context.Background(), &structs.JobRegisterRequest{Job: job.Copy()})
				return err
			},
			"plan": func() error {
				_, err := s.JobPlan(context.Background(), &structs.JobPlanRequest{Job: job.Copy()})
				return err
			},
			"raw raft apply": func() error {
				j := job.Copy()
				j.Canonicalize()
				_, _, err := s.raftApply(JobRegisterRequestType, &JobRegisterCommand{Job: j, Eval: &structs.Evaluation{ID: "e"}})
				return err
			},
		} {
			err := call()
			if structs.KindOf(err) != structs.KindInvalid || !strings.Contains(err.Error(), "nested") {
				t.Errorf("%s: err = %v, want a 400 about nesting", name, err)
			}
		}
		// Other entries may come meanwhile (the node missing its heartbeats
		// on a slow machine): none may be the job's.
		for i := before + 1; i <= s.raft.LastIndex(); i++ {
			var l raft.Log
			if err := logs.GetLog(i, &l); err != nil {
				t.Fatalf("raft log entry %d: %v", i, err)
			}
			if l.Type == raft.LogCommand && len(l.Data) > 0 && MessageType(l.Data[0]) == JobRegisterRequestType {
				t.Fatalf("raft log entry %d registers a job", i)
			}
		}
		if j, err := s.State().JobByID(nil, structs.DefaultNamespace, "deep"); err != nil || j != nil {
			t.Fatalf("job in the state store: %v, %v", j, err)
		}
		if err := s.Shutdown(); err != nil {
			t.Fatal(err)
		}
		s2, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		if err := s2.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestDeepestAcceptedJobSurvivesSnapshot: a job nested as deep as the
// server accepts is scheduled (its plan result carries it deeper still),
// and a snapshot of that state restores into a new server.
func TestDeepestAcceptedJobSurvivesSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := raft.NewInmemStore()
		snaps := raft.NewInmemSnapshotStore()
		cfg := func() *Config {
			return &Config{NodeName: "deepest", LogStore: logs, StableStore: logs, SnapshotStore: snaps}
		}
		s, err := NewServer(context.Background(), cfg())
		if err != nil {
			t.Fatal(err)
		}
		registerNode(t, s, testNode("n1", 4000, 4096))

		// The deepest config the server accepts: valid (structs.MaxFreeformDepth)
		// and storable.
		depth := 0
		for d := jobDepth; d > 0; d-- {
			j := testJob("probe", 1, 100, 100)
			j.TaskGroups[0].Tasks[0].Config = nestedConfig(d)
			j.Canonicalize()
			if j.Validate() == nil && s.fsm.storableJob(j) == nil {
				depth = d
				break
			}
		}
		if depth == 0 {
			t.Fatal("no depth accepted")
		}
		job := testJob("deep", 1, 100, 100)
		job.TaskGroups[0].Tasks[0].Config = nestedConfig(depth)
		r := registerJob(t, s, job)
		waitEvalStatus(t, s, r.EvalID, structs.EvalStatusComplete)
		if n := len(allocsOf(t, s, "deep", structs.AllocDesiredStatusRun)); n != 1 {
			t.Fatalf("allocs = %d", n)
		}
		if err := s.raft.Snapshot().Error(); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
		if err := s.Shutdown(); err != nil {
			t.Fatal(err)
		}

		// Restore from the snapshot alone, as a server whose log was compacted.
		list, err := snaps.List()
		if err != nil || len(list) == 0 {
			t.Fatalf("snapshots = %v, %v", list, err)
		}
		_, rc, err := snaps.Open(list[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		f, err := newFSM(slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Restore(rc); err != nil {
			t.Fatalf("restore: %v", err)
		}
		got, _ := f.State().JobByID(nil, structs.DefaultNamespace, "deep")
		if got == nil || !reflect.DeepEqual(got.TaskGroups[0].Tasks[0].Config["deep"], nestedConfig(depth)["deep"]) {
			t.Fatal("restored job lost its config")
		}
		allocs, _ := f.State().AllocsByJob(nil, structs.DefaultNamespace, "deep")
		if len(allocs) != 1 || allocs[0].Job == nil {
			t.Fatalf("restored allocs = %v", allocs)
		}
	})
}

// TestFSMSkipsEntriesItCannotApply: an entry that does not decode, names
// an unknown command, or would make applying panic (a registration
// without its evaluation) is an error for that entry only; the next entry
// applies.
func TestFSMSkipsEntriesItCannotApply(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := newFSM(slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		job := testJob("web", 1, 100, 100)
		job.Canonicalize()
		noEval, err := encodeCommand(f.handle, JobRegisterRequestType, &JobRegisterCommand{Job: job})
		if err != nil {
			t.Fatal(err)
		}
		nilAlloc, err := encodeCommand(f.handle, ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{nil}})
		if err != nil {
			t.Fatal(err)
		}
		bad := map[string][]byte{
			"garbage body":        {byte(JobRegisterRequestType), 0xc1, 0xff, 0x00},
			"unknown type":        {200, 0x80},
			"register, no eval":   noEval,
			"plan with nil alloc": nilAlloc,
			"truncated":           noEval[:len(noEval)/2],
		}
		index := uint64(1)
		for name, data := range bad {
			resp := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: data})
			if _, ok := resp.(error); !ok {
				t.Errorf("%s: Apply = %v, want an error", name, resp)
			}
			index++
		}
		if n := f.State().LatestIndex(); n != 0 {
			t.Fatalf("state index = %d after refused entries, want 0", n)
		}
		applyCmd(t, f, index, JobRegisterRequestType, &JobRegisterCommand{Job: job, Eval: &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web"}})
		if j, _ := f.State().JobByID(nil, "default", "web"); j == nil {
			t.Fatal("the next entry was not applied")
		}
	})
}

func TestFSMRestoreRefusesGarbage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := newFSM(slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range map[string]string{"empty": "", "garbage": "\xc1\xc1\xc1", "wrong shape": "\x93\x01\x02\x03"} {
			if err := f.Restore(io.NopCloser(strings.NewReader(data))); err == nil {
				t.Errorf("%s: restored", name)
			}
		}
	})
}

// freeFormPaths returns the paths from t to every interface-typed value
// reachable from it, not descending into the types in stop.
func freeFormPaths(t reflect.Type, path string, stop map[reflect.Type]bool, seen map[reflect.Type]bool) []string {
	if stop[t] {
		return nil
	}
	switch t.Kind() {
	case reflect.Interface:
		return []string{path}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return freeFormPaths(t.Elem(), path+"[]", stop, seen)
	case reflect.Map:
		return append(freeFormPaths(t.Key(), path+"{key}", stop, seen), freeFormPaths(t.Elem(), path+"{}", stop, seen)...)
	case reflect.Struct:
		if seen[t] {
			return nil
		}
		seen[t] = true
		var out []string
		for i := range t.NumField() {
			f := t.Field(i)
			out = append(out, freeFormPaths(f.Type, path+"."+f.Name, stop, seen)...)
		}
		return out
	}
	return nil
}

// TestPlanResultsHoldNoFreeFormValuesButJobs backs FSM.proposal: outside
// the jobs in them (checked by storableJob when they were registered),
// plan results hold only typed values, which always decode once encoded.
func TestPlanResultsHoldNoFreeFormValuesButJobs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := map[reflect.Type]bool{reflect.TypeOf(structs.Job{}): true}
		if paths := freeFormPaths(reflect.TypeOf(PlanResultCommand{}), "PlanResultCommand", stop, map[reflect.Type]bool{}); len(paths) > 0 {
			t.Fatalf("plan results carry free-form values outside jobs: %v; check them in FSM.proposal", paths)
		}
		// The walk finds what it looks for.
		if paths := freeFormPaths(reflect.TypeOf(JobRegisterCommand{}), "JobRegisterCommand", nil, map[reflect.Type]bool{}); len(paths) == 0 {
			t.Fatal("no free-form value found in a job: the walk is broken")
		}
	})
}
