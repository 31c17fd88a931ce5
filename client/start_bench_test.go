package client

import (
	"fmt"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// BenchmarkClientStart hands n new one-task allocs (mock driver, tasks
// start at once) to the client in one watch response, as a scheduler's
// plan for a node delivers them, and times the client's own path:
// dispatch-ms, until applyAllocs returns (the watch loop is busy that
// long); first-ms and all-ms, until the first and the last alloc's runner
// reports running. state=memdb is the -dev agent's state; state=bolt is a
// real agent's state file, whose every write is durable (fsync).
//
//	go test -run '^$' -bench ClientStart -benchtime 3x ./client/
func BenchmarkClientStart(b *testing.B) {
	for _, db := range []string{"memdb", "bolt"} {
		for _, n := range []int{1, 10, 100, 1000} {
			if db == "bolt" && n > 100 {
				continue // 1,000 synced writes on a shared disk: minutes
			}
			b.Run(fmt.Sprintf("state=%s/allocs=%d", db, n), func(b *testing.B) {
				var dispatch, first, all time.Duration
				for range b.N {
					b.StopTimer()
					var sdb state.StateDB = state.NewMemDB()
					if db == "bolt" {
						bdb, err := state.NewBoltStateDB(b.TempDir(), nil)
						if err != nil {
							b.Fatal(err)
						}
						sdb = bdb
					}
					driver := mock.New(nil)
					c, err := New(&Config{
						RPC:      newFakeServer(),
						Drivers:  map[string]drivers.DriverPlugin{mock.Name: driver},
						StateDB:  sdb,
						AllocDir: b.TempDir(),
						DevMode:  true,
					})
					if err != nil {
						b.Fatal(err)
					}
					var allocs []*structs.Allocation
					var diff allocDiff
					for i := range n {
						a := testJobAlloc(c.NodeID(), map[string]any{"run_for": "1h"})
						a.AllocModifyIndex = uint64(10 + i)
						allocs = append(allocs, a)
						diff.added = append(diff.added, a.ID)
					}
					running := c.runningWaiter(n)
					b.StartTimer()

					start := time.Now()
					c.applyAllocs(diff, allocs)
					dispatch += time.Since(start)
					f, l := running()
					first += f.Sub(start)
					all += l.Sub(start)

					b.StopTimer()
					if err := c.Shutdown(); err != nil {
						b.Fatal(err)
					}
					driver.Shutdown()
					b.StartTimer()
				}
				n := float64(b.N)
				b.ReportMetric(ms(dispatch)/n, "dispatch-ms")
				b.ReportMetric(ms(first)/n, "first-ms")
				b.ReportMetric(ms(all)/n, "all-ms")
			})
		}
	}
}

// runningWaiter returns a function that waits until n allocs were
// reported running (queued for the servers) and returns when the first
// and the last was. It replaces the client's pending updates as it reads
// them; the client must not be started.
func (c *Client) runningWaiter(n int) func() (first, last time.Time) {
	return func() (first, last time.Time) {
		seen := map[string]bool{}
		deadline := time.Now().Add(5 * time.Minute)
		for len(seen) < n {
			c.updatesMu.Lock()
			now := time.Now()
			for id, u := range c.pending {
				if u.ClientStatus == structs.AllocClientStatusRunning && !seen[id] {
					seen[id] = true
					if first.IsZero() {
						first = now
					}
					last = now
				}
			}
			c.updatesMu.Unlock()
			if time.Now().After(deadline) {
				panic(fmt.Sprintf("%d of %d allocs running after 5 minutes", len(seen), n))
			}
			time.Sleep(100 * time.Microsecond)
		}
		return first, last
	}
}
