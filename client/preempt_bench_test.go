package client

import (
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// BenchmarkPreemption: a node runs 500 low-priority allocs (mock driver,
// each task takes 10ms to stop); one watch response then evicts all 500
// and places one large alloc whose PreemptedAllocations are those 500.
// Metrics: dispatch-ms, how long the client's diff-and-dispatch takes to
// return (its watch loop is busy that long); running-ms, from the batch
// being handed to the client until the new alloc's task runs (it starts
// only once every preempted alloc has terminated). "per-alloc" is the
// client's path (each runner's own update goroutine); "serialized" applies
// each update synchronously, one after the other (ApplyUpdate).
func BenchmarkPreemption(b *testing.B) {
	const nAllocs = 500
	for _, mode := range []string{"per-alloc", "serialized"} {
		b.Run(mode, func(b *testing.B) {
			var dispatch, running time.Duration
			for range b.N {
				b.StopTimer()
				c, driver, allocs := benchClient(b, nAllocs)
				c.serialUpdates = mode == "serialized"
				server := make(map[string]uint64, nAllocs+1)
				fetched := make([]*structs.Allocation, 0, nAllocs+1)
				big := testJobAlloc(c.NodeID(), map[string]any{})
				big.Job.ID, big.JobID, big.Job.Priority = "big", "big", 90
				for _, a := range allocs {
					u := a.Copy()
					u.AllocModifyIndex = a.AllocModifyIndex + 1000
					u.DesiredStatus = structs.AllocDesiredStatusEvict
					u.DesiredDescription = "Preempted by alloc ID " + big.ID
					u.PreemptedByAllocation = big.ID
					fetched = append(fetched, u)
					server[a.ID] = u.AllocModifyIndex
					big.PreemptedAllocations = append(big.PreemptedAllocations, a.ID)
				}
				big.AllocModifyIndex = 5000
				fetched = append(fetched, big)
				server[big.ID] = big.AllocModifyIndex
				b.StartTimer()

				start := time.Now()
				c.allocMu.RLock()
				diff := diffAllocs(c.known, server)
				c.allocMu.RUnlock()
				c.applyAllocs(diff, fetched)
				dispatch += time.Since(start)
				ar, err := c.allocRunner(big.ID)
				if err != nil {
					b.Fatal(err)
				}
				l := ar.Listen()
				for a := range l.Ch() {
					if a.ClientStatus == structs.AllocClientStatusRunning {
						break
					}
				}
				running += time.Since(start)
				l.Close()

				b.StopTimer()
				for _, a := range allocs {
					st, err := c.AllocState(a.ID)
					if err != nil || !(&structs.Allocation{ClientStatus: st.ClientStatus}).ClientTerminalStatus() {
						b.Fatalf("preempted alloc %s not terminal when the new one runs", a.ID)
					}
				}
				if err := c.Shutdown(); err != nil {
					b.Fatal(err)
				}
				driver.Shutdown()
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(ms(dispatch)/n, "dispatch-ms")
			b.ReportMetric(ms(running)/n, "running-ms")
		})
	}
}
