package client

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/rpcapi"
	"github.com/drover-io/drover/structs"
)

// unreachableServer is a fakeServer whose NodeRegister blocks until the
// caller gives up, as a combined agent's server does while it elects.
type unreachableServer struct {
	*fakeServer
	registering atomic.Int32
}

// Invoke implements rpcapi.Conn: the fake's methods with this NodeRegister.
func (s *unreachableServer) Invoke(ctx context.Context, m *rpcapi.Info, req any) (any, error) {
	h := s.handlers()
	rpcapi.Handle(h, rpcapi.NodeRegister, s.NodeRegister)
	return h.Invoke(ctx, m, req)
}

func (s *unreachableServer) NodeRegister(ctx context.Context, _ *structs.NodeRegisterRequest) (*structs.NodeUpdateResponse, error) {
	s.registering.Add(1)
	<-ctx.Done()
	return nil, structs.NewError(structs.KindUnavailable, "no leader: %v", ctx.Err())
}

// TestClientRestoresWithoutServer: a started client re-attaches the tasks
// of its restored allocations at once, without waiting for the servers
// (its node registration never returns here): the re-attached runner sees
// its task exit and applies the restart policy.
func TestClientRestoresWithoutServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		driver := mock.New(nil)
		defer driver.Shutdown()
		db := state.NewMemDB()
		srv := newFakeServer()
		tc := newTestClient(t, srv, driver, db, false)
		if err := tc.c.Start(); err != nil {
			t.Fatal(err)
		}
		alloc := testJobAlloc(tc.c.NodeID(), map[string]any{})
		srv.wait(t, "registration", func() bool { r, _ := srv.counts(); return r >= 1 })
		srv.putAlloc(alloc)
		srv.wait(t, "running", func() bool { return srv.alloc(alloc.ID).ClientStatus == structs.AllocClientStatusRunning })
		ls, ts, _ := db.GetTaskRunnerState(alloc.ID, "web")
		allocs, _, _ := db.GetAllAllocations()
		id, _ := db.GetNodeIdentity()
		if err := tc.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
		db2 := state.NewMemDB()
		_ = db2.PutNodeIdentity(id)
		for _, a := range allocs {
			_ = db2.PutAllocation(a)
		}
		_ = db2.PutTaskRunnerLocalState(alloc.ID, "web", ls)
		_ = db2.PutTaskState(alloc.ID, "web", ts)

		down := &unreachableServer{fakeServer: newFakeServer()}
		tc2 := newTestClient(t, down.fakeServer, driver, db2, false)
		tc2.c.rpc = down
		if err := tc2.c.Start(); err != nil {
			t.Fatal(err)
		}
		settle(t, "a registration attempt", func() bool { return down.registering.Load() > 0 })
		// The task exits: only a runner re-attached to it can see that.
		if err := driver.StopTask(context.Background(), ls.TaskHandle.Config.ID, 0, ""); err != nil {
			t.Fatal(err)
		}
		settle(t, "the restored runner to see the exit", func() bool {
			st, err := tc2.c.AllocState(alloc.ID)
			return err == nil && st.ClientStatus == structs.AllocClientStatusFailed
		})
		st, _ := tc2.c.AllocState(alloc.ID)
		started := 0
		for _, e := range st.TaskStates["web"].Events {
			if e.Type == structs.TaskStarted {
				started++
			}
		}
		if started != 1 {
			t.Errorf("task started %d times; want it re-attached, not started again", started)
		}
		if r, _ := down.counts(); r != 0 {
			t.Errorf("%d registrations reached the server", r)
		}
		if err := tc2.c.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}
