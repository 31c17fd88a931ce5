package allocrunner

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/drover-io/drover/structs"
)

// snapshot encodes every exported field of alloc, deeply.
func snapshot(t *testing.T, alloc *structs.Allocation) string {
	t.Helper()
	b, err := json.Marshal(alloc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// No code mutates a received allocation: each version handed to New and
// Update is deeply unchanged after a full lifecycle (run, update, operator
// restart and signal, stop, destroy), while concurrent readers call
// Alloc, AllocState and listen (run with -race).
func TestAllocRunnerNeverMutatesReceivedAllocs(t *testing.T) {
	side := withLifecycle(mockTask("sidecar", map[string]any{}), structs.TaskLifecycleHookPrestart, true)
	web := mockTask("web", map[string]any{})
	web.Env = map[string]string{"A": "1"}
	web.Meta = map[string]string{"m": "v"}
	alloc := testAlloc(structs.JobTypeService, side, web)
	alloc.AllocatedResources = &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
		"web": {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 64}},
	}}
	update := alloc.Copy()
	update.AllocModifyIndex++
	update.Job = alloc.Job // shared, as the client's copies share it
	stop := stopUpdate(update)
	received := []*structs.Allocation{alloc, update, stop}
	before := make([]string, len(received))
	for i, a := range received {
		before[i] = snapshot(t, a)
	}

	h := newHarness(t, alloc)
	ctx, cancel := context.WithCancel(context.Background())
	var readers sync.WaitGroup
	for range 4 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			l := h.ar.Listen()
			defer l.Close()
			for ctx.Err() == nil {
				st := h.ar.AllocState()
				for _, ts := range st.TaskStates {
					_ = len(ts.Events)
				}
				_ = h.ar.Alloc().AllocModifyIndex
				select {
				case a, ok := <-l.Ch():
					if ok {
						_ = a.ClientStatus
					}
				default:
				}
			}
		}()
	}

	go h.ar.Run()
	allRunning(t, h.ar, "web", "sidecar")
	h.ar.Update(update)
	waitPublished(t, h.ar, "the update applied", func(a *structs.Allocation) bool { return a.AllocModifyIndex == update.AllocModifyIndex })
	if h.ar.Alloc() != update {
		t.Fatalf("Alloc() is not the update it applied")
	}
	if err := h.ar.RestartTask(context.Background(), "web", nil); err != nil {
		t.Fatal(err)
	}
	waitChange(t, h.ar, "restarted", func() bool {
		ts := h.ar.AllocState().TaskStates["web"]
		return ts.Restarts == 1 && ts.State == structs.TaskStateRunning
	})
	if err := h.ar.SignalTask(context.Background(), "", "SIGHUP"); err != nil {
		t.Fatal(err)
	}
	h.ar.Update(stop)
	waitClosed(t, "run", h.ar.WaitCh())
	h.ar.Destroy()
	cancel()
	readers.Wait()

	for i, a := range received {
		if got := snapshot(t, a); got != before[i] {
			t.Errorf("received alloc %d was mutated:\nbefore %s\nafter  %s", i, before[i], got)
		}
	}
	if h.ar.Alloc() != stop {
		t.Errorf("Alloc() is not the latest received version")
	}
}

// AllocState, Alloc and TaskState are read from many goroutines while the
// tasks change state; -race checks the locking.
func TestAllocRunnerConcurrentReaders(t *testing.T) {
	alloc := testAlloc(structs.JobTypeService,
		mockTask("a", map[string]any{"run_for": "1ms", "exit_code": 1}),
		mockTask("b", map[string]any{}))
	alloc.Job.TaskGroups[0].Tasks[0].RestartPolicy = &structs.RestartPolicy{Attempts: 1000, Interval: time.Hour, Delay: time.Millisecond, Mode: structs.RestartPolicyModeFail}
	h := newHarness(t, alloc)
	go h.ar.Run()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				st := h.ar.AllocState()
				if st.TaskStates["a"] == nil || st.TaskStates["b"] == nil {
					t.Errorf("missing task states: %+v", st.TaskStates)
					return
				}
				st.TaskStates["a"].Events = nil // copies: the caller may modify them
				_ = h.ar.Alloc().ID
			}
		}()
	}
	wg.Wait()
	if evs := h.ar.AllocState().TaskStates["a"].Events; len(evs) == 0 {
		t.Errorf("a reader's change reached the runner's state")
	}
	h.ar.Destroy()
}
