package drivermanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drover-io/drover/plugins/drivers"
)

// supervise runs a driver until the Manager stops: it consumes the current
// instance's fingerprints and events and, for a plugin process, watches it
// and relaunches it with backoff when it exits. first is closed after the
// driver's first fingerprint.
func (m *Manager) supervise(md *managedDriver, first chan struct{}) {
	var once sync.Once
	firstDone := func() { once.Do(func() { close(first) }) }
	defer firstDone()
	attempt := 0
	for {
		inst := md.current()
		upSince := m.cfg.Now()
		if !m.runInstance(md, inst, firstDone) {
			return
		}
		if m.cfg.Now().Sub(upSince) >= restartResetAfter {
			attempt = 0
		}
		md.proxy.withdraw()
		for {
			attempt++
			delay := m.cfg.restartDelay(attempt)
			m.logger.Warn("driver plugin exited; restarting it", "driver", md.name, "delay", delay, "attempt", attempt)
			md.mu.Lock()
			prev := md.info
			md.mu.Unlock()
			m.report(md, unhealthyInfo(prev, fmt.Sprintf("plugin exited: restarting in %s", delay), m.cfg.Now()))
			select {
			case <-m.ctx.Done():
				return
			case <-m.cfg.After(delay):
			}
			next, err := m.relaunch(m.ctx, md, inst)
			if err == nil {
				md.setCurrent(next)
				m.logger.Info("driver plugin restarted", "driver", md.name, "pid", next.ext.ReattachConfig().Pid)
				break
			}
			if m.ctx.Err() != nil {
				return
			}
			m.logger.Error("driver plugin restart failed", "driver", md.name, "error", err, "attempt", attempt)
		}
	}
}

// runInstance consumes an instance's fingerprints and events until the
// Manager stops (false) or the instance's plugin process exits (true).
func (m *Manager) runInstance(md *managedDriver, inst *instance, firstDone func()) bool {
	ctx, cancel := context.WithCancel(m.ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	fpDone := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(fpDone)
		m.consumeFingerprints(ctx, md, inst, firstDone)
	}()
	if ep, ok := inst.driver.(drivers.EventsPlugin); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.consumeEvents(ctx, md.name, ep)
		}()
	}
	if inst.ext == nil {
		<-m.ctx.Done()
		return false
	}
	ticker := time.NewTicker(m.cfg.ExitPollInterval)
	defer ticker.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return false
		case <-ticker.C:
		case <-fpDone:
			// The stream ends when the plugin goes away: look now.
			fpDone = nil
		}
		if inst.exited() {
			return true
		}
	}
}

// relaunch starts a new process of a crashed plugin, configures it,
// persists its re-attach config and recovers the tasks the driver's proxy
// knows, before the proxy hands it any call.
func (m *Manager) relaunch(ctx context.Context, md *managedDriver, old *instance) (*instance, error) {
	old.ext.Kill() // the process is gone; this releases the connection
	inst, err := m.launch(ctx, old.path)
	if err != nil {
		return nil, err
	}
	if name := inst.ext.Info().Name; name != md.name {
		inst.ext.Kill()
		return nil, fmt.Errorf("plugin %s now calls itself %q, not %q", old.path, name, md.name)
	}
	if err := m.configure(ctx, md.name, inst); err != nil {
		inst.ext.Kill()
		return nil, err
	}
	m.persist(md.name, inst)
	for _, h := range md.proxy.knownHandles() {
		rctx, cancel := context.WithTimeout(ctx, m.cfg.LaunchTimeout)
		err := inst.driver.RecoverTask(rctx, h)
		cancel()
		switch {
		case err == nil:
			m.logger.Info("task recovered in the restarted plugin", "driver", md.name, "task_id", h.Config.ID)
		case errors.Is(err, drivers.ErrTaskNotFound):
			m.logger.Warn("task lost with the plugin", "driver", md.name, "task_id", h.Config.ID, "error", err)
			md.proxy.forget(h.Config.ID)
		default:
			m.logger.Warn("could not recover task in the restarted plugin", "driver", md.name, "task_id", h.Config.ID, "error", err)
		}
	}
	return inst, nil
}
