package state

import (
	"fmt"
	"sync"
	"testing"

	"github.com/drover-io/drover/structs"
)

// BenchmarkBoltPutTaskState writes the task states of 200 allocations of 3
// tasks each, once per op: from 600 concurrent goroutines through
// db.Batch (what PutTaskState does), and one after another, each in its
// own db.Update transaction. Both are durable (fsync) when they return.
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

	b.Run("concurrent-batch", func(b *testing.B) {
		db, err := NewBoltStateDB(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		b.ResetTimer()
		for round := range b.N {
			var wg sync.WaitGroup
			for _, k := range keys {
				wg.Go(func() {
					if err := db.putTaskValue(k.alloc, k.task, taskStateKey, state(round), true); err != nil {
						b.Error(err)
					}
				})
			}
			wg.Wait()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/put")
	})
	b.Run("sequential-update", func(b *testing.B) {
		db, err := NewBoltStateDB(b.TempDir(), nil)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		b.ResetTimer()
		for round := range b.N {
			for _, k := range keys {
				if err := db.putTaskValue(k.alloc, k.task, taskStateKey, state(round), false); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(keys)), "ns/put")
	})
}

// BenchmarkBoltPutTaskStateLoneWriter is the latency of one PutTaskState
// with no concurrent writer to share its transaction: Batch waits up to
// its MaxBatchDelay for company before committing.
func BenchmarkBoltPutTaskStateLoneWriter(b *testing.B) {
	for _, batch := range []bool{true, false} {
		b.Run(fmt.Sprintf("batch=%v", batch), func(b *testing.B) {
			db, err := NewBoltStateDB(b.TempDir(), nil)
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ts := testTaskState()
			b.ResetTimer()
			for i := range b.N {
				ts.Restarts = uint64(i)
				if err := db.putTaskValue("alloc", "task", taskStateKey, ts, batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
