package server

import (
	"bytes"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// fuzzMemBound is how much a decode may allocate for an input of n bytes:
// a decoded value takes a small multiple of its encoding, plus fixed
// costs (a new state store per input). A length field that claims more
// than the input holds must not be believed.
func fuzzMemBound(n int) uint64 { return 32<<20 + 64*uint64(n) }

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// fuzzCommands are valid raft entries of every type, the seeds of
// FuzzFSMApply, plus a deep, a wide and a huge job.
func fuzzCommands(f *testing.F) [][]byte {
	h := newMsgpackHandle()
	job := testJob("web", 1, 100, 100)
	job.Canonicalize()
	eval := &structs.Evaluation{ID: "e1", Namespace: "default", JobID: "web", Status: structs.EvalStatusPending}
	node := testNode("n1", 1000, 1000)
	node.Events = []*structs.NodeEvent{{Message: "registered", Timestamp: time.Unix(5, 0).UTC()}}
	alloc := &structs.Allocation{ID: "a1", Namespace: "default", JobID: "web", Job: job, TaskGroup: "web",
		Name: "web.web[0]", NodeID: "n1", EvalID: "e1", DesiredStatus: "run", ClientStatus: "pending",
		Resources: &structs.Resources{CPU: 100, MemoryMB: 100}}

	deep := job.Copy() // deeper than the msgpack decoder reads (1,024 levels)
	var v any = "x"
	for range 1100 {
		v = map[string]any{"a": v}
	}
	deep.TaskGroups[0].Tasks[0].Config = map[string]any{"a": v}
	wide := job.Copy()
	args := make([]any, 2000)
	for i := range args {
		args[i] = i
	}
	wide.TaskGroups[0].Tasks[0].Config = map[string]any{"args": args}
	huge := job.Copy()
	huge.Meta = map[string]string{"big": strings.Repeat("x", 64<<10)}

	cmds := []struct {
		t   MessageType
		cmd any
	}{
		{NodeRegisterRequestType, &NodeRegisterCommand{Node: node}},
		{JobRegisterRequestType, &JobRegisterCommand{Job: job, Eval: eval}},
		{JobRegisterRequestType, &JobRegisterCommand{Job: deep, Eval: eval}},
		{JobRegisterRequestType, &JobRegisterCommand{Job: wide, Eval: eval}},
		{JobRegisterRequestType, &JobRegisterCommand{Job: huge, Eval: eval}},
		{ApplyPlanResultsRequestType, &PlanResultCommand{Allocs: []*structs.Allocation{alloc}, Evals: []*structs.Evaluation{eval}}},
		{AllocClientUpdateRequestType, &AllocClientUpdateCommand{Allocs: []*structs.Allocation{alloc}}},
		{EvalUpdateRequestType, &EvalUpdateCommand{Evals: []*structs.Evaluation{eval}}},
		{NodeUpdateStatusRequestType, &NodeStatusCommand{NodeID: "n1", Status: structs.NodeStatusDown, LostAllocs: []*structs.Allocation{alloc}}},
		{SchedulerConfigRequestType, &SchedulerConfigCommand{CAS: true}},
		{JobDeregisterRequestType, &JobDeregisterCommand{Namespace: "default", JobID: "web", Purge: true, Eval: eval}},
		{NodeDeregisterRequestType, &NodeDeregisterCommand{NodeID: "n1"}},
	}
	var out [][]byte
	for _, c := range cmds {
		b, err := encodeCommand(h, c.t, c.cmd)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	// A deduplicated write: the registration wrapped with its request ID.
	once, err := encodeCommand(h, WriteOnceRequestType, &WriteOnceCommand{
		RequestID: "r1", Time: 1, ReplyType: "*structs.JobRegisterResponse", Reply: []byte{0x80}, Type: JobRegisterRequestType, Body: out[1][1:]})
	if err != nil {
		f.Fatal(err)
	}
	return append(out, once)
}

// FuzzFSMApply feeds arbitrary raft entries to the FSM, as a corrupt or
// forged raft log would: each is applied or refused with an error; none
// panics, and none allocates more than its size warrants.
func FuzzFSMApply(f *testing.F) {
	for _, c := range fuzzCommands(f) {
		f.Add(c)
	}
	// {}: no job, no eval
	f.Add([]byte{byte(JobRegisterRequestType), 0x80})
	// a job ID claiming 4 GiB
	f.Add([]byte{byte(JobRegisterRequestType), 0x81, 0xa3, 'J', 'o', 'b', 0x81, 0xa2, 'I', 'D', 0xdb, 0xff, 0xff, 0xff, 0xff})
	// an array claiming 4 billion elements
	f.Add([]byte{byte(EvalUpdateRequestType), 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		fsm, err := newFSM(slog.New(slog.DiscardHandler), &recorder{})
		if err != nil {
			t.Fatal(err)
		}
		if got := allocated(func() { fsm.Apply(&raft.Log{Index: 1, Type: raft.LogCommand, Data: data}) }); got > fuzzMemBound(len(data)) {
			t.Fatalf("applying %d bytes allocated %d MiB", len(data), got>>20)
		}
	})
}

// FuzzFSMRestore feeds arbitrary snapshots to the FSM, as a corrupt or
// forged snapshot file would: each is restored or refused with an error;
// none panics, and none allocates more than its size warrants.
func FuzzFSMRestore(f *testing.F) {
	fsm, err := newFSM(slog.New(slog.DiscardHandler), nil)
	if err != nil {
		f.Fatal(err)
	}
	for i, c := range fuzzCommands(f) {
		// Each seed is the state after one more command; the deep job
		// does not decode, and is refused.
		_ = fsm.Apply(&raft.Log{Index: uint64(i + 1), Type: raft.LogCommand, Data: c})
		snap, err := fsm.Snapshot()
		if err != nil {
			f.Fatal(err)
		}
		sink := &memSink{}
		if err := snap.Persist(sink); err != nil {
			f.Fatal(err)
		}
		f.Add(sink.Bytes())
	}
	// {"Jobs": [nil]}
	f.Add([]byte{0x81, 0xa4, 'J', 'o', 'b', 's', 0x91, 0xc0})
	// a job ID claiming 4 GiB
	f.Add([]byte{0x81, 0xa4, 'J', 'o', 'b', 's', 0x91, 0x81, 0xa2, 'I', 'D', 0xdb, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		fsm, err := newFSM(slog.New(slog.DiscardHandler), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := allocated(func() { _ = fsm.Restore(io.NopCloser(bytes.NewReader(data))) }); got > fuzzMemBound(len(data)) {
			t.Fatalf("restoring %d bytes allocated %d MiB", len(data), got>>20)
		}
	})
}
