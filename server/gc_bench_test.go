package server

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/drover-io/drover/structs"
)

// BenchmarkGCBatchChurn runs rounds of batch jobs that come and go: each
// round registers jobs, lets the scheduler place them, reports every
// allocation complete and forces a garbage collection (system gc). It
// reports the live heap after each round's collection: flat across
// rounds means nothing of finished jobs is kept. -benchtime=Nx sets the
// rounds; DROVER_GC_BENCH_JOBS is not read, the round size is fixed at
// 1,000 jobs.
//
//	go test ./server -run '^$' -bench BenchmarkGCBatchChurn -benchtime 5x
func BenchmarkGCBatchChurn(b *testing.B) {
	const jobsPerRound = 1000
	ctx := context.Background()
	// Raft snapshots and compacts its log as a long-running server's
	// does (by default it checks every two minutes, longer than the
	// benchmark): the in-memory log store would otherwise hold every
	// entry.
	rc := raft.DefaultConfig()
	rc.HeartbeatTimeout, rc.ElectionTimeout = 200*time.Millisecond, 200*time.Millisecond
	rc.LeaderLeaseTimeout, rc.CommitTimeout = 100*time.Millisecond, 5*time.Millisecond
	rc.SnapshotInterval, rc.SnapshotThreshold, rc.TrailingLogs = 200*time.Millisecond, 1024, 1024
	s, err := NewServer(ctx, &Config{NodeName: "bench", HeartbeatTTL: time.Hour, RaftConfig: rc})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Shutdown() }()
	for i := range 4 {
		n := testNode(fmt.Sprintf("n%d", i), 1_000_000, 1_000_000)
		if _, err := s.NodeRegister(ctx, &structs.NodeRegisterRequest{Node: n}); err != nil {
			b.Fatal(err)
		}
	}
	heap := func() float64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	var first, last float64
	b.ResetTimer()
	for round := range b.N {
		evals := make([]string, 0, jobsPerRound)
		for j := range jobsPerRound {
			job := testJob(fmt.Sprintf("batch-%d-%d", round, j), 1, 10, 10)
			job.Type = structs.JobTypeBatch
			resp, err := s.JobRegister(ctx, &structs.JobRegisterRequest{Job: job})
			if err != nil {
				b.Fatal(err)
			}
			evals = append(evals, resp.EvalID)
		}
		for _, id := range evals {
			for {
				e, _ := s.State().EvalByID(nil, id)
				if e != nil && e.TerminalStatus() {
					break
				}
				time.Sleep(time.Millisecond) // the benchmark polls the scheduler's progress
			}
		}
		for i := range 4 {
			node := fmt.Sprintf("n%d", i)
			allocs, _ := s.State().AllocsByNode(nil, node)
			var done []*structs.Allocation
			for _, a := range allocs {
				if !a.ClientTerminalStatus() {
					done = append(done, &structs.Allocation{ID: a.ID, ClientStatus: structs.AllocClientStatusComplete,
						ModifyTime: time.Now().UnixNano(), TaskStates: map[string]*structs.TaskState{"app": {State: structs.TaskStateDead}}})
				}
			}
			if len(done) == 0 {
				continue
			}
			if _, err := s.NodeUpdateAlloc(ctx, &structs.AllocUpdateRequest{NodeID: node, SecretID: "secret-" + node, Alloc: done}); err != nil {
				b.Fatal(err)
			}
		}
		// The jobs turn dead as their allocations complete.
		for {
			jobs, _ := s.State().Jobs(nil)
			dead := 0
			for _, j := range jobs {
				if j.Status == structs.JobStatusDead {
					dead++
				}
			}
			if dead == len(jobs) {
				break
			}
			time.Sleep(time.Millisecond)
		}
		if _, err := s.SystemGC(ctx, &structs.SystemRequest{}); err != nil {
			b.Fatal(err)
		}
		jobs, _ := s.State().Jobs(nil)
		allocs, _ := s.State().Allocs(nil)
		evalsLeft, _ := s.State().Evals(nil)
		if len(jobs)+len(allocs)+len(evalsLeft) != 0 {
			b.Fatalf("round %d: %d jobs, %d allocs, %d evals left after GC", round, len(jobs), len(allocs), len(evalsLeft))
		}
		h := heap()
		if round == 0 {
			first = h
		}
		last = h
		b.Logf("round %d: %d jobs came and went; live heap after GC %.1f MiB", round+1, jobsPerRound, h)
	}
	b.ReportMetric(first, "heapMiB-round1")
	b.ReportMetric(last, "heapMiB-last")
}
