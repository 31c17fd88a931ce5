package client

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// runningAlloc puts an alloc with config on the fake server and waits
// until the client reports it running.
func runningAlloc(t *testing.T, tc *testClient, config map[string]any, edit func(*structs.Task)) *structs.Allocation {
	t.Helper()
	alloc := testJobAlloc(tc.c.NodeID(), config)
	if edit != nil {
		edit(alloc.Job.TaskGroups[0].Tasks[0])
	}
	tc.srv.putAlloc(alloc)
	tc.srv.wait(t, "alloc running", func() bool {
		return tc.srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning
	})
	return alloc
}

// shutdownWithin fails the test when Shutdown does not return in time.
func shutdownWithin(t *testing.T, c *Client, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- c.Shutdown() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(d):
		t.Fatalf("client shutdown did not complete in %v", d)
	}
}

// A driver whose wait channel never closes cannot hang the client's
// shutdown, whether it leaves tasks running or (dev mode) kills them.
func TestClientShutdownWithMisbehavingDriver(t *testing.T) {
	for _, dev := range []bool{false, true} {
		t.Run(map[bool]string{false: "leave tasks running", true: "dev mode: destroy"}[dev], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := newTestClient(t, nil, nil, nil, dev)
				if err := tc.c.Start(); err != nil {
					t.Fatal(err)
				}
				tc.srv.wait(t, "registration", func() bool { r, _ := tc.srv.counts(); return r >= 1 })
				bad := runningAlloc(t, tc, map[string]any{"wait_never_returns": true}, func(task *structs.Task) {
					task.KillTimeout = 20 * time.Millisecond
				})
				good := runningAlloc(t, tc, map[string]any{}, nil)
				// The kill grace (5s) bounds the wait for the bad driver.
				shutdownWithin(t, tc.c, 10*time.Second)
				if dev {
					for _, id := range []string{bad.ID, good.ID} {
						if got := tc.srv.alloc(id).ClientStatus; got != structs.AllocClientStatusComplete {
							t.Errorf("alloc %s status after dev shutdown = %s", id, got)
						}
					}
				}
			})
		})
	}
}

// An alloc busy stopping a slow task does not hold up the client: later
// updates to it are coalesced, not waited for, and other allocs still
// start.
func TestClientNotBlockedBySlowAlloc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, false)
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		tc.srv.wait(t, "registration", func() bool { r, _ := tc.srv.counts(); return r >= 1 })
		slow := runningAlloc(t, tc, map[string]any{"kill_after": "1h"}, func(task *structs.Task) { task.KillTimeout = time.Hour })
		tc.srv.stopAlloc(slow.ID) // its update loop now waits for the task to stop
		settle(t, "slow alloc killing", func() bool {
			st, err := tc.c.AllocState(slow.ID)
			if err != nil {
				return false
			}
			evs := st.TaskStates["web"].Events
			return evs[len(evs)-1].Type == structs.TaskKilling
		})
		for range 3 {
			tc.srv.stopAlloc(slow.ID) // more versions while it is busy
		}
		other := runningAlloc(t, tc, map[string]any{}, nil)
		if st, err := tc.c.AllocState(other.ID); err != nil || st.ClientStatus != structs.AllocClientStatusRunning {
			t.Errorf("other alloc = %+v, %v", st, err)
		}
		// Shutdown leaves tasks running, so it does not wait out the kill.
		shutdownWithin(t, tc.c, 10*time.Second)
	})
}
