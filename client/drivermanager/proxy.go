package drivermanager

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drover-io/drover/client/state"
	"github.com/drover-io/drover/plugins/drivers"
)

// proxy is the drivers.DriverPlugin that Dispense returns: a stable value
// whose calls go to the driver's current instance. For a plugin that can
// be restarted, a call failing with drivers.ErrPluginUnavailable waits for
// the next instance and runs again there (see the package doc). It
// remembers the handles of the tasks started or recovered through it so
// that the Manager can recover them in a relaunched plugin.
type proxy struct {
	name string
	// restartable is false for in-process drivers: they are never
	// replaced, so waiting for a new instance would wait forever.
	restartable bool
	// done is closed when the Manager shuts down.
	done <-chan struct{}

	mu sync.Mutex // guards the fields below
	// cur is the current instance's driver; nil while it is restarted.
	cur drivers.DriverPlugin
	// gen counts the instances published so far.
	gen uint64
	// changed is closed (and replaced) whenever cur changes.
	changed chan struct{}
	caps    *drivers.Capabilities
	handles map[string]*drivers.TaskHandle
}

var _ drivers.DriverPlugin = (*proxy)(nil)

func newProxy(name string, restartable bool, done <-chan struct{}) *proxy {
	return &proxy{
		name:        name,
		restartable: restartable,
		done:        done,
		changed:     make(chan struct{}),
		handles:     make(map[string]*drivers.TaskHandle),
	}
}

// publish makes d the current instance.
func (p *proxy) publish(d drivers.DriverPlugin) {
	caps := d.Capabilities()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = d
	p.caps = caps
	p.gen++
	close(p.changed)
	p.changed = make(chan struct{})
}

// withdraw marks the instance gone: calls wait for the next one.
func (p *proxy) withdraw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cur = nil
	close(p.changed)
	p.changed = make(chan struct{})
}

// knownHandles returns copies of the handles of the tasks the proxy knows.
func (p *proxy) knownHandles() []*drivers.TaskHandle {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*drivers.TaskHandle, 0, len(p.handles))
	for _, h := range p.handles {
		out = append(out, state.CopyTaskHandle(h))
	}
	return out
}

func (p *proxy) remember(h *drivers.TaskHandle) {
	if h == nil || h.Config == nil || h.Config.ID == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.handles[h.Config.ID] = h // immutable: see state.LocalState.Copy
}

func (p *proxy) forget(taskID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.handles, taskID)
}

// current returns the current instance once its generation is at least
// minGen, waiting for it until ctx is done or the Manager shuts down.
func (p *proxy) current(ctx context.Context, minGen uint64) (drivers.DriverPlugin, uint64, error) {
	for {
		p.mu.Lock()
		d, gen, changed := p.cur, p.gen, p.changed
		p.mu.Unlock()
		if d != nil && gen >= minGen {
			return d, gen, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, 0, fmt.Errorf("driver %q: waiting for the plugin to restart: %w (%w)", p.name, drivers.ErrPluginUnavailable, ctx.Err())
		case <-p.done:
			return nil, 0, fmt.Errorf("driver %q: the driver manager has shut down: %w", p.name, drivers.ErrPluginUnavailable)
		}
	}
}

// do runs fn on the current instance, and again on the next one each time
// it fails because the plugin is unavailable. It returns the generation fn
// last ran on.
func (p *proxy) do(ctx context.Context, fn func(drivers.DriverPlugin) error) (uint64, error) {
	var minGen uint64
	for {
		d, gen, err := p.current(ctx, minGen)
		if err != nil {
			return 0, err
		}
		err = fn(d)
		if !p.restartable || !errors.Is(err, drivers.ErrPluginUnavailable) {
			return gen, err
		}
		minGen = gen + 1
	}
}

// Name returns the driver's name.
func (p *proxy) Name() string { return p.name }

// Capabilities returns the current instance's capabilities, as read when
// it was published (so it answers while the plugin restarts).
func (p *proxy) Capabilities() *drivers.Capabilities {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.caps == nil {
		return &drivers.Capabilities{}
	}
	c := *p.caps
	return &c
}

// Fingerprint opens the current instance's fingerprint stream.
func (p *proxy) Fingerprint(ctx context.Context) (ch <-chan *drivers.Fingerprint, err error) {
	_, err = p.do(ctx, func(d drivers.DriverPlugin) error {
		ch, err = d.Fingerprint(ctx)
		return err
	})
	return ch, err
}

// StartTask starts a task on the current instance, without retry, and
// remembers its handle.
func (p *proxy) StartTask(ctx context.Context, cfg *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	d, _, err := p.current(ctx, 0)
	if err != nil {
		return nil, err
	}
	h, err := d.StartTask(ctx, cfg)
	if err != nil {
		return nil, err
	}
	p.remember(h)
	return h, nil
}

// RecoverTask recovers a task and remembers its handle.
func (p *proxy) RecoverTask(ctx context.Context, h *drivers.TaskHandle) error {
	_, err := p.do(ctx, func(d drivers.DriverPlugin) error { return d.RecoverTask(ctx, h) })
	if err != nil {
		return err
	}
	p.remember(h)
	return nil
}

// WaitTask waits for the task's exit across plugin restarts: when the
// plugin dies during the wait, the wait resumes on the relaunched plugin
// (which has recovered the task). The returned channel's goroutine ends
// with the exit or when ctx is done. An in-process driver is never
// relaunched: its own channel is returned, and no goroutine is spent on
// each of its tasks.
func (p *proxy) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	ch, gen, err := p.openWait(ctx, taskID, 0)
	if err != nil || !p.restartable {
		return ch, err
	}
	out := make(chan *drivers.ExitResult, 1)
	go func() {
		defer close(out)
		for {
			var res *drivers.ExitResult
			select {
			case r, ok := <-ch:
				if !ok {
					return
				}
				res = r
			case <-ctx.Done():
				return
			}
			if res == nil || !p.restartable || !errors.Is(res.Err, drivers.ErrPluginUnavailable) {
				out <- res
				return
			}
			ch, gen, err = p.openWait(ctx, taskID, gen+1)
			if err != nil {
				if ctx.Err() == nil {
					out <- &drivers.ExitResult{ExitCode: -1, Err: fmt.Errorf("wait task %q after the plugin restarted: %w", taskID, err)}
				}
				return
			}
		}
	}()
	return out, nil
}

func (p *proxy) openWait(ctx context.Context, taskID string, minGen uint64) (<-chan *drivers.ExitResult, uint64, error) {
	var ch <-chan *drivers.ExitResult
	for {
		d, gen, err := p.current(ctx, minGen)
		if err != nil {
			return nil, 0, err
		}
		ch, err = d.WaitTask(ctx, taskID)
		if p.restartable && errors.Is(err, drivers.ErrPluginUnavailable) {
			minGen = gen + 1
			continue
		}
		return ch, gen, err
	}
}

// StopTask stops a task.
func (p *proxy) StopTask(ctx context.Context, taskID string, timeout time.Duration, signal string) error {
	_, err := p.do(ctx, func(d drivers.DriverPlugin) error { return d.StopTask(ctx, taskID, timeout, signal) })
	return err
}

// DestroyTask destroys a task and forgets its handle.
func (p *proxy) DestroyTask(ctx context.Context, taskID string, force bool) error {
	_, err := p.do(ctx, func(d drivers.DriverPlugin) error { return d.DestroyTask(ctx, taskID, force) })
	if err == nil || errors.Is(err, drivers.ErrTaskNotFound) {
		p.forget(taskID)
	}
	return err
}

// InspectTask returns a task's status.
func (p *proxy) InspectTask(ctx context.Context, taskID string) (st *drivers.TaskStatus, err error) {
	_, err = p.do(ctx, func(d drivers.DriverPlugin) error {
		st, err = d.InspectTask(ctx, taskID)
		return err
	})
	return st, err
}

// SignalTask signals a task.
func (p *proxy) SignalTask(ctx context.Context, taskID string, signal string) error {
	_, err := p.do(ctx, func(d drivers.DriverPlugin) error { return d.SignalTask(ctx, taskID, signal) })
	return err
}

// TaskStats opens the task's stats stream on the current instance; it
// ends when that instance goes away.
func (p *proxy) TaskStats(ctx context.Context, taskID string, interval time.Duration) (ch <-chan *drivers.TaskResourceUsage, err error) {
	_, err = p.do(ctx, func(d drivers.DriverPlugin) error {
		ch, err = d.TaskStats(ctx, taskID, interval)
		return err
	})
	return ch, err
}

// ExecTask runs a command in a task's context.
func (p *proxy) ExecTask(ctx context.Context, taskID string, cmd []string, timeout time.Duration) (res *drivers.ExecTaskResult, err error) {
	_, err = p.do(ctx, func(d drivers.DriverPlugin) error {
		res, err = d.ExecTask(ctx, taskID, cmd, timeout)
		return err
	})
	return res, err
}
