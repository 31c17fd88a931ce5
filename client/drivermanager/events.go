package drivermanager

import (
	"context"
	"errors"
	"sync"

	"github.com/drover-io/drover/plugins/drivers"
)

// eventRouter holds the registered handlers by driver and task ID.
type eventRouter struct {
	mu       sync.RWMutex // guards the field below
	handlers map[string]map[string]func(*drivers.TaskEvent)
}

func newEventRouter() *eventRouter {
	return &eventRouter{handlers: make(map[string]map[string]func(*drivers.TaskEvent))}
}

func (r *eventRouter) register(driver, taskID string, h func(*drivers.TaskEvent)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	byTask := r.handlers[driver]
	if byTask == nil {
		byTask = make(map[string]func(*drivers.TaskEvent))
		r.handlers[driver] = byTask
	}
	byTask[taskID] = h
}

func (r *eventRouter) deregister(driver, taskID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.handlers[driver], taskID)
}

// route hands ev to the handler of its task, if one is registered; the
// handler runs without the lock held.
func (r *eventRouter) route(driver string, ev *drivers.TaskEvent) bool {
	if ev == nil {
		return false
	}
	r.mu.RLock()
	h := r.handlers[driver][ev.TaskID]
	r.mu.RUnlock()
	if h == nil {
		return false
	}
	h(ev)
	return true
}

// RegisterEventHandler makes h receive the task events that driver reports
// for the task with ID taskID (drivers.TaskConfig.ID), replacing an
// earlier handler for it. h is called from the Manager's goroutine for that
// driver, one event at a time, and must not block for long. (A plain func
// type, so that a task runner can declare the interface it needs without
// importing this package.)
func (m *Manager) RegisterEventHandler(driver, taskID string, h func(*drivers.TaskEvent)) {
	m.events.register(driver, taskID, h)
}

// DeregisterEventHandler removes the handler of a task's events.
func (m *Manager) DeregisterEventHandler(driver, taskID string) {
	m.events.deregister(driver, taskID)
}

// consumeEvents routes an instance's task events until ctx is done or the
// stream ends. A driver without events returns at once.
func (m *Manager) consumeEvents(ctx context.Context, name string, ep drivers.EventsPlugin) {
	ch, err := ep.TaskEvents(ctx)
	if err != nil {
		if !errors.Is(err, drivers.ErrNotSupported) && ctx.Err() == nil {
			m.logger.Warn("driver task events unavailable", "driver", name, "error", err)
		}
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			if ev == nil {
				continue
			}
			if !m.events.route(name, ev) {
				m.logger.Debug("task event for a task without a handler", "driver", name, "task_id", ev.TaskID)
			}
		}
	}
}
