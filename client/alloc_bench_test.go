package client

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// BenchmarkClientUpdateBatch: 200 running allocs receive 1,000 updates (5
// newer versions each, interleaved) in one watch response, through the
// client's own path: diffAllocs, then applyAllocs, which hands each version
// to its AllocRunner. "inplace" versions change nothing that stops a task;
// in "preempt" each alloc's last version evicts it and its task takes 10ms
// to stop (kill_after). Metrics: dispatch-ms, how long diff-and-dispatch
// takes to return (the watch loop is busy for that long); applied-ms,
// until every runner applied its latest version (preempt: its task is
// dead); flush-idle-* and flush-batch-*, the latency (p50, p99, max, in
// microseconds) of the sync loop's flushUpdates sending up to 200 queued
// updates: idle (200 queued updates, nothing else running) and while the
// runners apply the batch and report, called every millisecond. The docs
// compare this with allocrunner's BenchmarkAllocUpdateBatch (serialized).
func BenchmarkClientUpdateBatch(b *testing.B) {
	const nAllocs, perAlloc = 200, 5
	for _, kind := range []string{"inplace", "preempt"} {
		b.Run(kind, func(b *testing.B) {
			var dispatch, applied time.Duration
			var idle, busy []time.Duration
			for range b.N {
				b.StopTimer()
				c, driver, allocs := benchClient(b, nAllocs)
				server := make(map[string]uint64, nAllocs)
				var fetched []*structs.Allocation
				for v := 1; v <= perAlloc; v++ {
					for _, a := range allocs {
						u := a.Copy()
						u.AllocModifyIndex = a.AllocModifyIndex + uint64(v)
						u.DesiredDescription = fmt.Sprintf("version %d", v)
						if kind == "preempt" && v == perAlloc {
							u.DesiredStatus = structs.AllocDesiredStatusEvict
						}
						fetched = append(fetched, u)
						server[a.ID] = u.AllocModifyIndex
					}
				}
				wait := c.appliedWaiter(server, kind == "preempt")
				for range 20 {
					c.queueAllStates()
					t0 := time.Now()
					c.flushUpdates(context.Background())
					idle = append(idle, time.Since(t0))
				}
				b.StartTimer()

				start := time.Now()
				done, probeDone := make(chan struct{}), make(chan struct{})
				var probe []time.Duration
				go func() { probe = probeFlush(c, done); close(probeDone) }()
				c.allocMu.RLock()
				diff := diffAllocs(c.known, server)
				c.allocMu.RUnlock()
				c.applyAllocs(diff, fetched)
				dispatch += time.Since(start)
				wait()
				applied += time.Since(start)
				close(done)
				<-probeDone
				busy = append(busy, probe...)

				b.StopTimer()
				if err := c.Shutdown(); err != nil {
					b.Fatal(err)
				}
				driver.Shutdown()
				b.StartTimer()
			}
			n := float64(b.N)
			b.ReportMetric(ms(dispatch)/n, "dispatch-ms")
			b.ReportMetric(ms(applied)/n, "applied-ms")
			b.ReportMetric(us(pct(idle, 0.5)), "flush-idle-p50-us")
			b.ReportMetric(us(pct(idle, 0.99)), "flush-idle-p99-us")
			b.ReportMetric(us(pct(busy, 0.5)), "flush-batch-p50-us")
			b.ReportMetric(us(pct(busy, 0.99)), "flush-batch-p99-us")
			b.ReportMetric(us(pct(busy, 1)), "flush-batch-max-us")
			b.ReportMetric(float64(len(busy))/n, "flushes")
		})
	}
}

// queueAllStates queues every runner's current state, as their own
// reports would.
func (c *Client) queueAllStates() {
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	for id, ar := range c.allocs {
		st := ar.AllocState()
		c.queueUpdate(&structs.Allocation{ID: id, ClientStatus: st.ClientStatus,
			ClientDescription: st.ClientDescription, TaskStates: st.TaskStates})
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p*float64(len(s)-1))]
}

// probeFlush calls flushUpdates every millisecond until done is closed,
// and returns how long each call took.
func probeFlush(c *Client, done <-chan struct{}) []time.Duration {
	var out []time.Duration
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return out
		case <-tick.C:
			t0 := time.Now()
			c.flushUpdates(context.Background())
			out = append(out, time.Since(t0))
		}
	}
}

// benchClient returns a dev-mode Client (not started: the benchmark drives
// its watch path) running n one-task allocs on a mock driver.
func benchClient(b *testing.B, n int) (*Client, *mock.Driver, []*structs.Allocation) {
	b.Helper()
	driver := mock.New(nil)
	c, err := New(&Config{
		RPC:      newFakeServer(),
		Drivers:  map[string]drivers.DriverPlugin{mock.Name: driver},
		StateDB:  state.NewMemDB(),
		AllocDir: b.TempDir(),
		DevMode:  true,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Shutdown() }) // idempotent; stops the driver manager
	var allocs []*structs.Allocation
	var diff allocDiff
	for i := range n {
		a := testJobAlloc(c.NodeID(), map[string]any{"kill_after": "10ms"})
		a.AllocModifyIndex = uint64(10 + i)
		allocs = append(allocs, a)
		diff.added = append(diff.added, a.ID)
	}
	c.applyAllocs(diff, allocs)
	for _, a := range allocs {
		c.allocMu.RLock()
		ar := c.allocs[a.ID]
		c.allocMu.RUnlock()
		awaitRunning(b, ar)
	}
	return c, driver, allocs
}

// awaitRunning waits until ar publishes its alloc running (its listener
// gets every state it publishes, the latest first).
func awaitRunning(b *testing.B, ar *allocrunner.AllocRunner) {
	b.Helper()
	l := ar.Listen()
	defer l.Close()
	bound := time.After(time.Minute) // a bound for a hung benchmark only
	for {
		select {
		case a, ok := <-l.Ch():
			if !ok {
				b.Fatalf("alloc %s closed its listeners before running", ar.ID())
			}
			if a.ClientStatus == structs.AllocClientStatusRunning {
				return
			}
		case <-bound:
			b.Fatalf("alloc %s not running after a minute", ar.ID())
		}
	}
}

// appliedWaiter registers a listener on every runner now and returns a
// function that waits until each published the version in want (with
// evict: until its Run returned).
func (c *Client) appliedWaiter(want map[string]uint64, evict bool) func() {
	var wg sync.WaitGroup
	c.allocMu.RLock()
	defer c.allocMu.RUnlock()
	for id, idx := range want {
		ar := c.allocs[id]
		if evict {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-ar.WaitCh()
			}()
			continue
		}
		l := ar.Listen()
		wg.Add(1)
		go func(l *allocrunner.AllocListener) {
			defer wg.Done()
			defer l.Close()
			for a := range l.Ch() {
				if a.AllocModifyIndex >= idx {
					return
				}
			}
		}(l)
	}
	return wg.Wait
}
