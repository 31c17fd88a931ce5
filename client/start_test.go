package client

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// gatedDB is a StateDB whose PutAllocation waits until gate is closed, as
// an fsync on a busy disk does.
type gatedDB struct {
	*state.MemDB
	gate chan struct{}
}

func (d *gatedDB) PutAllocation(a *structs.Allocation) error {
	<-d.gate
	return d.MemDB.PutAllocation(a)
}

// TestApplyAllocsDoesNotWaitForTheStateFile: handing a batch of new
// allocations to their runners must not wait for their writes to the
// state file (it wrote each, one after another, under the client's alloc
// lock): the runners persist them concurrently.
func TestApplyAllocsDoesNotWaitForTheStateFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := &gatedDB{MemDB: state.NewMemDB(), gate: make(chan struct{})}
		driver := mock.New(nil)
		t.Cleanup(driver.Shutdown)
		c, err := New(&Config{
			RPC:      newFakeServer(),
			Drivers:  map[string]drivers.DriverPlugin{mock.Name: driver},
			StateDB:  db,
			AllocDir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		var diff allocDiff
		var allocs []*structs.Allocation
		for range 3 {
			a := testJobAlloc(c.NodeID(), map[string]any{"run_for": "1h"})
			allocs = append(allocs, a)
			diff.added = append(diff.added, a.ID)
		}
		applied := make(chan struct{})
		go func() {
			c.applyAllocs(diff, allocs)
			close(applied)
		}()
		select {
		case <-applied:
		case <-time.After(10 * time.Second):
			close(db.gate)
			t.Fatal("applyAllocs waited for the state file")
		}
		// The client knows the allocations while they are being written, so
		// that the API can show them.
		for _, a := range allocs {
			if _, err := c.AllocState(a.ID); err != nil {
				t.Errorf("alloc %s: %v", a.ID, err)
			}
		}
		close(db.gate)
		settle(t, "the allocs running", func() bool {
			for _, a := range allocs {
				if st, err := c.AllocState(a.ID); err != nil || st.ClientStatus != structs.AllocClientStatusRunning {
					return false
				}
			}
			return true
		})
		if stored, _, err := db.GetAllAllocations(); err != nil || len(stored) != len(allocs) {
			t.Errorf("stored %d allocations (%v), want %d", len(stored), err, len(allocs))
		}
		if err := c.Shutdown(); err != nil {
			t.Fatal(err)
		}
	})
}
