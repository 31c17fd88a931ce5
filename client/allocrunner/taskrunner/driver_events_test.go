package taskrunner

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drover-io/drover/drivers/mock"
	"github.com/drover-io/drover/plugins/drivers"
	"github.com/drover-io/drover/structs"
)

// eventRegistry is a fake DriverEvents.
type eventRegistry struct {
	mu       sync.Mutex // guards the field below
	handlers map[string]func(*drivers.TaskEvent)
}

func (r *eventRegistry) RegisterEventHandler(driver, taskID string, h func(*drivers.TaskEvent)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handlers == nil {
		r.handlers = map[string]func(*drivers.TaskEvent){}
	}
	r.handlers[driver+" "+taskID] = h
}

func (r *eventRegistry) DeregisterEventHandler(driver, taskID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.handlers, driver+" "+taskID)
}

func (r *eventRegistry) only() (string, func(*drivers.TaskEvent)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, h := range r.handlers {
		return k, h
	}
	return "", nil
}

// TestTaskRunnerDriverEvents: a started task's driver events become Driver
// task events; the handler goes away when the task ends.
func TestTaskRunnerDriverEvents(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		alloc := testAlloc(structs.JobTypeService, &structs.Task{Config: map[string]any{}})
		h := newHarness(t, alloc, nil, nil)
		reg := &eventRegistry{}
		h.tr.driverEvents = reg
		go h.tr.Run()
		settle(t, "the task running", func() bool { return h.tr.TaskState().State == structs.TaskStateRunning })

		key, handler := reg.only()
		h.tr.mu.RLock()
		invocation := h.tr.local.InvocationID
		h.tr.mu.RUnlock()
		if handler == nil || key != mock.Name+" "+alloc.ID+"/web/"+invocation {
			t.Fatalf("registered handler key = %q", key)
		}
		handler(&drivers.TaskEvent{Message: "Downloading image", Timestamp: time.Unix(100, 0)})
		ev := findEvent(h.tr.TaskState(), structs.TaskDriverMessage)
		if ev == nil || ev.DriverMessage != "Downloading image" || ev.Time != time.Unix(100, 0).UnixNano() {
			t.Fatalf("driver event = %+v", ev)
		}

		if err := h.tr.Kill(context.Background(), structs.NewTaskEvent(structs.TaskKilling)); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, "the runner to end", h.tr.WaitCh())
		if key, _ := reg.only(); key != "" {
			t.Fatalf("handler %q still registered after the task ended", key)
		}
	})
}
