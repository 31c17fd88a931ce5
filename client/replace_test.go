package client

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/client/allocrunner"
	"github.com/drover-io/drover/client/allocwatcher"
	"github.com/drover-io/drover/structs"
)

func stickyAlloc(nodeID string) *structs.Allocation {
	a := testJobAlloc(nodeID, map[string]any{"kill_after": "20ms"})
	a.Job.TaskGroups[0].EphemeralDisk = &structs.EphemeralDisk{Sticky: true, Migrate: true, SizeMB: 10}
	return a
}

func TestClientReplacementWaitsForPreviousAndMovesData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, true)
		c, srv := tc.c, tc.srv
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Shutdown() })

		old := stickyAlloc(c.NodeID())
		srv.putAlloc(old)
		srv.wait(t, "old alloc running", func() bool {
			st, err := c.AllocState(old.ID)
			return err == nil && st.ClientStatus == structs.AllocClientStatusRunning
		})
		oldDir, err := c.AllocDir(old.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(oldDir, "alloc", "data", "kept.txt"), []byte("sticky"), 0o644); err != nil {
			t.Fatal(err)
		}

		repl := stickyAlloc(c.NodeID())
		repl.Name = old.Name
		repl.PreviousAllocation = old.ID
		srv.putAlloc(repl)
		srv.wait(t, "replacement pending, waiting", func() bool {
			st, err := c.AllocState(repl.ID)
			return err == nil && st.ClientDescription == allocrunner.DescWaitingPrevious
		})
		srv.wait(t, "servers told it waits", func() bool {
			return srv.alloc(repl.ID).ClientDescription == allocrunner.DescWaitingPrevious
		})
		srv.stopAlloc(old.ID)
		srv.wait(t, "replacement running", func() bool {
			st, err := c.AllocState(repl.ID)
			return err == nil && st.ClientStatus == structs.AllocClientStatusRunning
		})
		oldState, _ := c.AllocState(old.ID)
		newState, _ := c.AllocState(repl.ID)
		if oldState.ClientStatus != structs.AllocClientStatusComplete {
			t.Errorf("old alloc is %s", oldState.ClientStatus)
		}
		if started, ended := newState.TaskStates["web"].StartedAt, oldState.TaskStates["web"].FinishedAt; started.Before(ended) {
			t.Errorf("replacement started at %v, before the old task finished at %v", started, ended)
		}
		newDir, err := c.AllocDir(repl.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(newDir, "alloc", "data", "kept.txt")); err != nil || string(got) != "sticky" {
			t.Errorf("kept.txt = %q, %v", got, err)
		}
	})
}

func TestClientSnapshotAlloc(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, true)
		c, srv := tc.c, tc.srv
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Shutdown() })
		a := stickyAlloc(c.NodeID())
		srv.putAlloc(a)
		srv.wait(t, "alloc running", func() bool {
			st, err := c.AllocState(a.ID)
			return err == nil && st.ClientStatus == structs.AllocClientStatusRunning
		})
		dir, _ := c.AllocDir(a.ID)
		if err := os.WriteFile(filepath.Join(dir, "web", "local", "conf"), []byte("c"), 0o644); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := c.SnapshotAlloc(a.ID, &buf); err != nil {
			t.Fatal(err)
		}
		dest := t.TempDir()
		if err := allocwatcher.Unpack(&buf, dest, allocwatcher.UnpackLimits{MaxBytes: 1 << 20, Tasks: []string{"web"}}); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(dest, "web", "local", "conf")); err != nil || string(got) != "c" {
			t.Errorf("conf = %q, %v", got, err)
		}
		if err := c.SnapshotAlloc("nope", &buf); structs.KindOf(err) != structs.KindNotFound {
			t.Errorf("unknown alloc: %v", err)
		}
	})
}

func TestClientSendsDeploymentHealth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestClient(t, nil, nil, nil, true)
		c, srv := tc.c, tc.srv
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Shutdown() })
		a := testJobAlloc(c.NodeID(), nil)
		a.DeploymentID = "d1"
		a.Job.TaskGroups[0].Update = &structs.UpdateStrategy{MaxParallel: 1, MinHealthyTime: 20 * time.Millisecond, HealthyDeadline: time.Minute}
		srv.putAlloc(a)
		srv.wait(t, "healthy sent in a batch", func() bool {
			srv.mu.Lock()
			defer srv.mu.Unlock()
			for _, b := range srv.batches {
				for _, u := range b {
					if u.ID == a.ID && u.DeploymentStatus.IsHealthy() && !u.DeploymentStatus.Timestamp.IsZero() {
						return true
					}
				}
			}
			return false
		})
	})
}
