package allocrunner

import (
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// fakeClock is a Clock that moves only when told.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	ch chan time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	c.timers = append(c.timers, fakeTimer{at: c.now.Add(d), ch: ch})
	return ch
}

func (c *fakeClock) pendingTimers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// advance moves the clock and fires the timers due.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.timers[:0]
	for _, t := range c.timers {
		if !t.at.After(c.now) {
			t.ch <- c.now
			continue
		}
		kept = append(kept, t)
	}
	c.timers = kept
}

func deploymentAlloc(config map[string]any) *structs.Allocation {
	a := testAlloc(structs.JobTypeService, mockTask("web", config))
	a.DeploymentID = "d1"
	a.Job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, MinHealthyTime: 10 * time.Second, HealthyDeadline: time.Minute}
	return a
}

func newClockRunner(t *testing.T, alloc *structs.Allocation, clock Clock, rec StateUpdater) *AllocRunner {
	t.Helper()
	driver := mock.New(nil)
	t.Cleanup(driver.Shutdown)
	ar, err := New(&Config{
		Alloc: alloc, AllocDirRoot: t.TempDir(), StateDB: state.NewMemDB(),
		Drivers:      func(string) (drivers.DriverPlugin, error) { return driver, nil },
		StateUpdater: rec, Node: &structs.Node{ID: "node1"}, KillGrace: 200 * time.Millisecond, Clock: clock,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ar.Destroy)
	return ar
}

func TestHealthHookReportsHealthy(t *testing.T) {
	clock := &fakeClock{now: time.Now().Add(time.Second)}
	rec := &recorder{}
	ar := newClockRunner(t, deploymentAlloc(nil), clock, rec)
	go ar.Run()
	waitFor(t, "running, waiting for min_healthy_time", func() bool {
		return ar.AllocState().ClientStatus == structs.AllocClientStatusRunning && clock.pendingTimers() > 0
	})
	clock.advance(5 * time.Second)
	if ar.AllocState().DeploymentStatus != nil {
		t.Fatal("healthy before min_healthy_time")
	}
	clock.advance(6 * time.Second)
	waitFor(t, "healthy", func() bool { return ar.AllocState().DeploymentStatus.IsHealthy() })
	if ts := ar.AllocState().DeploymentStatus.Timestamp; !ts.Equal(clock.Now()) {
		t.Errorf("timestamp = %v, want the clock's %v", ts, clock.Now())
	}
	waitFor(t, "health sent to the client", func() bool { u := rec.last(); return u != nil && u.DeploymentStatus.IsHealthy() })
}

func TestHealthHookReportsUnhealthy(t *testing.T) {
	cases := []struct {
		name    string
		config  map[string]any
		advance time.Duration
	}{
		{"task fails", map[string]any{"run_for": "5ms", "exit_code": 1}, 0},
		{"deadline passes", map[string]any{"start_block_for": "1h"}, time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Now()}
			ar := newClockRunner(t, deploymentAlloc(tc.config), clock, &recorder{})
			go ar.Run()
			if tc.advance > 0 {
				waitFor(t, "deadline timer", func() bool { return clock.pendingTimers() > 0 })
				clock.advance(tc.advance)
			}
			waitFor(t, "unhealthy", func() bool { return ar.AllocState().DeploymentStatus.IsUnhealthy() })
		})
	}
}

func TestHealthHookNotInDeployment(t *testing.T) {
	clock := &fakeClock{now: time.Now()}
	a := deploymentAlloc(nil)
	a.DeploymentID = ""
	ar := newClockRunner(t, a, clock, &recorder{})
	go ar.Run()
	waitFor(t, "running", func() bool { return ar.AllocState().ClientStatus == structs.AllocClientStatusRunning })
	clock.advance(time.Hour)
	if clock.pendingTimers() != 0 || ar.AllocState().DeploymentStatus != nil {
		t.Error("an alloc outside a deployment is tracked")
	}
}
