package allocrunner

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// The benchmarks of this file measure the runner's concurrency design;
// docs/performance.md ("Alloc and task lifecycle") has the commands and
// the results. They assert nothing about time.

// benchFleet is a set of running AllocRunners of one-task allocs on one
// mock driver, as a client holds them.
type benchFleet struct {
	driver *mock.Driver
	allocs []*structs.Allocation
	ars    []*AllocRunner
}

// newBenchFleet starts n allocs whose task runs config and waits until
// every one runs.
func newBenchFleet(b *testing.B, n int, config map[string]any) *benchFleet {
	b.Helper()
	f := &benchFleet{driver: mock.New(nil)}
	root, db := b.TempDir(), state.NewMemDB()
	getDriver := func(string) (drivers.DriverPlugin, error) { return f.driver, nil }
	for range n {
		alloc := testAlloc(structs.JobTypeService, mockTask("web", config))
		ar, err := New(&Config{Alloc: alloc, AllocDirRoot: root, StateDB: db, Drivers: getDriver})
		if err != nil {
			b.Fatal(err)
		}
		f.allocs = append(f.allocs, alloc)
		f.ars = append(f.ars, ar)
		go ar.Run()
	}
	for _, ar := range f.ars {
		l := ar.Listen()                 // every state the runner publishes, the latest first
		bound := time.After(time.Minute) // a bound for a hung benchmark only
	wait:
		for {
			select {
			case a, ok := <-l.Ch():
				if ok && a.ClientStatus == structs.AllocClientStatusRunning {
					break wait
				}
				if !ok {
					b.Fatalf("alloc %s closed its listeners before running", ar.ID())
				}
			case <-bound:
				b.Fatalf("alloc %s not running: %+v", ar.ID(), ar.AllocState())
			}
		}
		l.Close()
	}
	return f
}

// destroyAll destroys every runner in parallel and stops the driver.
func (f *benchFleet) destroyAll() {
	var wg sync.WaitGroup
	for _, ar := range f.ars {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ar.Destroy()
		}()
	}
	wg.Wait()
	f.driver.Shutdown()
}

// latencies collects durations and reports percentiles.
type latencies []time.Duration

func (l latencies) percentile(p float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkAllocUpdateBatch: 200 running allocs receive 1,000 updates in
// one batch (5 newer versions of each, interleaved, as a blocking query
// that returns after many changes delivers them). "async" is the real
// path: the caller (the client's watch loop, which diffs and dispatches)
// calls AllocRunner.Update for each, and each runner's own goroutine
// applies its latest version. "serialized" applies each update on the
// caller's goroutine, in order, to show what the design avoids.
// "inplace" versions change nothing that kills a task; "preempt" makes
// each alloc's last version an eviction, whose task takes 10ms to stop
// (kill_after), as when many allocs are preempted at once.
//
// Metrics: dispatch-ms is how long the caller is busy with the batch (the
// time the sync/watch loop could do nothing else); applied-ms is until
// every runner applied its latest version (for preempt: its task is
// dead); call-p50/p99/max-us is the latency of one dispatch call.
func BenchmarkAllocUpdateBatch(b *testing.B) {
	const nAllocs, perAlloc = 200, 5
	for _, kind := range []string{"inplace", "preempt"} {
		for _, mode := range []string{"async", "serialized"} {
			b.Run(kind+"/"+mode, func(b *testing.B) {
				var calls latencies
				var dispatch, applied time.Duration
				for range b.N {
					b.StopTimer()
					f := newBenchFleet(b, nAllocs, map[string]any{"kill_after": "10ms"})
					batch, owner := updateBatch(f.allocs, perAlloc, kind == "preempt")
					waitApplied := f.appliedWaiter(batch[len(batch)-nAllocs:], kind == "preempt")
					b.StartTimer()

					start := time.Now()
					for i, u := range batch {
						t0 := time.Now()
						if mode == "async" {
							f.ars[owner[i]].Update(u)
						} else {
							f.ars[owner[i]].handleUpdate(u)
						}
						calls = append(calls, time.Since(t0))
					}
					dispatch += time.Since(start)
					waitApplied()
					applied += time.Since(start)

					b.StopTimer()
					f.destroyAll()
					b.StartTimer()
				}
				n := float64(b.N)
				b.ReportMetric(millis(dispatch)/n, "dispatch-ms")
				b.ReportMetric(millis(applied)/n, "applied-ms")
				b.ReportMetric(micros(calls.percentile(0.50)), "call-p50-us")
				b.ReportMetric(micros(calls.percentile(0.99)), "call-p99-us")
				b.ReportMetric(micros(calls.percentile(1)), "call-max-us")
			})
		}
	}
}

// updateBatch returns perAlloc newer versions of every alloc, interleaved
// (version 1 of each, then version 2, ...), and the index of each
// update's alloc. With evict, each alloc's last version evicts it.
func updateBatch(allocs []*structs.Allocation, perAlloc int, evict bool) ([]*structs.Allocation, []int) {
	var batch []*structs.Allocation
	var owner []int
	for v := 1; v <= perAlloc; v++ {
		for i, a := range allocs {
			u := a.Copy()
			u.AllocModifyIndex = a.AllocModifyIndex + uint64(v)
			u.DesiredDescription = fmt.Sprintf("version %d", v)
			if evict && v == perAlloc {
				u.DesiredStatus = structs.AllocDesiredStatusEvict
				u.DesiredDescription = "preempted"
			}
			batch = append(batch, u)
			owner = append(owner, i)
		}
	}
	return batch, owner
}

// appliedWaiter returns a function that waits until every runner applied
// its version in final (same order as f.ars): for evictions, until its Run
// returned; otherwise until it published that version to its listeners.
// The listeners are registered now, before the batch.
func (f *benchFleet) appliedWaiter(final []*structs.Allocation, evict bool) func() {
	if evict {
		return func() {
			for _, ar := range f.ars {
				<-ar.WaitCh()
			}
		}
	}
	var wg sync.WaitGroup
	for i, ar := range f.ars {
		l := ar.Listen()
		want := final[i].AllocModifyIndex
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer l.Close()
			for a := range l.Ch() {
				if a.AllocModifyIndex >= want {
					return
				}
			}
		}()
	}
	return wg.Wait
}

// BenchmarkParallelStop500: 500 running allocs whose task takes a known
// time to exit after its stop signal (kill_after 50ms or 500ms,
// kill_timeout 1s) are destroyed (dev-mode agent shutdown, garbage
// collection) or shut down (agent shutdown: tasks left running) in
// parallel, one goroutine per runner as Client.Shutdown does. Metrics:
// total-ms for all 500; single-ms, one alloc of the same kind stopped
// alone just before (the slowest single alloc, as all are alike);
// slowest-ms, the longest runner within the parallel run; serial-ms,
// 500 x single-ms, what stopping them one by one would cost.
func BenchmarkParallelStop500(b *testing.B) {
	const n = 500
	for _, op := range []string{"destroy", "shutdown"} {
		for _, killAfter := range []string{"50ms", "500ms"} {
			b.Run(op+"/kill_after="+killAfter, func(b *testing.B) {
				var total, slowest, single time.Duration
				for range b.N {
					b.StopTimer()
					f := newBenchFleet(b, n+1, map[string]any{"kill_after": killAfter})
					t0 := time.Now()
					stopOne(f.ars[n], op)
					single += time.Since(t0)
					each := make([]time.Duration, n)
					b.StartTimer()

					start := time.Now()
					var wg sync.WaitGroup
					for i, ar := range f.ars[:n] {
						wg.Add(1)
						go func() {
							defer wg.Done()
							t0 := time.Now()
							stopOne(ar, op)
							each[i] = time.Since(t0)
						}()
					}
					wg.Wait()
					total += time.Since(start)

					b.StopTimer()
					slowest += slices.Max(each)
					f.destroyAll()
					b.StartTimer()
				}
				nf := float64(b.N)
				b.ReportMetric(millis(total)/nf, "total-ms")
				b.ReportMetric(millis(slowest)/nf, "slowest-ms")
				b.ReportMetric(millis(single)/nf, "single-ms")
				b.ReportMetric(n*millis(single)/nf, "serial-ms")
			})
		}
	}
}

func stopOne(ar *AllocRunner, op string) {
	if op == "destroy" {
		ar.Destroy()
	} else {
		ar.Shutdown()
	}
}
