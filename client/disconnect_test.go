package client

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/structs"
)

// TestStopOnClientAfter: a client that reaches no server stops the
// allocations whose group says stop_on_client_after, once that long has
// passed since the servers last answered, and leaves the others running.
func TestStopOnClientAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, false)
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		tc.srv.wait(t, "registration", func() bool { r, _ := tc.srv.counts(); return r >= 1 })
		stopping := runningAlloc(t, tc, map[string]any{}, nil)
		tc.srv.mu.Lock()
		a := tc.srv.allocs[stopping.ID].Copy()
		a.Job = a.Job.Copy()
		a.Job.TaskGroups[0].Disconnect = &structs.DisconnectStrategy{StopOnClientAfter: 5 * time.Second}
		tc.srv.mu.Unlock()
		tc.srv.removeAlloc(stopping.ID)
		settle(t, "first alloc gone", func() bool { _, err := tc.c.AllocState(stopping.ID); return err != nil })
		a.ID = structs.GenerateUUID()
		a.ClientStatus = structs.AllocClientStatusPending
		tc.srv.putAlloc(a)
		tc.srv.wait(t, "alloc with stop_on_client_after running", func() bool {
			return tc.srv.alloc(a.ID).ClientStatus == structs.AllocClientStatusRunning
		})
		keeps := runningAlloc(t, tc, map[string]any{}, nil)

		tc.srv.mu.Lock()
		tc.srv.unreachable = true
		tc.srv.mu.Unlock()
		time.Sleep(3 * time.Second) // synctest: fake time, heartbeats keep failing
		if st, _ := tc.c.AllocState(a.ID); st.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("stopped before stop_on_client_after: %s", st.ClientStatus)
		}
		time.Sleep(5 * time.Second)
		settle(t, "alloc stopped by its client", func() bool {
			st, err := tc.c.AllocState(a.ID)
			return err == nil && st.ClientStatus == structs.AllocClientStatusComplete
		})
		if st, _ := tc.c.AllocState(keeps.ID); st.ClientStatus != structs.AllocClientStatusRunning {
			t.Fatalf("alloc without the block: %s", st.ClientStatus)
		}
		shutdownWithin(t, tc.c, 10*time.Second)
	})
}
