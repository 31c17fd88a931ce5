package state

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// benchModes are the write modes the benchmarks compare: the group commit
// every Put uses; bbolt's Batch, which holds each write for up to
// MaxBatchDelay (2ms, as drover set it before the group commit) waiting
// for company; and a transaction per write.
var benchModes = []struct {
	name string
	mode writeMode
}{{"group", grouped}, {"bolt-batch-2ms", boltBatch}, {"solo", solo}}

func benchDB(b *testing.B) *BoltStateDB {
	b.Helper()
	db, err := NewBoltStateDB(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	db.db.MaxBatchDelay = 2 * time.Millisecond
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// BenchmarkBoltPutTaskState writes the task states of 200 allocations of 3
// tasks each, once per op, from 600 concurrent goroutines (as 600
// TaskRunners starting at once do), in each write mode. Every write is
// durable (fsync) when it returns.
//
//	go test -run '^$' -bench BoltPutTaskState -benchtime 5x ./client/state/
func BenchmarkBoltPutTaskState(b *testing.B) {
	const allocs, tasks = 200, 3
	type key struct{ alloc, task string }
	keys := make([]key, 0, allocs*tasks)
	for a := range allocs {
		for k := range tasks {
			keys = append(keys, key{fmt.Sprintf("alloc-%03d", a), fmt.Sprintf("task-%d", k)})
		}
	}
	state := func(round int) *structs.TaskState {
		ts := testTaskState()
		ts.Restarts = uint64(round) // a new value each round: no write is skipped
		return ts
	}
	for _, m := range benchModes {
		b.Run("concurrent-"+m.name, func(b *testing.B) {
			db := benchDB(b)
			b.ResetTimer()
			for round := range b.N {
				var wg sync.WaitGroup
				for _, k := range keys {
					wg.Go(func() {
						if err := db.putTaskValue(k.alloc, k.task, taskStateKey, state(round), m.mode); err != nil {
							b.Error(err)
						}
					})
				}
				wg.Wait()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/put")
		})
	}
}

// BenchmarkBoltPutTaskStateLoneWriter is the latency of one PutTaskState
// with no concurrent writer to share its transaction, in each write mode:
// bbolt's Batch waits its MaxBatchDelay for company before committing.
//
//	go test -run '^$' -bench BoltPutTaskStateLoneWriter -benchtime 200x ./client/state/
func BenchmarkBoltPutTaskStateLoneWriter(b *testing.B) {
	for _, m := range benchModes {
		b.Run(m.name, func(b *testing.B) {
			db := benchDB(b)
			ts := testTaskState()
			b.ResetTimer()
			for i := range b.N {
				ts.Restarts = uint64(i)
				if err := db.putTaskValue("alloc", "task", taskStateKey, ts, m.mode); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
